"""Workers that stop answering, die, or outlive their host: the run goes on and nothing is left behind."""
import os
import signal
import threading
import time

import pytest

from helpers import TINY_PROBLEMS, gold_predictions, make_data_dir, tiny_dataset
from opencompass_scicode.evaluation import SciCodeEvaluator
from opencompass_scicode.evaluation.sharing import durations_path
from opencompass_scicode.sandbox.executor import _Worker
from opencompass_scicode.targets.resolve import resolve_targets

CORRECT_ADD = 'def add(a, b):\n    s = a + b\n    return s\n'


@pytest.fixture
def tiny(tmp_path):
    ds = tiny_dataset(make_data_dir(tmp_path / 'data', TINY_PROBLEMS))
    return ds, resolve_targets(ds)


def parents():
    """{pid: parent pid} of every live process."""
    found = {}
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                with open(f'/proc/{entry}/stat', 'rb') as fh:
                    stat = fh.read()
            except OSError:
                continue
            found[int(entry)] = int(stat[stat.rfind(b')') + 2:].split()[1])
    return found


def running(pid):
    """Alive and not a zombie (a dead child its parent has not reaped yet)."""
    try:
        with open(f'/proc/{pid}/stat', 'rb') as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rfind(b')') + 2:].split()[0] != b'Z'


def descendants(root):
    tree = parents()
    below = set()
    for pid in tree:
        seen = pid
        while seen in tree and seen not in (0, 1):
            seen = tree[seen]
            if seen == root:
                below.add(pid)
                break
    return below


def worker_running(marker):
    """(worker pid, step pid) of a step of ours whose working directory holds `marker`."""
    tree = parents()
    for pid in descendants(os.getpid()):
        if os.path.exists(f'/proc/{pid}/cwd/{marker}'):
            return tree.get(pid), pid
    return None


def test_a_frozen_worker_costs_its_own_step_only(tiny, monkeypatch):
    """A worker that never answers (here SIGSTOPped mid-step) is killed and replaced once the step's
    timeout and the grace have passed: that step is eval_error, the steps after it still pass."""
    monkeypatch.setattr(_Worker, 'GRACE_S', 1)
    ds, targets = tiny
    durations_path(ds.data_dir).unlink()     # the gold code's durations would reorder the steps
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
            ds, preds, targets, on_step=lambda record: order.append((record['step_id'], record['status'])))
    finally:
        done.set()
        freezer.join()
    assert frozen, 'the step never started'
    assert time.monotonic() - start < 60
    assert order == [('900.1', 'eval_error'), ('900.2', 'pass'), ('901.1', 'pass')]
    message = result['problems'][0]['steps'][0]['message']
    assert 'did not answer within 4 s' in message, message
    assert not running(frozen[0]), 'the frozen worker was not killed'
