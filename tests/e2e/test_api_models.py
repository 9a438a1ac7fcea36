"""OpenAIChatModel against a real OpenAI-compatible HTTP server on loopback."""
import json
import os
import signal
import subprocess
import textwrap
import time

import pytest

from helpers import (DATA, KEY, api_config_file, file_with_lines, only_run, predictions, results, run_cli,
                     start_cli, statuses, wait_until, wait_until_gone)

pytestmark = pytest.mark.slow


def requested_steps(server):
    """Which step each request asked for (by the header in its NEXT STEP part)."""
    out = []
    for entry in server.log:
        users = [m['content'] for m in entry['body'].get('messages', []) if m['role'] == 'user']
        out.append(server.gold_for(users[-1]) if users else None)
    return out


def test_naive_end_to_end_usage_and_no_key_anywhere(tmp_path, server):
    work = tmp_path / 'w'
    proc = run_cli([api_config_file(tmp_path, server), '-w', work])
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    run_dir = only_run(work)
    for ds in ('val', 'val_bg'):
        assert statuses(results(run_dir, 'api', ds)) == dict.fromkeys(['1.1', '19.1', '19.2', '29.1', '29.2', '29.3'],
                                                                      'pass')
        record = predictions(run_dir, 'api', ds)[0]
        assert record['usage']['prompt_tokens'] > 0 and record['usage']['requests'] == 1
        assert record['usage']['latency_s'] >= 0
        assert record['response'].startswith('Here is the code.')
    # official client defaults: temperature 0 and the official system message
    body = server.log[0]['body']
    assert body['temperature'] == 0 and body['messages'][0] == {'role': 'system',
                                                                'content': 'You are a helpful assistant.'}
    assert len(server.log) == 12
    summary = next((run_dir / 'summary').glob('*.txt')).read_text()
    assert 'prompt tokens' in summary and 'api' in summary
    # the key reached the server, but no file of the run holds it
    assert server.log[0]['auth'] == f'Bearer {KEY}'
    for path in run_dir.rglob('*'):
        if path.is_file():
            assert KEY not in path.read_text(errors='replace'), path
    assert KEY not in proc.stdout + proc.stderr


def test_retries_on_429_500_timeouts_and_malformed_json(tmp_path, server):
    server.queue = [{'status': 429, 'retry_after': 1}, {'status': 500}, {'hang': 7},
                    {'malformed': True}]
    work = tmp_path / 'w'
    start = time.monotonic()
    proc = run_cli([api_config_file(tmp_path, server, model=dict(max_concurrency=1, retries=4), sample_ids=['1'],
                                    both=False), '-w', work])
    assert proc.returncode == 0, proc.stderr[-2000:]
    wait_until(lambda: not server.in_flight, 10, interval=0.1)   # the hung request ends late
    assert sorted(map(str, (e['status'] for e in server.log))) == ['200', '200', '429', '500', 'client gone']
    assert time.monotonic() - start > 1 + 5            # honoured Retry-After, waited out the hang
    record = predictions(only_run(work), 'api', 'val')[0]
    assert record['usage']['requests'] == 5 and record['error'] is None


def gold(steps, step_id):
    return next(s.ground_truth_code for s in steps if s.step_id == step_id)


def test_retries_are_bounded_the_run_goes_on_and_resume_retries_only_failures(tmp_path, server, steps):
    failing = gold(steps, '19.1')          # every request for step 19.1 fails
    server.rule = lambda body: ({'status': 503} if server.gold_for(
        [m['content'] for m in body['messages'] if m['role'] == 'user'][-1]) == failing else None)
    work = tmp_path / 'w'
    cfg = api_config_file(tmp_path, server, model=dict(retries=2, max_retry_wait=5), both=False)
    proc = run_cli([cfg, '-w', work])
    assert proc.returncode == 1
    run_dir = only_run(work)
    records = {r['step_id']: r for r in predictions(run_dir, 'api', 'val')}
    assert 'gave up after 3 attempts' in records['19.1']['error']
    assert records['19.2']['error'].startswith('not generated')     # its problem stops there
    assert statuses(results(run_dir, 'api', 'val')) == {'1.1': 'pass', '19.1': 'parse_error',
                                                        '19.2': 'parse_error', '29.1': 'pass', '29.2': 'pass',
                                                        '29.3': 'pass'}
    assert requested_steps(server).count(failing) == 3
    # resume: only the failed steps are asked again
    server.rule = None
    before = len(server.log)
    proc = run_cli([cfg, '-w', work, '-r'])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(server.log) - before == 2
    assert statuses(results(run_dir, 'api', 'val'))['19.2'] == 'pass'


