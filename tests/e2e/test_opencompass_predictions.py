"""Re-scoring an OpenCompass predictions file (ChatInferencer(infer_mode='every')) here."""
import hashlib
import json
import textwrap

import pytest

from helpers import DATA, only_run, predictions, results, run_cli
from opencompass_scicode.datasets import SciCodeDataset
from opencompass_scicode.errors import ConfigError
from opencompass_scicode.models import OpenCompassPredictions


def opencompass_file(path, answers_by_problem, order):
    """Write `answers_by_problem` ({problem_id: [responses]}) as OpenCompass does, indexed by the
    position of each problem in `order`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({str(i): {'origin_prompt': ['...'] * len(answers_by_problem[pid]),
                                         'prediction': answers_by_problem[pid],
                                         'gold': [''] * len(answers_by_problem[pid])}
                                for i, pid in enumerate(order)}))
    return path


@pytest.fixture(scope='module')
def test_split(official_data):
    return SciCodeDataset(path=str(official_data), split='test')


def numbered_answers(split):
    return {p.problem_id: [f'answer for {s.step_id}' for s in p.scored_steps] for p in split.problems}


def test_each_response_is_its_own_steps_past_the_prefilled_ones(tmp_path, test_split):
    order = [p.problem_id for p in test_split.problems]
    path = opencompass_file(tmp_path / 'predictions' / 'my-model' / 'SciCode.json', numbered_answers(test_split), order)
    model = OpenCompassPredictions(path=str(path))
    assert model.abbr == 'my-model'
    model.check_dataset(test_split)
    from opencompass_scicode.models import GenerationRequest
    for pid, sid in (('13', '13.5'), ('13', '13.7'), ('62', '62.2'), ('76', '76.2'), ('76', '76.4'), ('2', '2.1')):
        problem = test_split.problem(pid)
        step = next(s for s in problem.steps if s.step_id == sid)
        gen = model.generate(GenerationRequest(problem, step, '', False))
        assert gen.text == f'answer for {sid}'


def test_the_data_packs_order_is_followed(tmp_path, test_split):
    order = [p.problem_id for p in test_split.problems][::-1]
    pack = tmp_path / 'SciCode_datasets.json'
    pack.write_text(json.dumps([{'id': pid, 'import': '', 'test': [], 'prompt': []} for pid in order]))
    path = opencompass_file(tmp_path / 'p.json', numbered_answers(test_split), order)
    model = OpenCompassPredictions(path=str(path), data_pack=str(pack))
    model.check_dataset(test_split)
    assert model._answers[False]['13'][5] == 'answer for 13.7'
    # without the pack the official order is assumed: the step counts do not fit, named at once
    with pytest.raises(ConfigError, match=r'entry "0" \(problem 77\) has \d+ responses; problem 77 has'):
        OpenCompassPredictions(path=str(path)).check_dataset(test_split)


def test_files_that_do_not_match_the_split_are_refused(tmp_path, test_split, official_data):
    answers = numbered_answers(test_split)
    order = [p.problem_id for p in test_split.problems]
    short = opencompass_file(tmp_path / 'short.json', answers, order[:64])
    with pytest.raises(ConfigError, match="holds 64 problems; OpenCompass's SciCode test split has 65"):
        OpenCompassPredictions(path=str(short)).check_dataset(test_split)
    answers['13'] = answers['13'][:-1]
    wrong = opencompass_file(tmp_path / 'wrong.json', answers, order)
    with pytest.raises(ConfigError, match=r'problem 13\) has 13 responses; problem 13 has 14 generated steps'):
        OpenCompassPredictions(path=str(wrong)).check_dataset(test_split)
    with pytest.raises(ConfigError, match='cover the test split'):
        OpenCompassPredictions(path=str(wrong)).check_dataset(
            SciCodeDataset(path=str(official_data), split='validation'))
    # through run.py: exit 2 before anything is planned or run
    cfg = tmp_path / 'cfg.py'
    cfg.write_text(textwrap.dedent(f'''
        from opencompass_scicode.datasets import SciCodeDataset
        from opencompass_scicode.models import OpenCompassPredictions
        models = [dict(type=OpenCompassPredictions, path={str(wrong)!r})]
        datasets = [dict(type=SciCodeDataset, path={str(DATA)!r}, split='test',
                         h5py_file={str(tmp_path / 'no.h5')!r})]
    '''))
    (tmp_path / 'no.h5').write_text('')
    proc = run_cli([cfg, '-w', tmp_path / 'w', '-m', 'infer', '--dry-run'])
    assert proc.returncode == 2 and 'problem 13) has 13 responses' in ' '.join(proc.stderr.split())


def varied_answer(prompt):
    """Answers that fail in different ways, chosen by the prompt: a step scored with another
    step's answer would (almost always) fall in another category."""
    shapes = ['```python\ndef broken(:\n    pass\n```', '',
              '```python\nraise ZeroDivisionError("by design")\n```',
              '```python\nvalue = name_nobody_defined\n```',
              '```python\n__import__("module_that_is_not_there")\n```',
              'Here:\n```python\ndef unrelated():\n    return 1\n```']
    return shapes[int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % len(shapes)]


