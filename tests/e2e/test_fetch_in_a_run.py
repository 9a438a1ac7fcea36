"""run.py on a data directory without targets: it fetches them (targets_url, from a loopback
file server) before any model is asked, resumes a download its killed predecessor left, and
stops with exit 2, nothing installed and no model asked, when the file is not the one pinned,
when fetching is off, or (dry run) says what it would fetch and writes nothing."""
import hashlib
import json
import os
import shutil
import signal
import textwrap

import h5py
import numpy as np
import pytest

from file_server import FileServer
from helpers import DATA, KEY, SUBSET, only_run, results, run_cli, start_cli, statuses, wait_until
from opencompass_scicode.datasets import SciCodeDataset
from opencompass_scicode.datasets.files import OFFICIAL_FILES


@pytest.fixture(scope='module')
def served(official_data, tmp_path_factory):
    """A small targets file: the regenerated targets of the SUBSET problems' steps (what their
    gold code computes), padded to ~600 KB so that a throttled transfer takes seconds."""
    from opencompass_scicode.evaluation.regenerate import ensure_targets
    from opencompass_scicode.targets.locate import regenerated_path
    validation = SciCodeDataset(path=str(official_data), split='validation')
    ensure_targets(validation)
    path = tmp_path_factory.mktemp('served') / 'targets.h5'
    subset = SciCodeDataset(path=str(official_data), split='validation', sample_ids=SUBSET)
    with h5py.File(regenerated_path(validation), 'r') as src, h5py.File(path, 'w') as dst:
        for problem in subset.problems:
            for step in problem.scored_steps:
                src.copy(src[step.step_id], dst, name=step.step_id)
        dst.create_dataset('padding', data=np.random.default_rng(0).random(75_000))
    return path.read_bytes()


def data_dir_without_targets(tmp_path):
    folder = tmp_path / 'data'
    folder.mkdir()
    for name in OFFICIAL_FILES:
        shutil.copyfile(DATA / name, folder / name)
    return folder


def fetch_config(tmp_path, server, data_dir, url, sha256):
    path = tmp_path / 'cfg.py'
    path.write_text(textwrap.dedent(f'''
        from opencompass_scicode.datasets import SciCodeDataset
        from opencompass_scicode.evaluation import SciCodeEvaluator
        from opencompass_scicode.models import OpenAIChatModel
        models = [dict(type=OpenAIChatModel, abbr='api', path='test-model', base_url={server.base_url!r},
                       key={KEY!r}, retries=1, timeout=30)]
        datasets = [dict(abbr='all', type=SciCodeDataset, path={str(data_dir)!r}, split='all',
                         sample_ids={SUBSET!r}, targets_url={url!r}, targets_sha256={sha256!r},
                         eval_cfg=dict(evaluator=dict(type=SciCodeEvaluator, timeout=300)))]
    '''))
    return path


def sha(data):
    return hashlib.sha256(data).hexdigest()


@pytest.mark.slow
def test_a_run_killed_mid_download_resumes_with_r_and_scores(tmp_path, served, server):
    data_dir = data_dir_without_targets(tmp_path)
    before = sorted(p.name for p in data_dir.iterdir())
    with FileServer({'/t.h5': served}, rate=len(served) / 4) as files:
        cfg = fetch_config(tmp_path, server, data_dir, files.url('/t.h5'), sha(served))
        work = tmp_path / 'w'
        proc = start_cli([cfg, '-w', work])
        partial = lambda: next((p for p in data_dir.glob('*.partial') if p.stat().st_size > 100_000), None)
        assert wait_until(partial, 60, interval=0.05), proc.communicate()
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        kept = partial().stat().st_size
        assert not (data_dir / 'test_data.h5').exists() and 0 < kept < len(served)
        assert server.log == []                          # no model asked while targets were missing
        done = run_cli([cfg, '-w', work, '-r'])
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    first, resumed = files.log
    assert resumed['range'] == f'bytes={kept}-' and resumed['sent'] == len(served) - kept
    assert files.bytes_sent < 1.5 * len(served)          # not downloaded twice
    assert (data_dir / 'test_data.h5').read_bytes() == served
    assert sorted(p.name for p in data_dir.iterdir()) == sorted(before + ['test_data.h5', 'test_data.h5.sha256.json'])
    assert server.log and min(e['time'] for e in server.log) > resumed['end']    # asked only once in place
    res = results(only_run(work), 'api', 'all')
    assert res['targets'] == 'custom'                    # pinned by targets_sha256, not the official file
    assert set(statuses(res).values()) == {'pass'} and res['subproblem_total'] == 6