def test_a_slow_first_answer_holds_the_other_requests_only_for_a_moment(tmp_path, server):
    """The first request goes alone until it is refused or GATE_WAIT_S has passed, not until its
    answer arrives: a model that takes long to answer does not serialise the start of a run."""
    server.queue = [{'delay': 6.0}]
    work = tmp_path / 'w'
    proc = run_cli([api_config_file(tmp_path, server, model=dict(max_concurrency=8, timeout=30), both=False),
                    '-w', work, '-m', 'infer'])
    assert proc.returncode == 0, proc.stderr[-2000:]
    arrivals = sorted(entry['time'] for entry in server.log)
    assert len(arrivals) == 6
    # the other problems' first steps start about 2 s after the first request, not 6 s
    assert 1.5 < arrivals[1] - arrivals[0] < 4.0


def test_concurrency_and_rate_limits_hold_for_the_whole_run(tmp_path, server):
    server.delay = 0.3
    work = tmp_path / 'w'
    cfg = api_config_file(tmp_path, server, model=dict(max_concurrency=2, query_per_second=4))
    proc = run_cli([cfg, '-w', work, '-m', 'infer'])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(server.log) == 12
    assert server.max_in_flight <= 2
    starts = sorted(e['time'] for e in server.log)
    # 4 per second, across both datasets: the k-th request starts no sooner than k quarter
    # seconds after the first. (Arrival gaps alone also measure the loopback transport: a
    # request that waits for a new connection arrives late, and the next gap shrinks.)
    assert all(t - starts[0] > 0.25 * k - 0.05 for k, t in enumerate(starts))
    assert starts[-1] - starts[0] < 0.25 * len(starts)          # and no slower than needed


def test_killed_run_resumes_from_the_next_step(tmp_path, server):
    server.delay = 0.5
    work = tmp_path / 'w'
    cfg = api_config_file(tmp_path, server, model=dict(max_concurrency=1), both=False)
    proc = start_cli([cfg, '-w', work, '-m', 'infer'], output=subprocess.DEVNULL)
    wait_until(lambda: file_with_lines(work, 'predictions/api/val.jsonl', 3), 60)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    preds = only_run(work) / 'predictions' / 'api' / 'val.jsonl'
    wait_until_gone(str(work))        # its inference task notices and stops too
    time.sleep(1)                     # a request it sent as it died may still be reaching the server
    saved = [json.loads(l)['step_id'] for l in preds.read_text().splitlines() if l.strip()]
    assert 3 <= len(saved) < 6
    asked_before = len(server.log)
    server.delay = 0.0
    done = run_cli([cfg, '-w', work, '-r'])
    assert done.returncode == 0, done.stderr[-2000:]
    final = {json.loads(l)['step_id'] for l in preds.read_text().splitlines() if l.strip()}
    assert final == {'1.1', '19.1', '19.2', '29.1', '29.2', '29.3'}
    # only the steps without a saved answer were asked again
    assert len(server.log) - asked_before == 6 - len(saved)
    assert statuses(results(only_run(work), 'api', 'val')) == dict.fromkeys(sorted(final), 'pass')


def test_changed_settings_are_refused_on_resume(tmp_path, server):
    work = tmp_path / 'w'
    cfg = api_config_file(tmp_path, server, both=False)
    assert run_cli([cfg, '-w', work, '-m', 'infer']).returncode == 0
    changed = api_config_file(tmp_path, server, model=dict(temperature=0.7), both=False, name='c2.py')
    before = len(server.log)
    proc = run_cli([changed, '-w', work, '-r', '-m', 'infer'])
    assert proc.returncode == 2
    assert 'other settings' in proc.stderr and 'model' in proc.stderr and '--discard-stale' in proc.stderr
    assert len(server.log) == before
    proc = run_cli([changed, '-w', work, '-r', '-m', 'infer', '--discard-stale'])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(server.log) - before == 6
    assert list((only_run(work) / 'predictions' / 'api').glob('val.stale-*.jsonl'))


