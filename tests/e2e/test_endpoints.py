"""Endpoints against the loopback OpenAI-compatible server: a wrong URL, key or model stops the run
with exit 2 within seconds, before targets are fetched or regenerated, with the server's words on
screen (the probe); --no-probe leaves it to the first request; one refused request fails its step
alone, and the terminal says why in a line or two."""
import shutil
import socket
import textwrap
import time

import pytest

from file_server import FileServer
from helpers import (DATA, KEY, api_config_file, make_data_dir, only_run, predictions, results, run_cli, statuses,
                     step, tiny_dataset)
from openai_server import FakeOpenAI, refusal
from opencompass_scicode.datasets.files import OFFICIAL_FILES

pytestmark = pytest.mark.slow


def closed_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def untouched_config(tmp_path, base_url, url):
    """A config whose run would first fetch test targets from `url` (dataset 'fetched') and
    regenerate validation targets (dataset 'regenerated'), both in a data dir of its own; the
    data dir."""
    data_dir = tmp_path / 'data'
    data_dir.mkdir()
    for name in OFFICIAL_FILES:
        shutil.copyfile(DATA / name, data_dir / name)
    path = tmp_path / 'cfg.py'
    path.write_text(textwrap.dedent(f'''
        from opencompass_scicode.datasets import SciCodeDataset
        from opencompass_scicode.models import OpenAIChatModel
        models = [dict(type=OpenAIChatModel, abbr='api', path='test-model', base_url={base_url!r},
                       key={KEY!r}, retries=2, timeout=5)]
        datasets = [dict(abbr='fetched', type=SciCodeDataset, path={str(data_dir)!r}, split='test',
                         sample_ids=['2'], targets_url={url!r}),
                    dict(abbr='regenerated', type=SciCodeDataset, path={str(data_dir)!r}, split='validation',
                         sample_ids=['1'])]
    '''))
    return path, data_dir


@pytest.mark.parametrize('case', ['unreachable', 'wrong key', 'unknown model'])
def test_a_wrong_endpoint_exits_2_in_seconds_before_any_fetch_or_regeneration(tmp_path, server, case):
    base_url = f'http://127.0.0.1:{closed_port()}/v1' if case == 'unreachable' else server.base_url
    if case == 'wrong key':
        server.key = 'sk-the-right-one'
    if case == 'unknown model':
        server.models = ['other-model']
    with FileServer({'/t.h5': b'never asked for'}) as files:
        cfg, data_dir = untouched_config(tmp_path, base_url, files.url('/t.h5'))
        before = sorted(p.name for p in data_dir.iterdir())
        start = time.monotonic()
        proc = run_cli([cfg, '-w', tmp_path / 'w'])
        took = time.monotonic() - start
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert took < 10
    assert files.log == [] and sorted(p.name for p in data_dir.iterdir()) == before     # nothing fetched or made
    assert server.log == [] or case == 'unknown model'
    screen = ' '.join(proc.stderr.split())          # the console wraps long lines
    assert "model 'api' ('test-model' at" in screen and 'fix:' in screen and '--no-probe' in screen
    said = {'unreachable': ['the server cannot be reached', '[Errno 111]'],
            'wrong key': ['the API key was refused', 'HTTP 401', 'Incorrect API key provided'],
            'unknown model': ['unknown model', 'HTTP 404', 'does not exist', 'the server lists: other-model']}[case]
    assert all(words in screen for words in said), screen
    assert 'Traceback' not in proc.stderr and KEY not in proc.stderr + proc.stdout
    assert not (tmp_path / 'w').exists()            # no run directory either


def test_no_probe_leaves_a_wrong_key_to_the_first_request_and_the_screen_says_why(tmp_path, server):
    server.key = 'sk-the-right-one'
    work = tmp_path / 'w'
    proc = run_cli([api_config_file(tmp_path, server, model=dict(max_concurrency=8)), '-w', work, '--no-probe'])
    assert proc.returncode == 1
    assert server.gets == [] and len(server.log) == 1 and server.log[0]['status'] == 401
    log_path = only_run(work) / 'logs' / 'infer' / 'api.out'
    log = log_path.read_text()
    assert 'the API key was refused (HTTP 401: Incorrect API key provided' in log and KEY not in log
    screen = ' '.join(proc.stderr.split())
    assert 'infer/api failed: stopped at step' in screen and 'the API key was refused' in screen
    assert f'log: {log_path}' in screen.replace(' ', '') or str(log_path) in proc.stderr.replace('\n', '')


