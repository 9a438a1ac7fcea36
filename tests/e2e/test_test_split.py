"""The test split (65 problems, 288 scored steps) and `all` (80/338), the splits users publish.

Their prefilled steps 13.6, 62.1 and 76.3 have nulls and empty lists where other steps have text
(`return_line`, `test_cases`); each reader of those fields is checked here on the real data.
Whole runs use the stand-in targets file (regenerated validation targets and placeholders for
the test steps), the only targets for the test split that can be had offline.
"""
import textwrap

import h5py
import numpy as np
import pytest

from helpers import DATA, only_run, predictions, results, run_cli, statuses
from opencompass_scicode.datasets import SciCodeDataset
from opencompass_scicode.errors import DataError

PREFILLED = ('13.6', '62.1', '76.3')


@pytest.fixture(scope='module')
def every_split(official_data):
    return {split: SciCodeDataset(path=str(official_data), split=split) for split in ('test', 'all')}


# ------------------------------------------------------------ the readers of step fields
def test_prefilled_steps_read_with_empty_values_not_nulls(every_split):
    steps = {s.step_id: s for p in every_split['all'].problems for s in p.steps}
    for sid in PREFILLED:
        assert steps[sid].prefilled and steps[sid].test_cases == () and isinstance(steps[sid].return_line, str)
    assert steps['13.6'].return_line == '' and steps['62.1'].return_line == ''
    assert steps['76.3'].return_line.strip()        # 76.3 has one; it is kept as it is
    assert all(s.ground_truth_code is None for p in every_split['test'].problems for s in p.steps)


def test_shard_costs_cover_every_problem_of_the_split(every_split):
    from opencompass_scicode.partitioners.costs import eval_costs, infer_costs
    for split, problems in (('test', 65), ('all', 80)):
        for with_bg in (False, True):
            dataset = SciCodeDataset(path=str(DATA), split=split, with_bg=with_bg)
            costs = dict(infer_costs(dataset))
            assert len(costs) == problems and all(c > 0 for c in costs.values())
        assert len(eval_costs(dataset)) == problems


def test_prompts_after_a_prefilled_step_embed_its_code(every_split):
    from opencompass_scicode.datasets.chain import code_chain
    from opencompass_scicode.prompts import build_prompt
    dataset = every_split['test']
    for pid, index, prefilled, marker in (('13', 7, '13.6', 'def __init__(self, n_grid, x_out)'),
                                          ('62', 2, '62.1', 'def __init__(self, length, basis_size, operator_dict)'),
                                          ('76', 4, '76.3', 'def generate_dna(')):
        problem = dataset.problem(pid)
        codes = {s.step_id: f'# code of {s.step_id}' for s in problem.steps}
        prior = code_chain(problem, index, codes, dataset.prefilled_file, 'official')
        prompt = build_prompt(dataset.template, problem, index, prior, with_bg=False)
        assert marker in prompt, (pid, index)
        assert f'# code of {prefilled}' not in prompt      # the given code, never a model's


def test_chat_turn_after_a_prefilled_step_shows_the_given_code(every_split):
    """In chat mode the earlier steps are in the conversation, but a prefilled step was never
    asked: its code must come with the next turn."""
    from opencompass_scicode.datasets.chain import code_chain
    from opencompass_scicode.inference.engine import _given_before
    from opencompass_scicode.inference.modes import CHAT_EARLIER_STEPS, CHAT_GIVEN_STEPS
    from opencompass_scicode.prompts import build_chat_prompt
    dataset = every_split['test']
    problem = dataset.problem('13')
    codes = {s.step_id: f'# model code {s.step_id}' for s in problem.steps}
    prior = code_chain(problem, 7, codes, dataset.prefilled_file, 'official')
    given = _given_before(problem, problem.steps[6], prior)
    assert [s.step_id for s, _ in given] == ['13.6']
    prompt = build_chat_prompt(dataset.template, problem, 7, False, CHAT_EARLIER_STEPS, given, CHAT_GIVEN_STEPS)
    assert CHAT_EARLIER_STEPS in prompt and 'def __init__(self, n_grid, x_out)' in prompt
    assert '# model code 13.5' not in prompt            # the asked steps stay in the conversation
    # a step right after an asked one gets no given code
    assert _given_before(problem, problem.steps[7], code_chain(problem, 8, codes, dataset.prefilled_file,
                                                               'official')) == []


