"""The run's step pool on a machine (pool/server.py, pool/machine.py): every task of the run on the
machine feeds it, each program runs once, a task that dies takes its work with it, the pool going
away costs no verdict, and nothing but the run's own tasks can hand it work."""
import os
import signal
import socket
import struct
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from helpers import ROOT, alive, descendants, gold_predictions, processes_mentioning, tiny_dataset, wait_until
from opencompass_scicode.errors import NoSpaceError
from opencompass_scicode.evaluation import SciCodeEvaluator
from opencompass_scicode.evaluation.regenerate import ensure_targets
from opencompass_scicode.evaluation.sharing import LocalVerdicts
from opencompass_scicode.pool.machine import MachinePool, socket_path
from opencompass_scicode.pool.server import _below, trusted_peer
from opencompass_scicode.utils.lifeline import PARENT_ENV

SLEEP = 'import time as _t\n_t.sleep({s})\n'


@pytest.fixture(autouse=True)
def _pools_stopped_after(tmp_path):
    """The pools a test started (for its run root, tmp_path / 'run') stop when it ends, as they do
    when run.py ends, rather than idling on for seconds below this process: their workers would
    count as leftovers of the next test that checks this process's workers (test_sandbox's)."""
    yield
    servers = processes_mentioning(str(socket_path(tmp_path / 'run')))
    below = {pid for server in servers for pid in descendants(server)}
    for server in servers:
        os.kill(server, signal.SIGTERM)
    assert wait_until(lambda: not alive([*servers, *below]), 30), alive([*servers, *below])


def _programs(tiny_data, prefix=''):
    """(dataset, targets, predictions): the gold code of the tiny problems, after `prefix`."""
    ds = tiny_dataset(tiny_data)
    targets = ensure_targets(ds)
    preds = gold_predictions(ds)
    for record in preds.values():
        record['code'] = prefix + record['code']
    return ds, targets, preds


def _submit(pool, evaluator, ds, targets, preds):
    """Submit every step; the records arrive in the returned list."""
    jobs, _ = evaluator.jobs(ds, preds, targets)
    got = []
    pool.submit(evaluator.submissions(jobs, targets.path, pool.durations, got.append,
                                      verdicts=pool.claims))
    return got


def _peer(conn):
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize('3i'))
    return struct.unpack('3i', creds)[0]


def _server_of(pool):
    """The pid of the server a MachinePool is connected to (its end of the socket says)."""
    pool.start()
    return _peer(pool._conn)