def test_a_model_list_not_served_is_checked_with_one_token(tmp_path, server):
    server.models_status = 404
    work = tmp_path / 'w'
    proc = run_cli([api_config_file(tmp_path, server, both=False, sample_ids=['1']), '-w', work])
    assert proc.returncode == 0, proc.stderr[-2000:]
    probe, answer = server.log
    assert probe['body']['max_tokens'] == 1 and probe['body']['model'] == 'test-model'
    assert statuses(results(only_run(work), 'api', 'val')) == {'1.1': 'pass'}


def fifteen_problems(tmp_path):
    """A data dir of 15 quick problems (SciCode's format, gold code, validation split: targets
    regenerated in seconds), problem 907 of two steps, and their steps for the loopback server."""
    def add(k):
        return step(f'{900 + k}.1', f'Add {k} to a number.', f'def add_{k}(a):\n    """Plus {k}."""', '    return s',
                    [f'assert np.allclose(add_{k}(1), target)'],
                    gold=f'def add_{k}(a):\n    """Plus {k}."""\n    s = a + {k}\n    return s')
    twice = step('907.2', 'Add 7 twice using add_7.', 'def twice_7(a):\n    """Plus 14."""', '    return t',
                 ['assert np.allclose(twice_7(1), target)'],
                 gold='def twice_7(a):\n    """Plus 14."""\n    t = add_7(add_7(a))\n    return t')
    problems = [{'problem_id': str(900 + k), 'problem_name': f'adder {k}', 'required_dependencies': 'import numpy as np',
                 'sub_steps': [add(k)] + ([twice] if k == 7 else [])} for k in range(15)]
    data_dir = make_data_dir(tmp_path / 'data', problems)
    return data_dir, [s for p in tiny_dataset(data_dir).problems for s in p.steps]


def test_one_refused_step_of_a_15_problem_run_fails_alone_and_the_screen_names_it(tmp_path):
    """The issue's case: one step answered with a 400 context-length refusal; the run goes on."""
    data_dir, steps = fifteen_problems(tmp_path)

    def rule(body):
        users = [m['content'] for m in body['messages'] if m['role'] == 'user']
        return refusal('context') if 'def add_7(' in users[-1].split('NEXT STEP')[-1] else None
    with FakeOpenAI(steps, key=KEY) as server:
        server.rule = rule
        cfg = api_config_file(tmp_path, server, both=False, sample_ids=None, data_dir=data_dir)
        work = tmp_path / 'w'
        proc = run_cli([cfg, '-w', work])
    assert proc.returncode == 1, proc.stderr[-2000:]           # something failed: not 0
    run_dir = only_run(work)
    records = {r['step_id']: r for r in predictions(run_dir, 'api', 'val')}
    assert len(records) == 16 and [s for s, r in records.items() if r['error']] == ['907.1']
    refused = records['907.1']
    assert refused['refused'] and 'maximum context length is 8192 tokens' in refused['error']
    later = records['907.2']                      # asked all the same, without 907.1's code
    assert later['gaps'] == ['907.1'] and 'def twice_7' in later['code']
    res = results(run_dir, 'api', 'val')
    st = statuses(res)
    step_record = next(s for p in res['problems'] for s in p['steps'] if s['step_id'] == '907.1')
    assert st['907.1'] == 'parse_error' and step_record['category'] == 'refused'
    assert 'maximum context length' in step_record['message']
    assert st['907.2'] == 'fail'                                      # scored: add_7 is missing
    assert all(v == 'pass' for k, v in st.items() if k not in ('907.1', '907.2')), st
    assert (res['main_problem_resolved'], res['subproblem_correct'], res['subproblem_total']) == (14, 14, 16)
    summary = next((run_dir / 'summary').glob('*.txt')).read_text()
    assert 'refused' in summary
    screen = ' '.join(proc.stderr.split())
    assert 'infer/api errors: val: 1 of 16 steps without an answer; step 907.1:' in screen
    assert "the prompt does not fit the model's context (HTTP 400: This model's maximum context" in screen
