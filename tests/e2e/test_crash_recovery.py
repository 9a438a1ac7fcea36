"""run.py or a whole run killed outright: nothing keeps running, nothing races, `-r` finishes the job."""
import os
import signal
from pathlib import Path

import pytest

from helpers import (DATA, alive, config_file, descendants, only_run, power_cut, results, run_cli, start_cli,
                     statuses, wait_until, wait_until_gone)

pytestmark = pytest.mark.slow

SLOW_STEP = 'import time\ntime.sleep(20)\n'   # long enough to kill the run meanwhile


def _sleeping_programs(dest, problem_ids=('1', '19')):
    """GeneratedCodeModel files whose first step sleeps, then fails its tests; the rest are gold code."""
    from opencompass_scicode.datasets import SciCodeDataset, gold_code
    from opencompass_scicode.evaluation.program import code_prefix
    ds = SciCodeDataset(path=str(DATA), split='validation', sample_ids=list(problem_ids))
    dest.mkdir()
    for problem in ds.problems:
        codes = []
        for step in problem.steps:
            code = SLOW_STEP if step.index == 1 else gold_code(step)
            (dest / f'{problem.problem_id}.{step.index}.py').write_text(
                code_prefix(problem.dependencies, codes, code))
            codes.append(gold_code(step))
    return ds


def _owner(path):
    """The pid in `scicode-steps-<pid>-...` or `scicode-worker-<pid>` (None for other names)."""
    pid = path.name.split('-')[2]
    return int(pid) if pid.isdigit() else None


def _leftovers():
    """Work roots and worker cgroups whose owner is gone."""
    return {p for p in [*Path('/tmp').glob('scicode-steps-*'),
                        *Path('/sys/fs/cgroup').glob('*/**/scicode-worker-*')]
            if _owner(p) is not None and not alive([_owner(p)])}


def _wait_for_steps_running(proc, timeout=120):
    """Until a worker below run.py runs a step (its work root holds a step directory)."""
    def steps_running():
        below = descendants(proc.pid)
        roots = [p for pid in below for p in Path('/tmp').glob(f'scicode-steps-{pid}-*')]
        if any(next(root.glob('step-*'), None) for root in roots):
            return True
        assert proc.poll() is None, proc.communicate()
        return False
    if wait_until(steps_running, timeout, interval=0.2):
        return descendants(proc.pid)
    raise AssertionError(f'run.py started only {descendants(proc.pid)}')


def _sleeping_run(tmp_path):
    """(config, work dir, run.py process) of a run whose first steps sleep."""
    gen = tmp_path / 'generated'
    _sleeping_programs(gen)
    work = tmp_path / 'w'
    cfg = config_file(tmp_path, f"[dict(type=GeneratedCodeModel, path={str(gen)!r}, abbr='gen')]",
                      sample_ids=['1', '19'])
    return cfg, work, start_cli([cfg, '-w', work])


def test_killing_run_py_stops_its_tasks_workers_and_steps(official_data, tmp_path):
    cfg, work, proc = _sleeping_run(tmp_path)
    try:
        below = _wait_for_steps_running(proc)
        # A second run.py on the same run directory is refused while the first lives.
        second = run_cli([cfg, '-w', work, '-r'], timeout=120)
        assert second.returncode == 2, second.stderr
        assert f'in use by another run.py (pid {proc.pid})' in second.stderr
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        wait_until(lambda: not alive(below), 20, interval=0.2)
        assert not alive(below), [Path(f'/proc/{p}/cmdline').read_bytes() for p in alive(below)]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def test_a_run_killed_mid_evaluation_leaves_nothing_behind_after_resume(official_data, tmp_path):
    # Leftovers of other processes (another job's cgroup tree, say) are not this run's to sweep.
    before = _leftovers()
    cfg, work, proc = _sleeping_run(tmp_path)
    _wait_for_steps_running(proc)
    power_cut(proc)
    stale = _leftovers() - before
    assert any(p.name.startswith('scicode-steps-') for p in stale), 'no work roots left to sweep'
    done = run_cli([cfg, '-w', work, '-r'], timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    run_dir = only_run(work)
    for ds in ('val', 'val_bg'):
        res = results(run_dir, 'gen', ds)
        assert statuses(res) == {'1.1': 'fail', '19.1': 'fail', '19.2': 'pass'}
    assert not [p for p in stale if p.exists()]
    wait_until_gone(str(work))
