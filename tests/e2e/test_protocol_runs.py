"""Protocols in whole runs: each protocol's knobs reach the prompt, the request, the step program
and its limits; a re-grade scores a finished run again under a 30 s limit without asking any
model; the protocol's fingerprint is in every output a run writes."""
import json
import textwrap
from pathlib import Path

import h5py
import pytest

from helpers import DATA, KEY, make_data_dir, only_run, predictions, results, run_cli, step
from openai_server import FakeOpenAI
from opencompass_scicode.protocols import PROTOCOLS
from opencompass_scicode.targets.h5format import write_step_targets

pytestmark = pytest.mark.slow

# one validation problem per protocol (each request's prompt then tells which dataset asked it);
# the chat protocols get problems of several steps, to see the conversation go on
PROBLEM = {'official': '1', 'official_inspect': '4', 'inspect_evals': '19', 'opencompass': '29',
           'nemo_skills': '6', 'scicode_verified': '7', 'agentcompass': '3'}


def _user_texts(record):
    if record.get('transcript'):
        return [m['content'] for m in record['transcript'] if m['role'] == 'user']
    return [record['prompt']]


def test_each_protocols_knobs_reach_the_prompt_the_request_the_program_and_the_limits(
        tmp_path, server, environment_2024):
    assert set(PROBLEM) == set(PROTOCOLS)
    config = tmp_path / 'cfg.py'
    config.write_text(textwrap.dedent(f'''
        models = [dict(type='OpenAIChatModel', abbr='api', path='test-model', base_url={server.base_url!r},
                       key={KEY!r}, retries=2, timeout=30)]
        datasets = [dict(abbr=name, type='SciCodeDataset', path={str(DATA)!r}, protocol=name,
                         split='validation', targets='official', sample_ids=[problem])
                    for name, problem in {PROBLEM!r}.items()]
    '''))
    proc = run_cli([config, '-w', tmp_path / 'w'])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    run_dir = only_run(tmp_path / 'w')
    templates = {bg: (DATA / name).read_text().split('{')[0]
                 for bg, name in ((False, 'background_comment_template.txt'), (True, 'multistep_template.txt'))}
    asked = {}              # a user message -> the dataset whose answers it asked for
    for name, protocol in PROTOCOLS.items():
        values = protocol['values']
        records = predictions(run_dir, 'api', name)
        res = results(run_dir, 'api', name)
        # the record says what made the numbers: this protocol, split and targets set here
        assert res['protocol']['base'] == name and res['protocol']['knobs']['timeout'] == values['timeout']
        assert res['protocol']['name'] == name + ''.join(
            f'+{k}={v}' for k, v in (('split', 'validation'), ('targets', 'official')) if values[k] not in ('*', v))
        # the prompt: its form and background
        bg = values['with_bg'] is True
        first = records[0]
        assert first['mode'] == values['mode'] and _user_texts(first)[0].startswith(templates[bg]), name
        if values['mode'] == 'chat' and len(records) > 1:
            assert [m['role'] for m in records[1]['transcript'] if m['role'] != 'system'] == [
                'user', 'assistant', 'user', 'assistant']
        for record in records:
            for text in _user_texts(record):
                asked[text] = name
        # the step program: the answer's code as the protocol's extraction takes it
        code = [s['answer']['code'] for p in res['problems'] for s in p['steps']][0]
        assert code.startswith('Here is the code.') == (values['extraction'] == 'inspect_evals'), name
        # its limits and the libraries that ran it
        assert res['evaluator']['timeout'] == values['timeout']
        assert res['evaluator']['memory_limit_mb'] == values['memory_limit_mb']
        assert list(res['scored_with']) == list(values['environments']), name
        if '2024' in values['environments']:
            assert res['scored_with']['2024']['numpy'] == '1.26.4'
    # the request: each one's temperature and token limit are its dataset's protocol's
    for entry in server.log:
        body = entry['body']
        last = [m['content'] for m in body['messages'] if m['role'] == 'user'][-1]
        name = asked[last]
        values = PROTOCOLS[name]['values']
        assert body.get('temperature') == values['temperature'], name
        assert body.get('max_tokens') == values['max_out_len'], name
        assert ('tools' in body) == (values['mode'] == 'tool_use'), name
    assert set(asked.values()) == set(PROTOCOLS)


# ------------------------------------------------------------------ re-grading without a model

