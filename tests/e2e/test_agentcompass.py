"""AgentCompass's command line end to end against the loopback OpenAI-compatible server: its
files beside ours, field by field; refusals before any request; the key in no file."""
import json
from pathlib import Path

import pytest

from helpers import KEY, results, run_cli, statuses
from openai_server import refusal

pytestmark = pytest.mark.slow


def ac_run(server, work, bench, harness, *extra, protocol='openai-chat'):
    return run_cli(['run', 'scicode', 'scicode_tool_use', 'test-model', '--env', 'host_process',
                    '--benchmark-params', json.dumps(bench), '--harness-params', json.dumps(harness),
                    '--model-base-url', server.base_url, '--model-api-key', KEY,
                    '--model-api-protocol', protocol, '--model-params', '{"temperature": 0}',
                    '--task-concurrency', '1', '-w', work, *extra])


def run_dirs(work):
    (ours,) = [p for p in Path(work).iterdir() if p.name != 'results']
    (theirs,) = (Path(work) / 'results' / 'scicode' / 'test-model').iterdir()
    return ours, theirs


def test_naive_smoke_writes_agentcompass_files_beside_ours_and_no_key(tmp_path, server):
    work = tmp_path / 'w'
    proc = ac_run(server, work, {'split': 'validation', 'sample_ids': ['19']}, {'mode': 'naive'})
    assert proc.returncode == 0, proc.stderr[-2000:]
    ours, theirs = run_dirs(work)
    assert theirs.name == ours.name                     # <run> is the run's timestamp
    assert statuses(results(ours, 'test-model', 'scicode_validation')) == {'19.1': 'pass', '19.2': 'pass'}
    task = json.loads((theirs / 'details' / '19.json').read_text())
    assert task['task_id'] == '19' and task['category'] == 'unclassified'
    (attempt,) = task['attempts']
    assert set(attempt) == {'final_answer', 'artifacts', 'trajectory', 'correct', 'score', 'meta'}
    assert set(attempt['final_answer']['step_codes']) == {'19.1', '19.2'}
    assert attempt['artifacts']['step_codes'] == attempt['final_answer']['step_codes']
    assert 'def ' in attempt['final_answer']['step_codes']['19.2']
    assert attempt['correct'] is True and attempt['score'] == 1.0
    first = attempt['trajectory'][0]
    assert first['step_id'] == '19.1' and [m['role'] for m in first['messages']] == ['user', 'assistant']
    assert first['messages'][1]['content'].startswith('Here is the code.')
    ev = attempt['meta']['evaluation']
    assert {k: ev[k] for k in ('problem_id', 'problem_correct', 'total_correct', 'total_steps',
                               'subproblem_correctness', 'error')} == {
        'problem_id': '19', 'problem_correct': 1, 'total_correct': 2, 'total_steps': 2,
        'subproblem_correctness': 1.0, 'error': None}
    assert [(s['step_id'], s['status'], s['correct']) for s in ev['steps']] == [('19.1', 'pass', True),
                                                                              ('19.2', 'pass', True)]
    assert all(s['tests_total'] >= 1 and s['returncode'] == 0 and 'stdout' in s and 'stderr' in s
               for s in ev['steps'])
    summary = (theirs / 'summary.md').read_text()
    for line in ('- main_problem_resolve_rate: 1.0', '- subproblem: 1.0', '- Total: 1', '- Evaluated: 1',
                 '- Error: 0', '- main_problem_resolved: 1', '- main_problem_total: 1',
                 '- subproblem_correct: 2', '- subproblem_total: 2', '| unclassified | 1.0 | 1.0 | 1 | 1 | 0 |'):
        assert line in summary
    assert "note: AgentCompass's defaults apply" not in proc.stderr
    assert "ENV:" in (ours / 'configs' / f'{ours.name}.py').read_text() or '<redacted>' in \
        (ours / 'configs' / f'{ours.name}.py').read_text()
    leaks = [str(p) for p in Path(work).rglob('*') if p.is_file() and KEY.encode() in p.read_bytes()]
    assert leaks == []