@pytest.mark.slow
def test_rescored_file_gives_the_verdicts_its_answers_get_here(tmp_path, standin_targets):
    from openai_server import FakeOpenAI
    datasets = f'''
        datasets = [dict(abbr='t' + sfx, type=SciCodeDataset, path={str(DATA)!r}, split='test', with_bg=bg,
                         h5py_file={str(standin_targets)!r},
                         eval_cfg=dict(evaluator=dict(type=SciCodeEvaluator, timeout=300)))
                    for bg, sfx in ((False, ''), (True, '_bg'))]
    '''
    head = textwrap.dedent('''
        from opencompass_scicode.datasets import SciCodeDataset
        from opencompass_scicode.evaluation import SciCodeEvaluator
        from opencompass_scicode.models import OpenAIChatModel, OpenCompassPredictions
    ''') + textwrap.dedent(datasets)
    with FakeOpenAI([]) as server:
        server.rule = lambda body: {'content': varied_answer(body['messages'][-1]['content'])}
        asked = tmp_path / 'asked.py'
        asked.write_text(head + f"models = [dict(type=OpenAIChatModel, abbr='api', path='m', "
                                f"base_url={server.base_url!r}, key='sk-test', retries=1, timeout=30)]\n")
        proc = run_cli([asked, '-w', tmp_path / 'w1'])
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    first = only_run(tmp_path / 'w1')
    folder = tmp_path / 'oc' / 'predictions' / 'api'
    order = [p.problem_id for p in SciCodeDataset(path=str(DATA), split='test').problems]
    for abbr, name in (('t', 'SciCode.json'), ('t_bg', 'SciCode_with_background.json')):
        by_step = {r['step_id']: r['response'] for r in predictions(first, 'api', abbr)}
        answers = {p.problem_id: [by_step[s.step_id] for s in p.scored_steps]
                   for p in SciCodeDataset(path=str(DATA), split='test').problems}
        opencompass_file(folder / name, answers, order)
    rescore = tmp_path / 'rescore.py'
    rescore.write_text(head + f"models = [dict(type=OpenCompassPredictions, path={str(folder)!r})]\n")
    proc = run_cli([rescore, '-w', tmp_path / 'w2'])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert 're-scoring OpenCompass predictions with the official SciCode semantics' in ' '.join(proc.stderr.split())
    second = only_run(tmp_path / 'w2')
    for abbr in ('t', 't_bg'):
        def verdicts(run_dir, model):
            res = results(run_dir, model, abbr)
            return {s['step_id']: (s['status'], s.get('category')) for p in res['problems'] for s in p['steps']}
        theirs, ours = verdicts(second, 'api'), verdicts(first, 'api')
        assert theirs == ours
        assert len({c for _, c in ours.values()}) >= 5          # the answers do fail in different ways
        assert results(second, 'api', abbr)['subproblem_total'] == 288