def _serving(run_root):
    """The pid of the pool serving the run here now, or None (asks the socket; starts nothing)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        try:
            conn.connect(str(socket_path(run_root)))
        except OSError:
            return None
        return _peer(conn)


def _alive(pid):
    return bool(alive([pid]))


def _started(run_root):
    """How many pools were started for the run here (each says so in the log)."""
    log = run_root / 'logs' / 'pool' / f'{socket.gethostname()}.log'
    return log.read_text().count(' workers on ') if log.exists() else 0


def _close_within(pool, seconds):
    closer = threading.Thread(target=pool.close, daemon=True)
    closer.start()
    closer.join(seconds)
    assert not closer.is_alive(), f'the pool did not answer within {seconds} s'


def test_tasks_share_one_pool_each_program_runs_once_with_its_own_limits(tiny_data, tmp_path):
    run_root = tmp_path / 'run'
    ds, targets, preds = _programs(tiny_data, SLEEP.format(s=1))
    first, second = (MachinePool(run_root, claims=LocalVerdicts()) for _ in range(2))
    evaluator = SciCodeEvaluator(timeout=60)
    a = _submit(first, evaluator, ds, targets, preds)
    b = _submit(second, evaluator, ds, targets, preds)       # the same programs, while they run
    # the same programs under a tighter limit are other programs: they time out, beside the others
    hurried = MachinePool(run_root, claims=LocalVerdicts())
    c = _submit(hurried, SciCodeEvaluator(timeout=0.5), ds, targets, preds)
    for pool in (first, second, hurried):
        pool.close()
    assert sorted((r.step_id, r.status) for r in a) == sorted((r.step_id, r.status) for r in b) == [
        ('900.1', 'pass'), ('900.2', 'pass'), ('901.1', 'pass')]
    for step_id in ('900.1', '900.2', '901.1'):
        ran = [r for r in a + b if r.step_id == step_id and not r.shared]
        assert len(ran) == 1, (step_id, a, b)          # run once, for both tasks
    assert {r.status for r in c} == {'timeout'}
    assert _started(run_root) == 1                        # one pool for the three of them


CLIENT = '''
import sys
sys.path[:0] = [{here!r}, {tests!r}, {root!r}]
from test_machine_pool import _programs, _submit, SLEEP
from opencompass_scicode.evaluation import SciCodeEvaluator
from opencompass_scicode.evaluation.sharing import LocalVerdicts
from opencompass_scicode.pool.machine import MachinePool
from pathlib import Path
ds, targets, preds = _programs(Path({data!r}), SLEEP.format(s=300))
pool = MachinePool(Path({run!r}), claims=LocalVerdicts())
_submit(pool, SciCodeEvaluator(timeout=600), ds, targets, preds)
print('submitted', flush=True)
import time
time.sleep(600)
'''


def test_a_task_that_dies_takes_its_programs_with_it(tiny_data, tmp_path):
    run_root = tmp_path / 'run'
    script = CLIENT.format(here=str(Path(__file__).resolve().parent), tests=str(ROOT / 'tests'), root=str(ROOT),
                           data=str(tiny_data), run=str(run_root))
    # a task as the local runner starts it: run.py (here, this process) is the one the pool watches
    env = dict(os.environ, **{PARENT_ENV: str(os.getpid())})
    dying = subprocess.Popen([sys.executable, '-c', script], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert dying.stdout.readline().strip() == 'submitted'
        pool = MachinePool(run_root, claims=LocalVerdicts())
        server = _server_of(pool)
        # both workers busy with its 300 s programs (the zygote, 2 workers and 2 step processes),
        # a third one queued
        wait_until(lambda: len(descendants(server)) >= 5, 60, interval=0.2)
        assert len(descendants(server)) >= 5, descendants(server)
    finally:
        dying.kill()
        dying.wait()
    # Another task's programs run now: the dead task's were stopped, not left to sleep 300 s.
    ds, targets, preds = _programs(tiny_data)
    got = _submit(pool, SciCodeEvaluator(timeout=60), ds, targets, preds)
    _close_within(pool, 120)
    assert sorted((r.step_id, r.status) for r in got) == [('900.1', 'pass'), ('900.2', 'pass'), ('901.1', 'pass')]
    assert _started(run_root) == 1 and _alive(server)        # the same pool served both


def test_the_pool_going_away_costs_no_verdict(tiny_data, tmp_path):
    run_root = tmp_path / 'run'
    ds, targets, preds = _programs(tiny_data, SLEEP.format(s=3))
    pool = MachinePool(run_root, claims=LocalVerdicts())
    got = _submit(pool, SciCodeEvaluator(timeout=60), ds, targets, preds)
    server = _server_of(pool)
    assert not got                                    # its programs still run
    os.kill(server, signal.SIGKILL)                  # as the OOM killer would
    _close_within(pool, 120)
    assert sorted((r.step_id, r.status) for r in got) == [('900.1', 'pass'), ('900.2', 'pass'), ('901.1', 'pass')]
    successor = _serving(run_root)
    assert successor not in (None, server) and _alive(successor) and not _alive(server)   # a new pool took over


def test_a_pool_that_died_while_idle_is_replaced_for_the_next_programs(tiny_data, tmp_path):
    """Its receiver saw the end with nothing waiting: the next submit connects anew (before, it
    sent into the dead connection, and close waited for ever)."""
    run_root = tmp_path / 'run'
    ds, targets, preds = _programs(tiny_data)
    pool = MachinePool(run_root, claims=LocalVerdicts())
    first = _submit(pool, SciCodeEvaluator(timeout=60), ds, targets, preds)
    assert wait_until(lambda: len(first) == 3, 120), first
    server = _server_of(pool)
    os.kill(server, signal.SIGKILL)
    assert wait_until(lambda: not pool._receiver.is_alive(), 30)     # it saw the end, nothing waiting
    ds, targets, preds = _programs(tiny_data, 'x = 1\n')        # other programs: not settled yet
    again = _submit(pool, SciCodeEvaluator(timeout=60), ds, targets, preds)
    _close_within(pool, 120)
    assert sorted((r.step_id, r.status) for r in again) == [('900.1', 'pass'), ('900.2', 'pass'), ('901.1', 'pass')]


class _DiskFull(LocalVerdicts):
    """Verdicts that cannot be kept: the run's disk is full."""

    def put(self, key, record):
        raise NoSpaceError('/run/cache/verdicts/x.json')