def test_scoring_never_runs_a_prefilled_step(every_split, standin_targets):
    from opencompass_scicode.evaluation import SciCodeEvaluator
    from opencompass_scicode.targets.locate import load_targets
    dataset = SciCodeDataset(path=str(DATA), split='test', sample_ids=['13', '62', '76'],
                             h5py_file=str(standin_targets))
    every = [s for p in dataset.problems for s in p.steps]
    predictions = {s.step_id: {'step_id': s.step_id, 'code': 'x = 1', 'program': None, 'error': None}
                   for s in every}                    # even an answer for the prefilled steps
    jobs, records = SciCodeEvaluator().jobs(dataset, predictions, load_targets(dataset))
    ran = {sid for sid, _ in jobs} | {sid for sid, _ in records}
    assert ran == {s.step_id for s in every} - set(PREFILLED)
    assert all(len(job.tests) > 0 for job in jobs.values())


# ------------------------------------------------------------ the stand-in targets file
def test_standin_file_covers_every_step_with_its_tests_and_is_custom(every_split, standin_targets):
    from opencompass_scicode.targets.locate import load_targets, regenerated_path, uncovered_steps
    dataset = SciCodeDataset(path=str(DATA), split='all', h5py_file=str(standin_targets))
    assert uncovered_steps(dataset, standin_targets) == []
    targets = load_targets(dataset)
    assert targets.kind == 'custom'
    assert targets.step_ids == {s.step_id for p in dataset.problems for s in p.scored_steps}
    validation = SciCodeDataset(path=str(DATA), split='validation')
    with h5py.File(standin_targets) as standin, h5py.File(regenerated_path(validation)) as regenerated:
        for problem in every_split['test'].problems:
            for step in problem.scored_steps:
                assert sorted(standin[step.step_id]) == [f'test{k}' for k in range(1, len(step.test_cases) + 1)]
                assert np.isnan(standin[f'{step.step_id}/test1/var1'][()])
        for path in ('10.1/test1', '1.1/test2'):
            for var in regenerated[path]:
                assert np.array_equal(standin[f'{path}/{var}'][()], regenerated[f'{path}/{var}'][()])


def test_standin_refuses_without_regenerated_targets(tmp_path, official_data):
    import shutil
    from opencompass_scicode.targets.standin import write_standin
    bare = tmp_path / 'data'
    shutil.copytree(official_data, bare, ignore=shutil.ignore_patterns('regenerated', 'cache', '*.h5'))
    with pytest.raises(DataError, match='regenerated validation targets .* not complete'):
        write_standin(tmp_path / 'out.h5', bare)
    assert not (tmp_path / 'out.h5').exists()