def test_a_wrong_digest_stops_before_any_request_with_both_digests(tmp_path, served, server):
    data_dir = data_dir_without_targets(tmp_path)
    before = sorted(p.name for p in data_dir.iterdir())
    wrong = 'f' * 64
    with FileServer({'/t.h5': served}) as files:
        cfg = fetch_config(tmp_path, server, data_dir, files.url('/t.h5'), wrong)
        proc = run_cli([cfg, '-w', tmp_path / 'w'])
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert wrong in proc.stderr and sha(served) in proc.stderr and 'fix:' in proc.stderr
        assert 'Traceback' not in proc.stderr
        assert [e['status'] for e in files.log] == [200]
        # fetching off: the manual steps, nothing asked of the file server
        off = run_cli([cfg, '-w', tmp_path / 'w', '--no-download'])
        assert off.returncode == 2 and '--no-download' in off.stderr and 'Google Drive' in off.stderr
        offline = run_cli([cfg, '-w', tmp_path / 'w'], env={'SCICODE_OFFLINE': '1'})
        assert offline.returncode == 2 and 'SCICODE_OFFLINE=1' in offline.stderr
        # a dry run says what it would fetch, fetches and writes nothing
        dry = run_cli([cfg, '-w', tmp_path / 'w', '--dry-run'])
        assert dry.returncode == 0, dry.stderr[-2000:]
        assert files.url('/t.h5') in dry.stdout and 'a run fetches them first' in dry.stdout
        assert len(files.log) == 1
    assert sorted(p.name for p in data_dir.iterdir()) == before
    assert not (tmp_path / 'w').exists() and server.log == []


def corrected(problems_file, keep, note, broken):
    """A corrected problems file as SciCode-Verified publishes one: the official records of the
    problems `keep` (others dropped), each step's description with `note` added, and the first
    test of step `broken` rewritten (here into one no code passes, so its verdict shows whose
    tests ran)."""
    out = []
    for line in problems_file.read_text().splitlines():
        record = json.loads(line)
        if record['problem_id'] not in keep:
            continue
        for step in record['sub_steps']:
            step['step_description_prompt'] += note
            if step['step_number'] == broken:
                step['test_cases'][0] = 'assert False, "the corrected test"'
        out.append(json.dumps(record) + '\n')
    return ''.join(out).encode()


@pytest.mark.slow
def test_a_verified_run_fetches_the_corrected_problems_and_targets_then_scores_with_them(tmp_path, served, server):
    """targets='verified' on the test split: the corrected problems and targets are both fetched
    before any request; prompts, tests and the problem set are the corrected file's."""
    note = ' (Corrected: returns a float.)'
    problems = corrected(DATA / 'problems_dev.jsonl', keep={'19', '29'}, note=note, broken='29.2')
    data_dir = data_dir_without_targets(tmp_path)
    before = sorted(p.name for p in data_dir.iterdir())
    with FileServer({'/test_data_cleaned.h5': served, '/p.jsonl': problems}) as files:
        cfg = tmp_path / 'cfg.py'
        cfg.write_text(textwrap.dedent(f'''
            from opencompass_scicode.datasets import SciCodeDataset
            from opencompass_scicode.evaluation import SciCodeEvaluator
            from opencompass_scicode.models import OpenAIChatModel
            models = [dict(type=OpenAIChatModel, abbr='api', path='test-model', base_url={server.base_url!r},
                           key={KEY!r}, retries=1, timeout=30)]
            datasets = [dict(type=SciCodeDataset, path={str(data_dir)!r}, split='test', targets='verified',
                             targets_url={files.url('/test_data_cleaned.h5')!r}, targets_sha256={sha(served)!r},
                             problems_url={files.url('/p.jsonl')!r}, problems_sha256={sha(problems)!r},
                             eval_cfg=dict(evaluator=dict(type=SciCodeEvaluator, timeout=300)))]
        '''))
        dry = run_cli([cfg, '-w', tmp_path / 'w', '--dry-run'])
        assert dry.returncode == 0, dry.stderr[-2000:]
        assert "'scicode_test_verified': corrected problems missing" in dry.stdout
        assert "'scicode_test_verified': targets missing" in dry.stdout and 'tasks: listed once' in dry.stdout
        assert files.log == [] and sorted(p.name for p in data_dir.iterdir()) == before
        off = run_cli([cfg, '-w', tmp_path / 'w', '--no-download'])
        assert off.returncode == 2 and 'corrected problems' in off.stderr and 'shhu2001/SciCode-Verified' in off.stderr
        assert 'Traceback' not in off.stderr and files.log == []
        done = run_cli([cfg, '-w', tmp_path / 'w'])
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert sorted(e['path'] for e in files.log) == ['/p.jsonl', '/test_data_cleaned.h5']
    assert server.log and min(e['time'] for e in server.log) > max(e['end'] for e in files.log)
    assert all(note in json.dumps(e['body']) for e in server.log)         # the corrected prompts
    assert sorted(p.name for p in data_dir.iterdir()) == sorted(
        before + ['problems_test_verified.jsonl', 'test_data_cleaned.h5', 'test_data_cleaned.h5.sha256.json'])
    res = results(only_run(tmp_path / 'w'), 'api', 'scicode_test_verified')
    assert res['targets'] == 'verified'
    assert [p['problem_id'] for p in res['problems']] == ['19', '29']
    verdicts = statuses(res)
    assert verdicts.pop('29.2') == 'fail' and set(verdicts.values()) == {'pass'} and len(verdicts) == 4