@pytest.mark.parametrize('where', ['machine', 'own workers'])
def test_a_verdict_that_cannot_be_kept_stops_the_pool_and_reaches_whoever_waits(tiny_data, tmp_path, where):
    """The reported hang: the disk filled while a verdict was kept, the thread that called `done`
    died, and close() waited for ever on a Condition. Now close() (and any later submit) raises the
    error, at once, and run.py gets it as one line."""
    ds, targets, preds = _programs(tiny_data)
    evaluator = SciCodeEvaluator(timeout=60)
    if where == 'machine':
        pool = MachinePool(tmp_path / 'run', claims=_DiskFull())
    else:
        pool = evaluator.pool(_DiskFull())
    jobs, _ = evaluator.jobs(ds, preds, targets)
    pool.submit(evaluator.submissions(jobs, targets.path, pool.durations, lambda record: None,
                                      verdicts=pool.claims))
    failed = []

    def close():
        try:
            pool.close()
        except NoSpaceError as exc:
            failed.append(exc)
    closer = threading.Thread(target=close, daemon=True)
    closer.start()
    closer.join(120)
    assert not closer.is_alive(), 'close() still waits'
    assert failed and 'no space left on device: /run/cache/verdicts/x.json' in str(failed[0])


def test_a_worker_thread_that_raises_is_named_to_whoever_waits():
    """Any other error of a pool's thread reaches the waiter as one line naming the thread."""
    from opencompass_scicode.errors import ThreadFailed
    from opencompass_scicode.pool.step_pool import Submission, StepPool
    from opencompass_scicode.sandbox.executor import StepRun

    class Executor:          # runs nothing: every program's run is the same
        workers, threads, loaded, copy_s, watch = 1, 1, None, None, set()

        def start(self):
            pass

        def prefetch(self, jobs):
            pass

        def run(self, job, slot):
            return StepRun(0, False, 0.0)

        def close(self):
            pass

    def broken(run, copy):
        raise KeyError('the caller\'s bug')
    job = type('Job', (), {'modules': (), 'step_id': '1.1'})()
    pool = StepPool(Executor)
    pool.submit([Submission('k', job, 1.0, broken)])
    with pytest.raises(ThreadFailed, match="step slot 0 stopped: KeyError: .the caller's bug"):
        pool.close()
    with pytest.raises(ThreadFailed):
        pool.submit([Submission('k2', job, 1.0, broken)])


def test_a_pool_folder_someone_else_could_enter_is_refused(tmp_path, monkeypatch):
    import tempfile
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path))
    assert socket_path(tmp_path / 'run').parent.stat().st_mode & 0o777 == 0o700     # made here: fine
    folder = tmp_path / f'scicode-pool-{os.getuid()}'
    folder.chmod(0o777)                              # as if made by another user of the machine first
    with pytest.raises(OSError, match='not a folder of this user'):
        socket_path(tmp_path / 'run')
    folder.rmdir()
    (tmp_path / 'elsewhere').mkdir(mode=0o700)
    folder.symlink_to(tmp_path / 'elsewhere')        # or a link to a folder of theirs
    with pytest.raises(OSError, match='not a folder of this user'):
        socket_path(tmp_path / 'run')


