"""Adversarial step code: none of it may pass, the run must finish, nothing may leak.

Every attack here is bounded (a few hundred processes or a couple of GB at
most), so a containment failure would show as a failed test, not a dead machine.
"""
import hashlib
import os
import resource
import socket
import threading
import time
from pathlib import Path

import pytest

from helpers import gold_predictions, tiny_dataset, wait_until
from opencompass_scicode.evaluation import SciCodeEvaluator
from opencompass_scicode.evaluation.regenerate import ensure_targets
from opencompass_scicode.utils.procs import read_proc

CORRECT_ADD = 'def add(a, b):\n    s = a + b\n    return s\n'
WRONG_ADD = 'def add(a, b):\n    return 0\n'
MARKER = 'scicode-sandbox-test-marker'


@pytest.fixture(scope='module')
def world(tmp_path_factory):
    from helpers import TINY_PROBLEMS, make_data_dir
    root = tmp_path_factory.mktemp('world')
    data = make_data_dir(root / 'data', TINY_PROBLEMS)
    ds = tiny_dataset(data, sample_ids=['900'])
    targets = ensure_targets(ds)
    precious = root / 'outputs'
    precious.mkdir()
    (precious / 'results.json').write_text('{"subproblem": 12.5}')
    (precious / 'predictions.jsonl').write_text('{"step_id": "900.1"}\n')
    return ds, targets, root