# ------------------------------------------------------------ coverage, before any request
def test_coverage_check_names_missing_steps_and_missing_tests(tmp_path, standin_targets):
    from opencompass_scicode.targets.locate import check_coverage, regenerated_path
    test = SciCodeDataset(path=str(DATA), split='test', h5py_file=str(standin_targets))
    check_coverage(test)                                   # accepted: the file covers the split
    only_validation = str(regenerated_path(SciCodeDataset(path=str(DATA), split='validation')))
    with pytest.raises(DataError) as info:
        check_coverage(SciCodeDataset(path=str(DATA), split='test', h5py_file=only_validation))
    message = str(info.value)
    assert 'do not cover 288 of its 288 scored steps' in message and '(no entry)' in message
    assert 'and 283 more' in message and 'fix:' in message
    # a file that lacks one test of one step
    short = tmp_path / 'short.h5'
    import shutil
    shutil.copyfile(standin_targets, short)
    with h5py.File(short, 'a') as fh:
        del fh['13.7/test3']
    with pytest.raises(DataError, match=r'1 of its 288 scored steps: 13\.7 \(2 of its 3 tests\)'):
        check_coverage(SciCodeDataset(path=str(DATA), split='test', h5py_file=str(short)))
    not_h5 = tmp_path / 'not.h5'
    not_h5.write_text('this is no HDF5 file')
    with pytest.raises(DataError, match='cannot be read as HDF5'):
        check_coverage(SciCodeDataset(path=str(DATA), split='test', h5py_file=str(not_h5)))


# ------------------------------------------------------------ whole runs
def split_config(tmp_path, models, split, h5, extra='', sample_ids=None, mode='naive', name='cfg.py'):
    text = textwrap.dedent(f'''
        from opencompass_scicode.datasets import SciCodeDataset
        from opencompass_scicode.evaluation import SciCodeEvaluator
        from opencompass_scicode.models import DummyModel, OpenAIChatModel
        from opencompass_scicode.partitioners import NumWorkerPartitioner
        models = {models}
        datasets = [dict(abbr={split!r} + sfx, type=SciCodeDataset, path={str(DATA)!r}, split={split!r},
                         with_bg=bg, h5py_file={str(h5)!r}, sample_ids={sample_ids!r},
                         infer_cfg=dict(mode={mode!r}),
                         eval_cfg=dict(evaluator=dict(type=SciCodeEvaluator, timeout=300)))
                    for bg, sfx in ((False, ''), (True, '_bg'))]
    ''') + textwrap.dedent(extra)
    path = tmp_path / name
    path.write_text(text)
    return path


def api_model(server):
    return (f"dict(type=OpenAIChatModel, abbr='api', path='test-model', base_url={server.base_url!r}, "
            f"key='sk-test', retries=1, timeout=30)")


@pytest.fixture
def quick_gold_server(official_data):
    """The loopback OpenAI server, answering the gold code of problems 1, 19 and 29 (6 quick
    steps) and `pass` to every other step."""
    from openai_server import FakeOpenAI
    quick = SciCodeDataset(path=str(official_data), split='validation', sample_ids=['1', '19', '29'])
    with FakeOpenAI([s for p in quick.problems for s in p.steps]) as server:
        yield server


def asked_next_steps(server):
    """The NEXT STEP part of each request's prompt: the step it asks for."""
    return [entry['body']['messages'][-1]['content'].split('NEXT STEP', 1)[-1] for entry in server.log]