def test_only_the_runs_own_processes_may_hand_the_pool_work(tmp_path):
    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])
    try:
        assert _below(child.pid, os.getpid()) and not _below(os.getpid(), child.pid)
    finally:
        child.kill()
        child.wait()
    # A peer below the server (as a step is, below its workers) is refused: here the server is
    # this process and the peer is this process too.
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with ours, theirs:
        assert not trusted_peer(ours)


ATTACK = textwrap.dedent('''
    import glob, os, pickle, socket, struct
    class Payload:
        def __reduce__(self):
            return (os.system, ({command!r},))
    data = pickle.dumps({{'submit': [('k', Payload(), 1.0)]}})
    for path in [{known!r}] + glob.glob('/tmp/scicode-pool-*/*.sock'):
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            print('connected', flush=True)
            s.sendall(struct.pack('!Q', len(data)) + data)
            s.recv(1)
        except OSError as exc:
            print('refused:', type(exc).__name__, flush=True)
''')


@pytest.mark.parametrize('layers', ['all', 'same user'])
def test_a_step_cannot_hand_the_pool_work(tiny_data, tmp_path, layers):
    """A step tries to send every pool on the machine a job whose unpickling would run a command
    outside the sandbox. As the same user (no uid of its own, as for anyone but root) and with the
    network open it reaches the sockets: the pools must refuse it (it cannot read their key)."""
    marker = tmp_path / 'escaped'
    run_root = tmp_path / 'run'
    ds, targets, preds = _programs(tiny_data)
    attack = ATTACK.format(command=f'touch {marker}', known=str(socket_path(run_root)))
    preds['900.1']['code'] = attack + preds['900.1']['code']
    off = {} if layers == 'all' else dict(drop_privileges=False, isolate_network=False)
    pool = MachinePool(run_root, claims=LocalVerdicts())
    got = _submit(pool, SciCodeEvaluator(timeout=60, **off), ds, targets, preds)
    _close_within(pool, 120)
    assert pool.protections.get('landlock'), pool.protections      # files stay restricted either way
    assert not marker.exists()
    assert {r.step_id: r.status for r in got}['901.1'] == 'pass'     # the pool still serves
    attempt = next(r for r in got if r.step_id == '900.1')
    if layers == 'same user':     # it did reach the pool: the key, not the socket, stopped it
        assert 'connected' in attempt.stdout, attempt.stdout
    elif pool.protections.get('uid'):      # under a uid of its own it cannot even reach it
        assert 'connected' not in attempt.stdout and 'refused' in attempt.stdout, attempt.stdout


def test_the_pool_lives_as_long_as_run_py_not_the_task_s_parent(monkeypatch):
    """A task forked by the warm launcher has the launcher as its parent, which ends with its
    stage: the pool it starts watches run.py, so the next stage's tasks find it still there."""
    from opencompass_scicode.pool.machine import _watched_pid
    from opencompass_scicode.utils.lifeline import RUN_ENV
    monkeypatch.setenv(PARENT_ENV, '4242')
    monkeypatch.setenv(RUN_ENV, '4141')
    assert _watched_pid() == 4141
    monkeypatch.delenv(RUN_ENV)
    assert _watched_pid() == 4242                    # a task started by run.py itself


def test_the_pool_tells_the_task_when_a_worker_starts_each_of_its_steps(tiny_data, tmp_path):
    """What a scoring progress line names a long step by (tasks/evaluate.py)."""
    ds, targets, preds = _programs(tiny_data)
    heard, verdicts = {}, {}
    SciCodeEvaluator(timeout=60).evaluate(ds, preds, targets, run_root=tmp_path / 'run',
                                          on_start=lambda sid, sample: heard.setdefault(sid, time.monotonic()),
                                          on_step=lambda r: verdicts.setdefault(r.step_id, time.monotonic()))
    assert sorted(heard) == sorted(verdicts) == ['900.1', '900.2', '901.1']
    assert all(heard[sid] <= verdicts[sid] for sid in heard)