SLOW = 'def slow():\n    time.sleep(40)\n    return 1'
FAST = 'def fast_double(x):\n    return 2 * x'
SLOW_PROBLEM = [{'problem_id': '990', 'problem_name': 'slow', 'required_dependencies': 'import time',
                 'sub_steps': [step('990.1', 'Wait, then one.', 'def slow():', '    return 1',
                                    ['assert slow() == target'], gold=SLOW),
                               step('990.2', 'Double it.', 'def fast_double(x):', '    return y',
                                    ['assert fast_double(2) == target'], gold=FAST)]}]


def _outputs(run_dir):
    """Every file a run writes that shows its numbers: results, summary tables, report, and
    AgentCompass's summary.md (under the work dir: results/scicode/<model>/<run>/)."""
    run_dir = Path(run_dir)
    files = [*run_dir.glob('results/*/*.json'), *run_dir.glob('summary/*.txt'), *run_dir.glob('summary/*.md'),
             *run_dir.glob('summary/*.protocols.csv'), *run_dir.glob('summary/*.html'),
             run_dir.parent / 'results' / 'scicode' / 'api' / run_dir.name / 'summary.md']
    assert len(files) == 6, files
    return files


def test_a_40s_step_passes_officially_and_times_out_regraded_at_30s_with_no_model_asked(tmp_path):
    data = make_data_dir(tmp_path / 'data', SLOW_PROBLEM)
    targets = tmp_path / 'targets.h5'
    with h5py.File(targets, 'w') as fh:
        write_step_targets(fh, '990.1', [1])
        write_step_targets(fh, '990.2', [4])
    ds = [s for p in SLOW_PROBLEM for s in p['sub_steps']]
    steps = [type('S', (), {'function_header': s['function_header'], 'ground_truth_code': s['ground_truth_code']})
             for s in ds]
    with FakeOpenAI(steps, key=KEY) as server:
        config = tmp_path / 'cfg.py'
        config.write_text(textwrap.dedent(f'''
            models = [dict(type='OpenAIChatModel', abbr='api', path='test-model', base_url={server.base_url!r},
                           key={KEY!r}, retries=2, timeout=30)]
            # forensics off: after a time-out they would add half a minute of information time
            datasets = [dict(abbr='slow', type='SciCodeDataset', path={str(data)!r}, h5py_file={str(targets)!r},
                             reader_cfg=dict(verify_sha256=False),
                             eval_cfg=dict(evaluator=dict(type='SciCodeEvaluator', forensics=False)))]
            agentcompass_outputs = True
        '''))
        proc = run_cli([config, '-w', tmp_path / 'w'])
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        (run_dir,) = [p for p in (tmp_path / 'w').iterdir() if p.name != 'results']
        official = results(run_dir, 'api', 'slow')
        verdicts = {s['step_id']: s for p in official['problems'] for s in p['steps']}
        assert verdicts['990.1']['status'] == 'pass' and verdicts['990.1']['duration_s'] >= 40
        assert official['protocol']['name'] == 'official'
        asked = len(server.log)
        assert asked == 2

        # a protocol that needs new answers is refused before any work, naming the knobs
        refused = run_cli(['regrade', run_dir, '--protocol', 'opencompass'], timeout=120)
        assert refused.returncode == 2
        message = ' '.join(refused.stderr.split())
        assert "needs new answers: split (the run's: 'validation', opencompass's: 'test'), mode" in message
        assert not (run_dir / 'regrades' / 'opencompass').exists()

        regraded = run_cli(['regrade', run_dir, '--timeout', '30'])
        assert regraded.returncode == 0, regraded.stdout[-3000:] + regraded.stderr[-3000:]
        assert len(server.log) == asked                       # no model was asked anything
    again = run_dir / 'regrades' / 'official+timeout=30'
    res = json.loads((again / 'results' / 'api' / 'slow.json').read_text())
    verdicts = {s['step_id']: s for p in res['problems'] for s in p['steps']}
    assert verdicts['990.1']['status'] == 'timeout' and verdicts['990.2']['status'] == 'pass'
    assert res['protocol']['name'] == 'official+timeout=30' and res['evaluator']['timeout'] == 30
    assert res['protocol']['fingerprint'] != official['protocol']['fingerprint']
    # the old results stay as they were, beside the new set
    assert results(run_dir, 'api', 'slow') == official
    # every output of both sets names its protocol by its fingerprint
    for where, fingerprint in ((run_dir, official['protocol']['fingerprint']),
                               (again, res['protocol']['fingerprint'])):
        for path in _outputs(where):
            assert fingerprint in path.read_text(encoding='utf-8'), path