@pytest.mark.slow
def test_split_all_both_settings_dummy_and_api_model(tmp_path, standin_targets, quick_gold_server):
    server = quick_gold_server
    cfg = split_config(tmp_path, f"[dict(type=DummyModel, abbr='dummy'), {api_model(server)}]", 'all',
                       standin_targets)
    work = tmp_path / 'w'
    proc = run_cli([cfg, '-w', work])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    run_dir = only_run(work)
    all_steps = {s.step_id: s for p in SciCodeDataset(path=str(DATA), split='all').problems for s in p.steps}
    for model in ('dummy', 'api'):
        for abbr in ('all', 'all_bg'):
            res = results(run_dir, model, abbr)
            assert res['targets'] == 'custom'
            assert (res['main_problem_total'], res['subproblem_total']) == (80, 338)
            verdicts = statuses(res)
            assert set(verdicts) == set(all_steps)           # 338 scored + 3 prefilled, each once
            assert {sid for sid, v in verdicts.items() if v == 'skipped'} == set(PREFILLED)
            for record in (x for p in res['problems'] for x in p['steps'] if x['step_id'] in PREFILLED):
                assert record['tests'] == [] and record['answer'] == {} and record['category'] == 'skipped'
            assert res['subproblem_not_scored'] == 0 and 'eval_error' not in verdicts.values()
            # every later step of 13, 62 and 76 was answered and run, none is "no prediction"
            for pid, after in (('13', 7), ('62', 2), ('76', 4)):
                for s in (s for s in all_steps.values() if s.step_id.split('.')[0] == pid
                          and int(s.step_id.split('.')[1]) >= after):
                    step = next(x for p in res['problems'] for x in p['steps'] if x['step_id'] == s.step_id)
                    assert step['category'] not in ('no_code',), step
                    assert step['answer'].get('response'), step
        # the API model passes exactly the six steps it got the gold code for, in both settings
        passed = {sid for sid, v in statuses(results(run_dir, model, 'all')).items() if v == 'pass'}
        assert passed == (set() if model == 'dummy' else {'1.1', '19.1', '19.2', '29.1', '29.2', '29.3'})
    assert len(server.log) == 676
    asked = asked_next_steps(server)
    for sid in ('13.7', '62.2', '76.4'):             # once per setting
        assert sum(all_steps[sid].description in text for text in asked) == 2, sid
    for sid in PREFILLED:                            # never
        assert not any(all_steps[sid].description in text for text in asked), sid
    table = (run_dir / 'summary' / f'summary_{run_dir.name}.txt').read_text()
    assert '0.0 (0/80)' in table and '1.8 (6/338)' in table and 'not scored' not in table

    # -r: everything is complete; nothing is asked again and the verdicts stay
    before = len(server.log)
    proc = run_cli([cfg, '-w', work, '-r'])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(server.log) == before
    assert statuses(results(run_dir, 'api', 'all_bg')) == verdicts


@pytest.mark.slow
def test_split_test_dry_run_shards_and_resume(tmp_path, standin_targets):
    shards = '''
        infer = dict(partitioner=dict(type=NumWorkerPartitioner, num_worker=3))
        eval = dict(partitioner=dict(type=NumWorkerPartitioner, num_worker=2))
    '''
    cfg = split_config(tmp_path, "[dict(type=DummyModel, abbr='dummy')]", 'test', standin_targets, extra=shards)
    work = tmp_path / 'w'
    proc = run_cli([cfg, '-w', work, '--dry-run'])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not work.exists()                                      # a dry run writes nothing
    planned = [line.split()[0] for line in proc.stdout.splitlines() if line.startswith(('infer/', 'eval/'))]
    assert sum(t.startswith('infer/dummy') for t in planned) >= 3 and 'eval/dummy/test' in ' '.join(planned)
    assert proc.stdout.count('288') >= 1

    proc = run_cli([cfg, '-w', work])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    run_dir = only_run(work)
    for abbr in ('test', 'test_bg'):
        res = results(run_dir, 'dummy', abbr)
        assert (res['main_problem_total'], res['subproblem_total']) == (65, 288)
        assert (res['main_problem_resolved'], res['subproblem_correct']) == (0, 0)
        verdicts = statuses(res)
        assert len(verdicts) == 291 and {v for v in verdicts.values()} == {'fail', 'skipped'}
        assert len(predictions(run_dir, 'dummy', abbr)) == 288        # shards merged, each step once
    assert not list((run_dir / 'results').rglob('*part*'))
    # -r after losing one results file: only it is scored again, to the same verdicts
    (run_dir / 'results' / 'dummy' / 'test_bg.json').unlink()
    proc = run_cli([cfg, '-w', work, '-r'])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert statuses(results(run_dir, 'dummy', 'test_bg')) == verdicts