def test_tool_use_runs_code_interpreter_and_keeps_the_exchange(tmp_path, server):
    def rule(body):
        if body.get('tools') and body['messages'][-1]['role'] == 'user':
            return {'tool_calls': [{'code': 'print(6 * 7)'}]}
        return None
    server.rule = rule
    work = tmp_path / 'w'
    proc = ac_run(server, work, {'split': 'validation', 'sample_ids': ['1']},
                  {'tool_use_max_loops': 2, 'code_timeout_seconds': 30})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "AgentCompass's defaults apply: split='all'" not in proc.stderr   # split was given
    assert "mode='tool_use' (ours: 'naive')" in proc.stderr
    _, theirs = run_dirs(work)
    (attempt,) = json.loads((theirs / 'details' / '1.json').read_text())['attempts']
    messages = attempt['trajectory'][0]['messages']
    tool = json.loads(next(m for m in messages if m['role'] == 'tool')['content'])
    assert tool['status'] == 'success' and tool['stdout'].startswith('42')
    assert attempt['correct'] is True and attempt['meta']['evaluation']['steps'][0]['status'] == 'pass'


def test_openai_responses_protocol_asks_the_responses_endpoint(tmp_path, server):
    paths = []
    server.rule = lambda body: paths.append('input' in body) or None
    work = tmp_path / 'w'
    proc = ac_run(server, work, {'split': 'validation', 'sample_ids': ['1']}, {'mode': 'naive'},
                  protocol='openai-responses')
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert paths and all(paths)                         # every request in the Responses shape
    _, theirs = run_dirs(work)
    assert json.loads((theirs / 'details' / '1.json').read_text())['attempts'][0]['correct'] is True


@pytest.mark.parametrize('bench, harness, extra, words', [
    ({'split': 'dev'}, {}, (), '--benchmark-params.split'),
    ({'sample_idz': ['1']}, {}, (), '--benchmark-params.sample_idz'),
    ({'split': 'validation', 'category': 'physics'}, {'mode': 'naive'}, (), '--benchmark-params.category'),
    ({'split': 'validation', 'sample_ids': ['999']}, {'mode': 'naive'}, (), '--benchmark-params.sample_ids'),
    ({}, {}, ('--env', 'docker'), '--env'),
])
def test_refusals_exit_2_before_any_request(tmp_path, server, bench, harness, extra, words):
    proc = ac_run(server, tmp_path / 'w', bench, harness, *extra)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert words in proc.stderr and 'Traceback' not in proc.stderr
    assert 'datasets[0]' not in proc.stderr                   # the flags' words, not the config's
    assert server.log == []


def test_custom_parameters_from_a_config_file_with_background(tmp_path, server):
    """The page's custom-parameters and --config examples in one: keys in a YAML file, the
    command line's over them."""
    conf = tmp_path / 'ac.yaml'
    conf.write_text('env: host_process\nbenchmark_params: {split: test, sample_ids: ["1"], category: unclassified}\n'
                    'harness_params: {mode: naive, with_background: true, code_timeout_seconds: 60}\n'
                    'model_params: {temperature: 0, max_tokens: 2048, seed: 7}\ntask_concurrency: 2\n')
    work = tmp_path / 'w'
    proc = run_cli(['run', 'scicode', 'scicode_tool_use', 'test-model', '--config', conf,
                    '--benchmark-params', '{"split": "validation"}', '--model-base-url', server.base_url,
                    '--model-api-key', KEY, '-w', work])
    assert proc.returncode == 0, proc.stderr[-2000:]
    body = server.log[0]['body']
    assert body['max_tokens'] == 2048 and body['seed'] == 7 and body['temperature'] == 0
    assert 'along with background knowledge' in body['messages'][-1]['content']
    ours, theirs = run_dirs(work)
    assert statuses(results(ours, 'test-model', 'scicode_validation_with_background')) == {'1.1': 'pass'}
    assert json.loads((theirs / 'details' / '1.json').read_text())['attempts'][0]['correct'] is True


PROSE = 'I would first take the inner product of the two vectors, then divide by the norms.'


