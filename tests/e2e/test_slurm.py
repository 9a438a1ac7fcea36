"""The Slurm runner against a real Slurm: this machine as a one-node cluster (.ci/slurm-up)."""
import json
import os
import shutil
import signal
import subprocess

import pytest

from helpers import (KEY, ROOT, config_file, file_with_lines, only_run, results, run_cli, start_cli, statuses,
                     wait_until)
from openai_server import asked

pytestmark = pytest.mark.slow
PARTITION = 'debug'
SLURM_UP = ROOT / '.ci' / 'slurm-up'


def _ready():
    if shutil.which('sinfo') is None:
        return False
    out = subprocess.run(['sinfo', '-h', '-o', '%T'], capture_output=True, text=True)
    return out.returncode == 0 and any(s.startswith(('idle', 'mix', 'alloc')) for s in out.stdout.split())


@pytest.fixture(scope='module', autouse=True)
def slurm():
    """A running cluster: started here if .ci/run has not started it already."""
    if not _ready():
        out = subprocess.run([str(SLURM_UP)], capture_output=True, text=True, timeout=900)
        if out.returncode == 3:       # no way to install or start it here (not root, no sudo)
            pytest.skip(f'Slurm cannot be started on this machine: {out.stdout.strip()} {out.stderr.strip()}')
        assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert _ready()


def jobs_of(path):
    """Slurm jobs pending or running whose batch script lies under `path`."""
    out = subprocess.run(['squeue', '-h', '-o', '%i|%o'], capture_output=True, text=True)
    return [line.split('|')[0] for line in out.stdout.splitlines() if str(path) in line]


def api_config(tmp_path, server):
    api = (f"[dict(type='OpenAIChatModel', abbr='api', path='test-model', base_url={server.base_url!r}, "
           f"key={KEY!r}, max_concurrency=1, retries=2, timeout=10)]")
    return config_file(tmp_path, api)


def start(cfg, work, *extra):
    return start_cli([cfg, '-w', work, '--slurm', '-p', PARTITION, *extra])


def test_the_default_job_on_slurm(tmp_path):
    out = run_cli([ROOT / 'configs' / 'eval_scicode.py', '-w', tmp_path, '--slurm', '-p', PARTITION], timeout=1200)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    cell = lambda n: f'100.0 ({n}/{n}) [100-100]'  # noqa: E731
    row = next(line for line in out.stdout.splitlines() if line.startswith('reference '))
    # the table names the protocol of each dataset group (issue 36), as tests/e2e/test_default_job.py reads it
    assert row.split() == ['reference', 'regenerated', 'official'] + ' '.join([cell(15), cell(50)] * 2).split()
    status = json.loads((only_run(tmp_path) / 'status.json').read_text())
    for name, entry in status.items():
        assert entry['state'] in ('done', 'skipped') and 'COMPLETED' in entry['note'], (name, entry)


def test_inference_jobs_of_api_models_share_cpus_and_leave_scoring_to_evaluation_jobs(tmp_path, server):
    """More API models than the node has CPUs: their inference jobs (which wait on the network)
    run at once, sharing CPUs (the CI partition allows it for jobs that ask, OverSubscribe=YES);
    the evaluation jobs, on CPUs of their own, do all the scoring."""
    cpus = os.cpu_count()
    models = [f"dict(type='OpenAIChatModel', abbr='m{i}', path='model-{i}', base_url={server.base_url!r}, "
              f"key={KEY!r}, max_concurrency=1, retries=2, timeout=30)" for i in range(cpus + 2)]
    cfg = config_file(tmp_path, '[' + ', '.join(models) + ']')
    dry = run_cli([cfg, '-w', tmp_path / 'w', '--slurm', '-p', PARTITION, '--dry-run'])
    assert dry.returncode == 0, dry.stderr
    lines = {line.split(': ', 1)[0]: line for line in dry.stdout.splitlines() if ': ' in line}
    assert '--oversubscribe' in lines['infer/m0'] and '--mem=1G' in lines['infer/m0']
    # one CPU and no GPU each, and all of them submitted at once (they hold no slot)
    assert '--cpus-per-task=1' in lines['infer/m0'] and '--gres' not in lines['infer/m0']
    assert '--oversubscribe' not in lines['eval/m0/val'] and '--mem' not in lines['eval/m0/val']
    server.delay = 1.0
    out = run_cli([cfg, '-w', tmp_path / 'w', '--slurm', '-p', PARTITION], timeout=900)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    spans = [(e['time'], e['time'] + server.delay, e['body']['model']) for e in server.log]
    most = max(len({m for a, b, m in spans if a <= t < b}) for t, _, _ in spans)
    assert most > cpus, f'at most {most} models were asked at once on {cpus} CPUs'
    run_dir = only_run(tmp_path / 'w')
    for m in range(cpus + 2):
        infer_log = (run_dir / 'logs' / 'infer' / f'm{m}.out').read_text()
        assert 'scored' not in infer_log and 'early evaluation' not in infer_log
        for dataset in ('val', 'val_bg'):
            assert set(statuses(results(run_dir, f'm{m}', dataset)).values()) == {'pass'}
    task = json.loads((run_dir / 'configs' / 'tasks' / 'infer_m0.json').read_text())
    assert task['eager_eval'] is False


def job_state(job):
    out = subprocess.run(['squeue', '-h', '--states=all', '-j', job, '-o', '%T'], capture_output=True, text=True)
    return out.stdout.strip()


