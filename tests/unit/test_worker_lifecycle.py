"""Workers that stop answering, die, or outlive their host: the run goes on and nothing is left behind."""
import glob
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from helpers import ROOT, TINY_PROBLEMS, descendants, gold_predictions, make_data_dir, tiny_dataset, wait_until
from opencompass_scicode.evaluation import SciCodeEvaluator
from opencompass_scicode.pool.timings import durations_path
from opencompass_scicode.sandbox import leftovers
from opencompass_scicode.sandbox.executor import ForkServerExecutor, Limits, StepJob, _Worker
from opencompass_scicode.sandbox.lockdown import CGROUP_ROOT
from opencompass_scicode.utils.procs import process_table, read_proc
from opencompass_scicode.evaluation.regenerate import ensure_targets
CORRECT_ADD = 'def add(a, b):\n    s = a + b\n    return s\n'


@pytest.fixture
def tiny(tmp_path):
    ds = tiny_dataset(make_data_dir(tmp_path / 'data', TINY_PROBLEMS))
    return ds, ensure_targets(ds)


def parents():
    """{pid: parent pid} of every live process."""
    return {pid: proc.parent for pid, proc in process_table().items()}


def running(pid):
    """Alive and not a zombie (a dead child its parent has not reaped yet)."""
    proc = read_proc(pid)
    return proc is not None and proc.live


def worker_running(marker, root=None):
    """(worker pid, step pid) of a step below `root` (us) whose working directory holds `marker`.

    What the step starts works there too: the step is the one whose parent does not.
    """
    tree = parents()
    for pid in descendants(root or os.getpid(), tree):
        if os.path.exists(f'/proc/{pid}/cwd/{marker}') and not os.path.exists(f'/proc/{tree.get(pid)}/cwd/{marker}'):
            return tree.get(pid), pid
    return None


def test_a_frozen_worker_costs_its_own_step_only(tiny, monkeypatch):
    """A worker that never answers (here SIGSTOPped mid-step) is killed and replaced once the step's
    timeout and the grace have passed: that step is eval_error, the steps after it still pass."""
    monkeypatch.setattr(_Worker, 'GRACE_S', 1)
    ds, targets = tiny
    durations_path(ds.data_dir).unlink(missing_ok=True)     # the gold code's durations would reorder the steps
    preds = gold_predictions(ds)
    # 900.2's program holds 900.1's code too: only the first step to get here is frozen.
    preds['900.1']['code'] = CORRECT_ADD + "open('freeze-my-worker', 'w').close()\nimport time\ntime.sleep(1)\n"
    frozen, done, order = [], threading.Event(), []

    def freeze():
        while not done.is_set() and not frozen:
            found = worker_running('freeze-my-worker')
            if found:
                os.kill(found[0], signal.SIGSTOP)
                frozen.append(found[0])
            time.sleep(0.01)

    freezer = threading.Thread(target=freeze)
    freezer.start()
    start = time.monotonic()
    try:
        result = SciCodeEvaluator(max_workers=1, timeout=3).evaluate(
            ds, preds, targets, on_step=lambda record: order.append((record.step_id, record.status)))
    finally:
        done.set()
        freezer.join()
    assert frozen, 'the step never started'
    assert time.monotonic() - start < 60
    assert order == [('900.1', 'eval_error'), ('900.2', 'pass'), ('901.1', 'pass')]
    message = result['problems'][0]['steps'][0]['message']
    assert 'did not answer within 4 s' in message, message
    assert not running(frozen[0]), 'the frozen worker was not killed'
    assert not glob.glob(f'{tempfile.gettempdir()}/scicode-steps-{frozen[0]}-*'), 'its work root was not swept'


MARKER = 'scicode-lifecycle-test-marker'
HOST = '''
import sys
from opencompass_scicode.sandbox.executor import ForkServerExecutor, Limits, StepJob
program, on_a_copy = sys.argv[1], sys.argv[2] == 'copy'
with ForkServerExecutor(workers=2 if on_a_copy else 1) as executor:
    if on_a_copy:
        assert executor.copy_worker(0, 1)
    executor.run(StepJob(step_id='host', program=program, tests=[], dependencies='', limits=Limits(timeout=120)),
                 1 if on_a_copy else 0)
'''
# A step that leaves a detached process behind, says it is running, and then takes its time.
LINGERING_STEP = ('import subprocess, time\n'
                  f'subprocess.Popen(["sh", "-c", "sleep 300; : {MARKER}"], start_new_session=True)\n'
                  "open('step-is-running', 'w').close()\n"
                  'time.sleep(120)\n')


