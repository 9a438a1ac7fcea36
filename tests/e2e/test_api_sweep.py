"""A sweep of API models runs all its models at once (issue 38), as a user runs it.

8 OpenAIChatModel entries against the loopback server (1 s an answer), beside 2 models whose
tasks start a model server of their own (tests/serve_openai.py), with one slot
(max_num_workers=1): the 8 API-model tasks start together while the first server task holds
the slot; the second server task waits for it. The endpoint's limit, set in `endpoints`, is
shared by the 8 models: the server never has more requests in flight than it allows.
"""
import json
import sys

import pytest

from helpers import DATA, KEY, ROOT, config_file, only_run, run_cli

pytestmark = pytest.mark.slow
SERVE = [sys.executable, str(ROOT / 'tests' / 'serve_openai.py'), '--port', '{port}', '--data', str(DATA),
         '--key', KEY, '--delay', '0.5']


def started_and_ended(run_dir, model):
    """(when the task had built its model and datasets, when it last wrote its progress: its end)."""
    progress = run_dir / 'logs' / 'infer' / f'{model}.progress.json'
    return json.loads(progress.read_text())['started'], progress.stat().st_mtime


def test_eight_api_models_start_at_once_and_a_server_task_waits_for_its_slot(tmp_path, server):
    server.delay = 1.0
    served = [f"dict(type='OpenAIChatModel', abbr='s{i}', path='test-model', key={KEY!r}, retries=2, timeout=30, "
              f"server=dict(command={SERVE!r}, ready_timeout=60))" for i in range(2)]
    apis = [f"dict(type='OpenAIChatModel', abbr='a{i}', path='model-{i}', base_url={server.base_url!r}, "
            f"key={KEY!r}, max_concurrency=3, retries=2, timeout=30)" for i in range(8)]
    extra = (f"endpoints = [dict(base_url={server.base_url!r}, max_concurrency=8)]\n"
             "runner = dict(type='LocalRunner', max_num_workers=1)\n")
    datasets = (f"datasets = [dict(abbr='val', type=SciCodeDataset, path={str(DATA)!r}, split='validation', "
                f"sample_ids=['1', '19', '29'])]\n")
    cfg = config_file(tmp_path, '[' + ', '.join(served + apis) + ']', extra=extra, datasets=datasets)
    out = run_cli([cfg, '-w', tmp_path / 'w', '-m', 'infer'])
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    run_dir = only_run(tmp_path / 'w')
    spans = [started_and_ended(run_dir, f'a{i}') for i in range(8)]
    starts = [start for start, _ in spans]
    # all 8 ran at the same time, started within seconds of each other
    assert max(starts) < min(end for _, end in spans)
    assert max(starts) - min(starts) < 5, starts
    first, second = started_and_ended(run_dir, 's0'), started_and_ended(run_dir, 's1')
    assert min(starts) < first[1], 'the API-model tasks waited for the slot'
    assert second[0] > first[1], 'the second server task did not wait for the first one\'s slot'
    # one endpoint, 8 models of 3 requests each: the endpoint's 8 shared out, 1 each
    assert len(server.log) == 8 * 6 and server.max_in_flight <= 8
    entry = json.loads((run_dir / 'configs' / 'tasks' / 'infer_a0.json').read_text())['model']
    assert entry['max_concurrency'] == 1
    # the progress display: one line per model (the last state of each)
    shown = [line.split()[1] for line in out.stderr.splitlines() if line.startswith('infer ')]
    assert sorted(set(shown)) == sorted([f'a{i}' for i in range(8)] + ['s0', 's1'])