def test_a_cancelled_job_is_submitted_again_and_goes_on_from_its_saved_steps(tmp_path, server, steps):
    server.delay = 0.5
    cfg, work = api_config(tmp_path, server), tmp_path / 'w'
    proc = start(cfg, work)
    assert wait_until(lambda: file_with_lines(work, 'predictions/api/val.jsonl', 3), 120), 'no 3 answers in 120 s'
    (job,) = jobs_of(work)
    subprocess.run(['scancel', job], check=True)
    wait_until(lambda: job_state(job) in ('CANCELLED', ''), 60, interval=0.1)
    run_dir = only_run(work)
    saved = {(json.loads(line)['step_id'], path.stem.endswith('_bg'))
             for path in (run_dir / 'predictions' / 'api').glob('*.jsonl')
             for line in path.read_text().splitlines() if line.strip()}
    assert saved
    server.delay = 0.0
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stdout[-3000:] + stderr[-3000:]
    note = json.loads((run_dir / 'status.json').read_text())['infer/api']['note']
    assert f'{job} CANCELLED ->' in note and note.endswith('COMPLETED'), note
    requests = asked(server, steps)
    # no saved step was asked twice; every step was asked
    assert {step: requests.count(step) for step in saved} == dict.fromkeys(saved, 1)
    assert len(set(requests)) == 12
    for dataset in ('val', 'val_bg'):
        assert set(statuses(results(run_dir, 'api', dataset)).values()) == {'pass'}


def test_ctrl_c_cancels_every_job_it_submitted(tmp_path, server):
    server.delay = 1.0
    cfg, work = api_config(tmp_path, server), tmp_path / 'w'
    proc = start(cfg, work)
    assert wait_until(lambda: file_with_lines(work, 'predictions/api/val.jsonl', 1), 120), 'no answer in 120 s'
    assert jobs_of(work)
    os.killpg(proc.pid, signal.SIGINT)
    proc.communicate(timeout=120)
    assert proc.returncode == 130
    assert jobs_of(work) == []
    # SIGTERM (as a scheduler stops a run) does the same
    proc = start(cfg, work, '-r')
    wait_until(lambda: jobs_of(work), 60, interval=0.1)
    assert jobs_of(work)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=120)
    assert proc.returncode == 130 and jobs_of(work) == []


def test_a_missing_partition_or_slurm_stops_before_anything_is_submitted(tmp_path):
    cfg = config_file(tmp_path, "[dict(type=ReferenceModel)]")
    out = run_cli([cfg, '-w', tmp_path / 'w', '--slurm', '-p', 'nosuch'])
    assert out.returncode == 2
    assert "no partition 'nosuch'" in out.stderr and PARTITION in out.stderr
    assert not (tmp_path / 'w').exists() or not list((tmp_path / 'w').rglob('*.sbatch.sh'))
    no_slurm = os.pathsep.join(p for p in os.environ['PATH'].split(os.pathsep)
                               if not (os.path.isdir(p) and os.path.exists(os.path.join(p, 'sbatch'))))
    out = run_cli([cfg, '-w', tmp_path / 'w2', '--slurm', '-p', PARTITION], env={'PATH': no_slurm})
    assert out.returncode == 2 and 'sbatch' in out.stderr and 'not found' in out.stderr
    assert not (tmp_path / 'w2').exists() or not list((tmp_path / 'w2').rglob('*.sbatch.sh'))
    # and a partition that exists is taken
    out = run_cli([cfg, '-w', tmp_path / 'w3', '--slurm', '-p', PARTITION, '--dry-run'])
    assert out.returncode == 0 and f'--partition={PARTITION}' in out.stdout


def test_runners_per_stage_with_shards(tmp_path):
    """Inference here in two shards, evaluation as Slurm jobs on another partition in two shards:
    the same verdicts as the default plan."""
    extra = '''
from opencompass_scicode.partitioners import NumWorkerPartitioner
from opencompass_scicode.runners import LocalRunner, SlurmRunner
infer = dict(partitioner=dict(type=NumWorkerPartitioner, num_worker=2), runner=dict(type=LocalRunner))
eval = dict(partitioner=dict(type=NumWorkerPartitioner, num_worker=2),
            runner=dict(type=SlurmRunner, partition='cpu', time='10:00', mem='2G'))
'''
    cfg = config_file(tmp_path, "[dict(type=ReferenceModel, abbr='ref')]", extra=extra)
    dry = run_cli([cfg, '-w', tmp_path / 'w', '--dry-run'])
    assert dry.returncode == 0, dry.stderr
    submit = next(line for line in dry.stdout.splitlines() if line.startswith('eval/ref/val/part0of2: '))
    assert 'sbatch' in submit and '--partition=cpu' in submit and '--time=10:00' in submit and '--mem=2G' in submit
    assert 'sbatch' not in next(line for line in dry.stdout.splitlines() if line.startswith('infer/ref: '))
    out = run_cli([cfg, '-w', tmp_path / 'w'])
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    run_dir = only_run(tmp_path / 'w')
    status = json.loads((run_dir / 'status.json').read_text())
    assert 'job' not in status['infer/ref/part0of2']['note']
    assert status['eval/ref/val/part1of2']['note'].endswith('COMPLETED')
    assert status['eval/ref/val']['note'].endswith('COMPLETED')
    for dataset in ('val', 'val_bg'):
        res = results(run_dir, 'ref', dataset)
        assert (res['subproblem_correct'], res['subproblem_total']) == (6, 6)
        assert set(statuses(res).values()) == {'pass'}