def test_files_match_a_recount_by_agentcompass_definitions_with_an_error_a_prose_answer_and_an_empty_block(
        tmp_path, server):
    """Split 'all' (AgentCompass's default) with validation problems alone: no test targets asked for.
    1.1 is refused (its problem is in Error), 19.2 answers an empty block and 29.2 prose (each a
    parse_error with null code; 29.3 is asked without the prose), 3.1 is right."""
    def rule(body):
        asked = [m['content'] for m in body['messages'] if m['role'] == 'user'][-1].split('NEXT STEP')[-1]
        for header, behaviour in (('def cg(', refusal('context')), ('def n_tangle(', {'content': '```python\n```'}),
                                  ('def inner_product(', {'content': PROSE})):
            if header in asked:
                return behaviour
        return None
    server.rule = rule
    work = tmp_path / 'w'
    proc = ac_run(server, work, {'split': 'all', 'sample_ids': ['1', '3', '19', '29']}, {'mode': 'naive'})
    assert proc.returncode == 1, proc.stderr[-2000:]          # a step without an answer: not 0
    assert "step 1.1: test-model: the prompt does not fit the model's context" in ' '.join(proc.stderr.split())
    ours, theirs = run_dirs(work)
    assert results(ours, 'test-model', 'scicode_all')['targets'] == 'regenerated'
    later = next(e for e in server.log if 'def orthogonalize(' in e['body']['messages'][-1]['content'])
    assert PROSE not in later['body']['messages'][-1]['content']        # the prose reached no later prompt
    tasks = {p.stem: json.loads(p.read_text()) for p in (theirs / 'details').glob('*.json')}
    assert sorted(tasks) == ['1', '19', '29', '3']
    evaluations = []
    for task in tasks.values():
        (attempt,) = task['attempts']
        ev = attempt['meta']['evaluation']
        scored = [s for s in ev['steps'] if s['status'] != 'skipped']
        # AgentCompass's per-problem definitions, recounted from the steps
        assert ev['total_steps'] == len(scored) and ev['total_correct'] == sum(s['status'] == 'pass' for s in scored)
        assert ev['problem_correct'] == int(all(s['status'] == 'pass' for s in scored))
        assert attempt['score'] == ev['subproblem_correctness'] == round(ev['total_correct'] / ev['total_steps'], 6)
        assert attempt['correct'] == (ev['problem_correct'] == 1 and ev['error'] is None)
        for s in scored:          # parse_error: no code parsed, null in the artifacts, absent from the answer
            code = attempt['artifacts']['step_codes'][s['step_id']]
            assert (code is None) == (s['status'] == 'parse_error'), s
            assert (s['step_id'] in attempt['final_answer']['step_codes']) == (code is not None)
        evaluations.append(ev)
    steps = {s['step_id']: s for ev in evaluations for s in ev['steps']}
    assert steps['19.2']['status'] == steps['29.2']['status'] == steps['1.1']['status'] == 'parse_error'
    assert 'maximum context length' in tasks['1']['attempts'][0]['meta']['evaluation']['error']
    assert [t for t, task in tasks.items() if task['attempts'][0]['meta']['evaluation']['error']] == ['1']
    # summary.md by AgentCompass's definitions: the rates over the evaluated problems
    evaluated = [ev for ev in evaluations if ev['error'] is None]
    resolved = sum(ev['problem_correct'] for ev in evaluated)
    correct, total = sum(ev['total_correct'] for ev in evaluated), sum(ev['total_steps'] for ev in evaluated)
    expected = {'Total': 4, 'Evaluated': 3, 'Error': 1, 'main_problem_resolved': resolved,
                'main_problem_total': 3, 'main_problem_resolve_rate': round(resolved / 3, 4),
                'subproblem_correct': correct, 'subproblem_total': total, 'subproblem': round(correct / total, 4)}
    assert resolved == 1 and total == 6                 # 3 resolved; 19 and 29 not; 1 in error
    summary = (theirs / 'summary.md').read_text()
    for name, value in expected.items():
        assert f'- {name}: {value}\n' in summary, (name, value, summary)