def start_host(worker='worker'):
    """A host process running LINGERING_STEP on a worker (or a copy of one); returns it and
    (worker pid, step pid) once the step runs."""
    host = subprocess.Popen([sys.executable, '-c', HOST, LINGERING_STEP, worker], cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    found = wait_until(lambda: worker_running('step-is-running', host.pid), 60)
    if found:
        return host, found
    host.kill()
    raise AssertionError('the step never started')


def marker_processes():
    found = []
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                with open(f'/proc/{entry}/cmdline', 'rb') as fh:
                    if MARKER.encode() in fh.read():
                        found.append(int(entry))
            except OSError:
                pass
    return found


def leftovers_of(worker, step):
    """The worker's work root (where its step runs) and its own cgroup directories."""
    workroot = os.path.dirname(os.readlink(f'/proc/{step}/cwd'))
    cgroups = []
    with open(f'/proc/{worker}/cgroup') as fh:
        for line in fh:
            _, controllers, path = line.rstrip('\n').split(':', 2)
            if path.endswith(f'/scicode-worker-{worker}'):
                cgroups.append(os.path.join(CGROUP_ROOT, controllers, path.lstrip('/')))
    return [workroot] + cgroups


def test_starting_an_executor_sweeps_what_killed_workers_left(monkeypatch):
    """Everything of a run killed at once (SIGKILL: no clean-up) is swept by the next executor:
    processes still in the dead worker's cgroups, the cgroups, its work root. A live worker's stay."""
    host, (worker, step) = start_host()
    stale = leftovers_of(worker, step)
    zygote = parents()[worker]
    for sig in (signal.SIGSTOP, signal.SIGKILL):   # stopped first: none of them gets to clear up
        for pid in (worker, zygote, host.pid):
            os.kill(pid, sig)
    host.wait()
    assert wait_until(lambda: not running(worker) and not running(zygote), 10)
    assert marker_processes(), 'the detached process should have outlived its step'
    assert all(os.path.exists(path) for path in stale)
    limits = Limits(timeout=20)
    with ForkServerExecutor(workers=1) as live:
        cwd = live.run(StepJob(step_id='live', program='import os\nprint(os.getcwd())\n', tests=[],
                               dependencies='', limits=limits), 0)
        live_worker = live._slots[0].pid
        kept = [os.path.dirname(cwd.stdout.strip())] + [
            path.replace(f'scicode-worker-{worker}', f'scicode-worker-{live_worker}') for path in stale[1:]]
        assert all(os.path.exists(path) for path in kept)
        monkeypatch.setattr(leftovers, '_swept', False)      # once per process: this one has swept
        ForkServerExecutor(workers=1).start()
        assert [path for path in stale if os.path.exists(path)] == []
        assert wait_until(lambda: not marker_processes(), 5), 'a process in a stale cgroup was not killed'
        assert all(os.path.exists(path) for path in kept)
        again = live.run(StepJob(step_id='live', program='x = 1\n', tests=[], dependencies='', limits=limits), 0)
        assert again.events[-1]['event'] == 'completed', again.stderr


@pytest.mark.parametrize('worker', ['worker', 'copy'])
def test_when_the_host_dies_its_workers_and_steps_stop(worker):
    """A host killed outright (SIGKILL) mid-step: its zygote, workers, step and what the step
    started all end within seconds (not when the step would have), and clear up after them."""
    host, (serving, step) = start_host(worker)
    family = descendants(host.pid)
    assert {serving, step} <= family and marker_processes()
    leftovers_before = leftovers_of(serving, step)
    host.kill()
    host.wait()
    assert wait_until(lambda: not any(running(pid) for pid in family), 5), \
        [open(f'/proc/{pid}/cmdline', 'rb').read() for pid in family if running(pid)]
    assert marker_processes() == []
    assert [path for path in leftovers_before if os.path.exists(path)] == []