def test_length_finish_and_reasoning(tmp_path, server, steps):
    gold_11 = gold(steps, '1.1')
    wrong = '```python\ndef cg(A, b, x, tol):\n    return 0\n```'

    def rule(body):
        text = [m['content'] for m in body['messages'] if m['role'] == 'user'][-1]
        code = server.gold_for(text)
        if code == gold_11:     # right answer, with misleading code in the reasoning
            return {'reasoning_content': 'Maybe ' + wrong,
                    'content': '<think>or ' + wrong + '</think>' + server.answer(body)}
        return {'finish_reason': 'length'}
    server.rule = rule
    work = tmp_path / 'w'
    proc = run_cli([api_config_file(tmp_path, server, both=False), '-w', work])
    run_dir = only_run(work)
    records = {r['step_id']: r for r in predictions(run_dir, 'api', 'val')}
    assert 'Maybe' in records['1.1']['reasoning'] and 'return 0' not in records['1.1']['code']
    assert records['19.1']['truncated'] and records['19.1']['finish_reason'] == 'length'
    res = results(run_dir, 'api', 'val')
    st = statuses(res)
    assert st['1.1'] == 'pass' and st['19.1'] == 'fail'
    step = res['problems'][1]['steps'][0]
    assert 'finish_reason=length' in step['message']
    assert proc.returncode == 0


def test_chat_mode_end_to_end(tmp_path, server):
    work = tmp_path / 'w'
    proc = run_cli([api_config_file(tmp_path, server, mode='chat', both=False), '-w', work])
    assert proc.returncode == 0, proc.stderr[-2000:]
    run_dir = only_run(work)
    assert set(statuses(results(run_dir, 'api', 'val')).values()) == {'pass'}
    records = {r['step_id']: r for r in predictions(run_dir, 'api', 'val')}
    convo = records['29.3']['transcript']
    assert [m['role'] for m in convo] == ['system', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant']
    # later turns do not repeat earlier steps: they are in the conversation
    assert 'conversation above' in convo[3]['content']


def calls_the_tool_once(code):
    """A server rule: the first answer to each step calls code_interpreter with `code`."""
    def rule(body):
        if body.get('tools') and body['messages'][-1]['role'] == 'user':
            return {'tool_calls': [{'code': code}]}
        return None
    return rule


def test_tool_use_mode_runs_the_tool_in_the_sandbox(tmp_path, server):
    server.rule = calls_the_tool_once('import os\nprint(6 * 7, os.getcwd() != "/")')
    work = tmp_path / 'w'
    proc = run_cli([api_config_file(tmp_path, server, mode='tool_use', infer_extra=', code_timeout_seconds=30',
                                    both=False, sample_ids=['1']), '-w', work])
    assert proc.returncode == 0, proc.stderr[-2000:]
    run_dir = only_run(work)
    assert statuses(results(run_dir, 'api', 'val')) == {'1.1': 'pass'}
    record = predictions(run_dir, 'api', 'val')[0]
    tool_msgs = [m for m in record['transcript'] if m['role'] == 'tool']
    output = json.loads(tool_msgs[0]['content'])
    assert output['status'] == 'success' and output['stdout'].startswith('42 True')
    assert record['tool_calls'] == 1
    assert server.log[0]['body']['tools'][0]['function']['name'] == 'code_interpreter'


def test_tool_use_runs_each_datasets_snippets_with_its_own_code_timeout(tmp_path, server):
    server.rule = calls_the_tool_once('import time\ntime.sleep(3)\nprint("woke")')
    datasets = f'''
        datasets = [dict(abbr=abbr, type=SciCodeDataset, path={str(DATA)!r}, split='validation',
                         with_bg=bg, sample_ids=['1'],
                         infer_cfg=dict(mode='tool_use', code_timeout_seconds=seconds))
                    for abbr, bg, seconds in (('quick', False, 1), ('patient', True, 30))]
    '''
    cfg = api_config_file(tmp_path, server, mode='tool_use')
    cfg.write_text(cfg.read_text().split('datasets = [')[0] + textwrap.dedent(datasets)
                   + "runner = dict(type=LocalRunner, max_num_workers=2)\n")
    work = tmp_path / 'w'
    proc = run_cli([cfg, '-w', work, '-m', 'infer'])
    assert proc.returncode == 0, proc.stderr[-2000:]
    for abbr, status in (('quick', 'timeout'), ('patient', 'success')):
        record = predictions(only_run(work), 'api', abbr)[0]
        assert record['settings']['code_timeout_seconds'] == {'quick': 1, 'patient': 30}[abbr]
        tool = json.loads(next(m for m in record['transcript'] if m['role'] == 'tool')['content'])
        assert tool['status'] == status, (abbr, tool)


def test_responses_api(tmp_path, server):
    work = tmp_path / 'w'
    proc = run_cli([api_config_file(tmp_path, server, model=dict(api='responses'), both=False, sample_ids=['1']),
                    '-w', work])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert statuses(results(only_run(work), 'api', 'val')) == {'1.1': 'pass'}
    body = server.log[0]['body']
    assert body['instructions'] == 'You are a helpful assistant.' and body['input'][0]['role'] == 'user'
    assert predictions(only_run(work), 'api', 'val')[0]['usage']['completion_tokens'] > 0