@pytest.mark.slow
def test_targets_that_miss_the_split_stop_before_any_request(tmp_path, quick_gold_server):
    from opencompass_scicode.targets.locate import regenerated_path
    only_validation = regenerated_path(SciCodeDataset(path=str(DATA), split='validation'))
    if not only_validation.is_file():
        from opencompass_scicode.evaluation.regenerate import ensure_targets
        ensure_targets(SciCodeDataset(path=str(DATA), split='validation'))
    cfg = split_config(tmp_path, f'[{api_model(quick_gold_server)}]', 'test', only_validation)
    work = tmp_path / 'w'
    proc = run_cli([cfg, '-w', work])
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert 'do not cover 288 of its 288 scored steps' in ' '.join(proc.stderr.split())
    assert quick_gold_server.log == [] and not work.exists()


@pytest.mark.slow
def test_steps_that_could_not_be_scored_fail_the_run_and_say_so(tmp_path, standin_targets):
    """A targets file whose entry for a step is there but cannot be read (here: a dangling link,
    as a truncated download leaves): the step is `eval_error`, the run exits 1, and the table
    says how many steps were not scored beside the rate."""
    import shutil
    broken = tmp_path / 'broken.h5'
    shutil.copyfile(standin_targets, broken)
    with h5py.File(broken, 'a') as fh:
        for k in (1, 2, 3):
            del fh[f'13.1/test{k}/var1']
            fh[f'13.1/test{k}/var1'] = h5py.SoftLink('/nowhere')
    cfg = split_config(tmp_path, "[dict(type=DummyModel, abbr='dummy')]", 'test', broken, sample_ids=['13'])
    work = tmp_path / 'w'
    proc = run_cli([cfg, '-w', work])
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    run_dir = only_run(work)
    res = results(run_dir, 'dummy', 'test')
    assert statuses(res)['13.1'] == 'eval_error' and res['subproblem_not_scored'] == 1
    assert res['subproblem_total'] == 14                       # still counted, as failed
    table = (run_dir / 'summary' / f'summary_{run_dir.name}.txt').read_text()
    assert '0.0 (0/14) [0-0]; 1 step not scored' in table and 'not scored": the harness' in table
    assert 'could not be scored' in proc.stderr
    report = next((run_dir / 'summary').glob('report_*.html')).read_text()
    assert '1 step not scored' in report


@pytest.mark.slow
def test_chat_and_tool_use_on_the_problems_with_prefilled_steps(tmp_path, standin_targets, quick_gold_server):
    server = quick_gold_server

    def first_answer_calls_the_tool(body):
        if body.get('tools') and body['messages'][-1]['role'] == 'user':
            return {'tool_calls': [{'code': 'print(6 * 7)'}]}
        return None

    server.rule = first_answer_calls_the_tool
    ids = ['13', '62', '76']
    scored = {s.step_id for p in SciCodeDataset(path=str(DATA), split='test', sample_ids=ids).problems
              for s in p.scored_steps}
    for mode in ('chat', 'tool_use'):
        work = tmp_path / mode
        cfg = split_config(tmp_path, f'[{api_model(server)}]', 'test', standin_targets, sample_ids=ids,
                           mode=mode, name=f'{mode}.py')
        proc = run_cli([cfg, '-w', work])
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        run_dir = only_run(work)
        for abbr in ('test', 'test_bg'):
            res = results(run_dir, 'api', abbr)
            verdicts = statuses(res)
            assert {s for s, v in verdicts.items() if v != 'skipped'} == scored
            assert {s for s, v in verdicts.items() if v == 'skipped'} == set(PREFILLED)
            records = {r['step_id']: r for r in predictions(run_dir, 'api', abbr)}
            assert set(records) == scored and not any(r['error'] for r in records.values())
            for sid, given in (('13.7', 'def __init__(self, n_grid, x_out)'), ('62.2', 'def __init__(self, length'),
                               ('76.4', 'def generate_dna(')):
                users = [m['content'] for m in records[sid]['transcript'] if m['role'] == 'user']
                assert given in users[-1 if mode == 'chat' else 0], (mode, sid)
            if mode == 'tool_use':
                assert all(r['tool_calls'] >= 1 for r in records.values())