def tree_state(root):
    state = {}
    for path in sorted(Path(root).rglob('*')):
        if 'cache' in path.relative_to(root).parts:
            continue              # step durations, written by the evaluator itself
        if path.is_file():
            state[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            state[str(path)] = 'dir'
    return state


def processes_running(text):
    found = []
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                cmdline = Path(f'/proc/{entry}/cmdline').read_bytes()
            except OSError:
                continue
            if text.encode() in cmdline:
                found.append(int(entry))
    return found


def _parent(pid):
    proc = read_proc(pid)
    return proc.parent if proc else 0


def ours(pids):
    """Those of `pids` that descend from this test process (other runs on the machine aside)."""
    mine = []
    for pid in pids:
        up = pid
        while up > 1 and up != os.getpid():
            up = _parent(up)
        if up == os.getpid():
            mine.append(pid)
    return mine


def leftover_processes():
    return processes_running(MARKER)


def evaluate(world, code, executor='forkserver', **limits):
    ds, targets, root = world
    before = tree_state(root)
    preds = gold_predictions(ds)
    preds['900.1']['code'] = code
    preds['900.2']['code'] = ''           # only step 900.1 is exercised
    limits.setdefault('timeout', 20)
    evaluator = SciCodeEvaluator(max_workers=1, executor=executor, **limits)
    result = evaluator.evaluate(ds, preds, targets)
    record = result['problems'][0]['steps'][0]
    assert record['step_id'] == '900.1'
    assert tree_state(root) == before, 'a file outside the step directory changed'
    wait_until(lambda: not leftover_processes(), 5, interval=0.1)
    assert leftover_processes() == [], 'a process started by the step outlived it'
    return record, evaluator


def test_sanity_correct_code_passes_and_wrong_code_fails(world):
    assert evaluate(world, CORRECT_ADD)[0]['status'] == 'pass'
    assert evaluate(world, WRONG_ADD)[0]['status'] == 'fail'


EXIT_TRICKS = {
    'sys.exit(0)': 'import sys\nsys.exit(0)\n',
    'os._exit(0)': 'import os\nos._exit(0)\n',
    'exit()': 'exit()\n',
    'raise SystemExit(0)': 'raise SystemExit(0)\n',
    'exit inside the function': 'import sys\ndef add(a, b):\n    sys.exit(0)\n',
    'os._exit inside the function': 'import os\ndef add(a, b):\n    os._exit(0)\n',
    'atexit hook': 'import atexit, os\natexit.register(lambda: os._exit(0))\n',
    'thread exits early': ('import os, threading, time\n'
                           'threading.Thread(target=lambda: os._exit(0)).start()\ntime.sleep(5)\n'),
    'forged report': ('import os, json\n'
                      'for fd in range(3, 10):\n'
                      '    try:\n'
                      '        os.write(fd, (json.dumps({"event": "completed", "tests": 2}) + "\\n").encode())\n'
                      '    except OSError:\n'
                      '        pass\n'
                      'os._exit(0)\n'),
}


@pytest.mark.parametrize('name', list(EXIT_TRICKS))
def test_exit_tricks_never_pass(world, name):
    record, _ = evaluate(world, WRONG_ADD + EXIT_TRICKS[name])
    assert record['status'] == 'fail', record
    assert record['message']


REBINDINGS = {
    'numpy.allclose': 'np.allclose = lambda *a, **k: True\n',
    'numpy.isclose': 'np.isclose = lambda *a, **k: True\n',
    'numpy.array_equal': 'np.array_equal = lambda *a, **k: True\n',
    'numpy.all': 'np.all = lambda *a, **k: True\n',
    'cmp helpers': ('import scicode.compare.cmp as c\n'
                    'c.cmp_tuple_or_list = lambda *a: True\nc.are_dicts_close = lambda *a, **k: True\n'),
    'builtins': 'import builtins\nbuiltins.len = lambda x: 0\n',
    'dependency name': 'class np:\n    allclose = staticmethod(lambda *a, **k: True)\n',
    'rebinding at call time': ('def add(a, b):\n'
                               '    import numpy\n'
                               '    numpy.allclose = lambda *a, **k: True\n'
                               '    return 0\n'),
}


@pytest.mark.parametrize('name', list(REBINDINGS))
def test_rebinding_what_tests_compare_with_never_passes(world, name):
    record, _ = evaluate(world, WRONG_ADD + REBINDINGS[name])
    assert record['status'] == 'fail', record
    assert record.get('violation'), record


def test_targets_are_out_of_reach(world):
    ds, targets, _ = world
    via_helper = ('from scicode.parse.parse import process_hdf5_to_tuple\n'
                  'def add(a, b):\n'
                  '    return process_hdf5_to_tuple("900.1", 2)[0]\n')
    record, _ = evaluate(world, via_helper)
    assert record['status'] == 'fail' and 'target' in record.get('violation', '')
    swallowed = ('from scicode.parse.parse import process_hdf5_to_tuple\n'
                 'try:\n    process_hdf5_to_tuple("900.1", 2)\nexcept Exception:\n    pass\n')
    record, _ = evaluate(world, CORRECT_ADD + swallowed)
    assert record['status'] == 'fail' and record.get('violation')
    via_env = 'import os\nPATH = os.environ["SCICODE_H5_PATH"]\n'
    assert evaluate(world, CORRECT_ADD + via_env)[0]['status'] == 'fail'
    via_file = (f'import h5py\nf = h5py.File({str(targets.path)!r}, "r")\n'
                f'def add(a, b):\n    return f["900.1/test1/var1"][()]\n')
    record, _ = evaluate(world, via_file)
    assert record['status'] == 'fail'
    assert 'ermission' in record['stderr'] or 'denied' in record['stderr'].lower()
    via_open = f'DATA = open({str(targets.path)!r}, "rb").read(10)\n'
    assert evaluate(world, CORRECT_ADD + via_open)[0]['status'] == 'fail'


def test_files_outside_the_working_directory_cannot_change(world):
    _, targets, root = world
    attack = (
        'import os, shutil\n'
        'for action in (\n'
        f'    lambda: open({str(root / "outputs" / "results.json")!r}, "w").write("{{}}"),\n'
        f'    lambda: os.remove({str(root / "outputs" / "predictions.jsonl")!r}),\n'
        f'    lambda: open({str(root / "new_file.txt")!r}, "w").write("x"),\n'
        f'    lambda: shutil.rmtree({str(root / "outputs")!r}),\n'
        f'    lambda: open({str(targets.path)!r}, "r+b").write(b"x"),\n'
        f'    lambda: os.rename({str(root / "outputs")!r}, {str(root / "moved")!r}),\n'
        '):\n'
        '    try:\n'
        '        action()\n'
        '    except Exception as exc:\n'
        '        print("blocked:", type(exc).__name__)\n'
        'open("inside.txt", "w").write("fine")\n'     # its own directory is writable
    )
    # The attempts fail silently and the code itself is right: it may pass, but
    # evaluate() checks that nothing outside the step directory changed.
    record, _ = evaluate(world, CORRECT_ADD + attack)
    assert record['status'] == 'pass', record
    assert record['stdout'].count('blocked:') == 6


def test_timeout_kills_detached_children(world):
    attack = (
        'import os, subprocess, sys, time\n'
        f'subprocess.Popen(["sh", "-c", "sleep 300; : {MARKER}"], start_new_session=True)\n'
        'if os.fork() == 0:\n'
        '    os.setsid()\n'
        '    if os.fork() == 0:\n'
        f'        os.execvp("sh", ["sh", "-c", "sleep 300; : {MARKER}"])\n'
        '    os._exit(0)\n'
        'while True:\n'
        '    time.sleep(0.1)\n'
    )
    start = time.monotonic()
    record, _ = evaluate(world, CORRECT_ADD + attack, timeout=3)
    assert record['status'] == 'timeout'
    assert time.monotonic() - start < 30


def test_children_left_behind_by_a_finished_step_are_killed(world):
    attack = ('import subprocess\n'
              f'subprocess.Popen(["sh", "-c", "sleep 300; : {MARKER}"], start_new_session=True)\n')
    record, _ = evaluate(world, CORRECT_ADD + attack)
    assert record['status'] == 'pass'        # legal, but the sleeper must not survive (checked)


def test_memory_bomb_fails_the_step_only(world):
    attack = 'hog = bytearray(3 * 1024 ** 3)\n'
    record, _ = evaluate(world, CORRECT_ADD + attack, memory_limit_mb=512)
    assert record['status'] == 'fail' and 'MemoryError' in record['message'] + record['stderr']


def test_process_flood_is_contained(world):
    attack = (
        'import os, time\n'
        'kids = 0\n'
        'for _ in range(300):\n'
        '    try:\n'
        '        pid = os.fork()\n'
        '    except OSError:\n'
        '        break\n'
        '    if pid == 0:\n'
        f'        os.execvp("sh", ["sh", "-c", "sleep 300; : {MARKER}"])\n'
        '    kids += 1\n'
        'print("started", kids)\n'
        'assert kids < 300, "no process limit"\n'
    )
    record, _ = evaluate(world, CORRECT_ADD + attack, max_processes=20)
    # Forks beyond the cap fail (cgroup or rlimit) or the step is killed (polling).
    started = [int(line.split()[1]) for line in record['stdout'].splitlines() if line.startswith('started')]
    if started:
        assert started[0] < 20 and record['status'] == 'pass', record
    else:
        assert record['status'] == 'fail' and 'processes' in record['message'], record


def test_output_flood_is_capped_and_evaluator_memory_stays_bounded(world):
    attack = 'import sys\nfor _ in range(200):\n    sys.stdout.write("x" * (1024 * 1024))\n'
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    record, _ = evaluate(world, CORRECT_ADD + attack, max_output_bytes=4096)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert record['status'] == 'pass'
    assert len(record['stdout']) < 5000 and 'bytes cut' in record['stdout']
    assert grown_mb < 100


def test_no_network(world):
    server = socket.socket()
    server.bind(('127.0.0.1', 0))
    server.listen(1)
    server.settimeout(0.1)
    port = server.getsockname()[1]
    accepted = []
    scored = threading.Event()

    def serve():
        # until the step is scored, then once more: a connection made by then waits in the backlog
        while not accepted:
            last = scored.is_set()
            try:
                conn, _ = server.accept()
                accepted.append(conn)
            except OSError:
                pass
            if last:
                break

    thread = threading.Thread(target=serve)
    thread.start()
    attack = ('import socket\n'
              f's = socket.create_connection(("127.0.0.1", {port}), timeout=2)\n')
    record, evaluator = evaluate(world, CORRECT_ADD + attack)
    scored.set()
    thread.join()
    server.close()
    assert record['status'] == 'fail'
    assert accepted == []
    assert evaluator.protections['network'].startswith('isolated')


def test_protections_are_recorded(world):
    _, evaluator = evaluate(world, CORRECT_ADD)
    p = evaluator.protections
    assert p['own_process'] and p['own_workdir'] and p['subreaper_cleanup']
    assert p['memory_limit_bytes'] > 0 and p['process_limit'] in ('cgroup', 'rlimit', 'polling')
    assert 'landlock' in p and 'network' in p
    from opencompass_scicode.sandbox.lockdown import landlock_abi
    if landlock_abi() > 0:                  # supported here: it must really be on
        assert p['landlock'] is True, p


@pytest.mark.parametrize('executor', ['subprocess'])
def test_plain_executor_is_just_as_strict(world, executor):
    assert evaluate(world, CORRECT_ADD, executor=executor)[0]['status'] == 'pass'
    for trick in ('sys.exit(0)', 'os._exit(0)', 'atexit hook'):
        assert evaluate(world, WRONG_ADD + EXIT_TRICKS[trick], executor=executor)[0]['status'] == 'fail'
    assert evaluate(world, WRONG_ADD + REBINDINGS['numpy.allclose'], executor=executor)[0]['status'] == 'fail'


def test_controls_without_the_protections_the_attacks_do_work(world, tmp_path):
    """The checks above can fail: switch a layer off and the attack gets through."""
    ds, targets, _ = world
    victim = tmp_path / 'victim.txt'
    victim.write_text('original')
    preds = gold_predictions(ds)
    preds['900.1']['code'] = CORRECT_ADD + f'open({str(victim)!r}, "w").write("changed")\n'
    SciCodeEvaluator(max_workers=1, restrict_files=False, timeout=20).evaluate(ds, preds, targets)
    assert victim.read_text() == 'changed'

    server = socket.socket()
    server.bind(('127.0.0.1', 0))
    server.listen(1)
    port = server.getsockname()[1]
    preds['900.1']['code'] = CORRECT_ADD + f'import socket\nsocket.create_connection(("127.0.0.1", {port}), timeout=5)\n'
    result = SciCodeEvaluator(max_workers=1, isolate_network=False, restrict_files=False,
                              timeout=20).evaluate(ds, preds, targets)
    server.settimeout(5)
    conn, _ = server.accept()
    conn.close()
    server.close()
    assert result['problems'][0]['steps'][0]['status'] == 'pass'


def test_a_copied_worker_is_just_as_contained(world, tmp_path):
    """Workers are copied (imports included) instead of importing again: the copy's
    steps get the same protections, and nothing of either is left at the end."""
    import glob
    import tempfile
    from opencompass_scicode.sandbox.executor import ForkServerExecutor, Limits, StepJob
    _, _, root = world
    roots_before = set(glob.glob(os.path.join(tempfile.gettempdir(), 'scicode-steps-*')))
    probe = (
        'import subprocess, sys\n'
        'print("sqlite3 loaded:", "sqlite3" in sys.modules)\n'
        f'subprocess.Popen(["sh", "-c", "sleep 300; : {MARKER}"], start_new_session=True)\n'
        'try:\n'
        f'    open({str(root / "outputs" / "results.json")!r}, "w").write("{{}}")\n'
        'except Exception as exc:\n'
        '    print("blocked:", type(exc).__name__)\n'
    )
    before = tree_state(root)

    def job(program, modules=()):
        return StepJob(step_id='copy', program=program, tests=[], dependencies='', modules=modules)

    with ForkServerExecutor(Limits(timeout=20), workers=2) as executor:
        first = executor.run(job('import sqlite3\n', ('sqlite3',)), 0)
        assert first.events[-1]['event'] == 'completed', first.stderr
        assert 'sqlite3 loaded: False' in executor.run(job(probe), 1).stdout
        assert executor.copy_worker(0, 1)
        assert executor.loaded[1] >= {'sqlite3'}
        # the source goes on, and clearing up after its step leaves the copy alone
        assert executor.run(job(probe), 0).events[-1]['event'] == 'completed'
        copied = executor.run(job(probe), 1)
        assert 'sqlite3 loaded: True' in copied.stdout, copied.stderr
        assert 'blocked:' in copied.stdout
        protections = [e['protections'] for e in (first, copied) for e in e.events if e['event'] == 'sandbox']
        assert protections[0] == protections[1]
        # two workers copying each other at once: no deadlock, both go on
        both = [threading.Thread(target=executor.copy_worker, args=pair) for pair in ((0, 1), (1, 0))]
        for thread in both:
            thread.start()
        for thread in both:
            thread.join(timeout=30)
        assert not any(thread.is_alive() for thread in both)
        for slot in (0, 1):
            assert executor.run(job(probe), slot).events[-1]['event'] == 'completed'
        zygote = executor._zygote
        workers = ours(processes_running('sandbox.worker'))
        assert len(workers) >= 2
        closing = time.monotonic()
    assert time.monotonic() - closing < 10, 'the zygote waited for something that never ended'
    assert zygote.poll() is not None
    assert tree_state(root) == before
    wait_until(lambda: not leftover_processes(), 5, interval=0.1)
    assert leftover_processes() == []
    # killed as the executor closes; on a loaded machine the last ones may take a moment to exit
    wait_until(lambda: not set(processes_running('sandbox.worker')) & set(workers), 10, interval=0.1)
    assert not set(processes_running('sandbox.worker')) & set(workers), 'a worker or a copy outlived the executor'
    assert set(glob.glob(os.path.join(tempfile.gettempdir(), 'scicode-steps-*'))) <= roots_before
