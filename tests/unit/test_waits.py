"""No wait without an end: every blocking wait of the package is bounded, or is listed here with
the reason it ends anyway (it watches its peer's liveness, or what it waits for is bounded).

The waits are found by reading the source (tests/blocking_waits.py); a new one that is neither
bounded nor listed fails this test, and so does a listed one that is no longer there."""
from pathlib import Path

from blocking_waits import waits
from helpers import ROOT

PACKAGE = ROOT / 'opencompass_scicode'

PEER_GONE_EOF = 'reads a pipe or socket whose other end is a process of the run: its death closes it (EOF)'
FLOCK = ('a file lock, held for a bounded piece of work, and released by the kernel when its holder '
         'dies however it dies')
AFTER_KILL = 'waits for a process it has just SIGKILLed (or whose whole group it has)'
AFTER_SELECT = 'the descriptor is readable (select said so) or non-blocking: returns at once'
THREAD_JOIN = 'joins a thread, which ends however it ends (its own waits are bounded or listed here)'

REVIEWED = {
    ('datasets/files.py', 'download_wheel', 'subprocess.run(cmd, stdout=sys.stderr, stderr=sys.stderr)'):
        '`--prepare-data` only, in the foreground: pip bounds its own network waits (timeout, retries) '
        'and the user sees its progress bar',
    ('evaluation/eager.py', 'EagerEvaluator._loop', 'self.items.get()'):
        'the inference task\'s `finally` calls finish(), which puts the None that ends it; a daemon '
        'thread, gone with its process',
    ('evaluation/eager.py', 'EagerEvaluator.finish', 'self.thread.join()'):
        THREAD_JOIN + '; it ends at the None finish() put just before',
    ('evaluation/evaluator.py', 'SciCodeEvaluator.run_in_environments', 'thread.join()'):
        THREAD_JOIN + '; each scores the jobs in one environment (run_jobs), and what it raises is '
        'kept and raised here',
    ('evaluation/regenerate.py', 'regenerate', 'as_completed(futures)'):
        'each future runs one reference step in the sandbox, bounded by its time limit',
    ('evaluation/regenerate.py', 'regenerate', 'future.result()'):
        'from as_completed: the future is done',
    ('evaluation/regenerate.py', 'ensure_targets', 'fcntl.flock(lock, fcntl.LOCK_EX)'):
        FLOCK + ' (one regeneration of the targets at a time across tasks)',
    ('environments/build.py', 'ensure', 'fcntl.flock(lock, fcntl.LOCK_EX)'):
        FLOCK + ' (one build of a scoring environment at a time; each build command has its timeout)',
    ('inference/code_interpreter.py', 'CodeInterpreter.run_code', 'self._slots.get()'):
        'a free slot of the interpreter: each is given back after one code run, bounded by its timeout',
    ('launch/execute.py', 'run_plan', 'RunLock(run_dir.root).acquire()'):
        'not a lock\'s acquire: RunLock.acquire refuses at once, or waits for tasks at most 30 s',
    ('models/base.py', 'answer_limit', 'ANSWER_LIMIT.get()'):
        'not a wait: a ContextVar',
    ('models/base.py', 'answer_temperature', 'ANSWER_TEMPERATURE.get()'):
        'not a wait: a ContextVar',
    ('models/openai_api.py', 'OpenAIChatModel.achat', 'limiter.wait()'):
        'the rate limiter: sleeps until the next request is allowed, a bounded time',
    ('models/server.py', 'ModelServer.stop', 'proc.wait()'):
        AFTER_KILL + ' (or that SIGTERM could not reach: gone already)',
    ('models/server_guard.py', 'main', 'server.wait()'):
        'the guard lives as long as its server; a thread watches the task and stops the server\'s '
        'group when the task dies (SIGTERM, then SIGKILL)',
    ('pool/machine.py', 'MachinePool.close', 'self._receiver.join()'):
        THREAD_JOIN + '; it returns at the shutdown of its connection just before',
    ('pool/machine.py', 'MachinePool._start_server', 'fcntl.flock(lock, fcntl.LOCK_EX)'):
        FLOCK + ' (another task starting the pool, at most START_TIMEOUT_S)',
    ('pool/machine.py', 'MachinePool._receive_all', 'wire.receive(conn)'):
        PEER_GONE_EOF + ' (the pool\'s server); close() shuts it down to end it',
    ('pool/server.py', 'PoolServer._accept', 'self.listener.accept()'):
        'ends when the listener is closed (the server stopping)',
    ('pool/server.py', 'PoolServer._shows_key', 'wire.exactly(conn, len(self.key))'):
        'the socket has a 10 s timeout (settimeout just before)',
    ('pool/server.py', 'PoolServer._serve', 'wire.receive(client.conn)'):
        PEER_GONE_EOF + ' (a task)',
    ('pool/server.py', 'serve', 'sys.stdin.readline()'):
        PEER_GONE_EOF + ' (the task starting the pool hands it its key)',
    ('pool/timings.py', 'StepDurations.save', 'fcntl.flock(lock, fcntl.LOCK_EX)'):
        FLOCK + ' (a read and a write of the timings file)',
    ('pool/wire.py', 'exactly', 'sock.recv(min(left, 1 << 20))'):
        'the callers\' sockets: see the wire.receive and wire.exactly entries',
    ('pool/wire.py', 'receive', 'exactly(sock, _LENGTH.size)'):
        'the callers\' sockets: see the wire.receive entries',
    ('pool/wire.py', 'receive', 'exactly(sock, _LENGTH.unpack(header)[0])'):
        'the callers\' sockets: see the wire.receive entries',
    ('pool/step_pool.py', 'StepPool.close', 'thread.join()'):
        THREAD_JOIN + '; a slot thread that raises stops the others',
    ('runners/local.py', 'LocalRunner.stop', 'handle.proc.wait()'):
        AFTER_KILL,
    ('runners/warm.py', 'Launcher.read', 'os.read(self.fileno(), 65536)'):
        AFTER_SELECT,
    ('runners/warm.py', 'Launcher.close', 'self.proc.wait()'):
        AFTER_KILL,
    ('runners/warm_launcher.py', '_serve', 'os.read(0, 65536)'):
        AFTER_SELECT,
    ('sandbox/executor.py', '_Worker.close', 'self.proc.wait()'):
        AFTER_KILL,
    ('sandbox/executor.py', '_Reader.read', 'os.read(self.fd, size)'):
        AFTER_SELECT + ' (_wait_for, with the job\'s deadline)',
    ('sandbox/executor.py', '_receive', 'pickle.load(_Reader(fd, deadline))'):
        'reads through _Reader, which waits for each chunk until the deadline',
    ('sandbox/executor.py', '_BaseExecutor.prefetch', 'self._prefetch_thread.join()'):
        THREAD_JOIN + ' (it reads targets files, up to PREFETCH_BYTES)',
    ('sandbox/executor.py', '_BaseExecutor._stop_prefetching', 'self._prefetch_thread.join()'):
        THREAD_JOIN + ' (told to stop just before)',
    ('sandbox/executor.py', 'ForkServerExecutor.close', 'zygote.wait()'):
        AFTER_KILL,
    ('sandbox/scripts.py', 'ScriptRunner.run', 'proc.wait()'):
        AFTER_KILL,
    ('sandbox/worker.py', '_serve', 'pickle.load(jobs_in)'):
        PEER_GONE_EOF + ' (the worker\'s host)',
    ('sandbox/worker.py', '_zygote', 'os.read(lifeline, 1)'):
        'EOF once the last worker (each holds the pipe\'s write end) is gone, however it ended',
    ('sandbox/worker_clone.py', 'clone', 'socket.recv_fds(control, 16, 3)'):
        'the host sent the descriptors before asking for the copy (socket.send_fds, then the job)',
    ('sandbox/worker_clone.py', 'clone', 'os.waitpid(pid, 0)'):
        'the intermediate child of a double fork, which exits at once',
    ('sandbox/worker_clone.py', '_copy_started', 'os.read(ready_r, 1)'):
        AFTER_SELECT + ' (10 s)',
    ('sandbox/worker_step.py', '_reap_step', 'os.waitpid(pid, 0)'):
        AFTER_KILL + ' (the step\'s cgroups and everything below the worker)',
    ('sandbox/worker_watch.py', 'StepWatch.follow', 'os.waitpid(pid, 0)'):
        'the step\'s pidfd is readable: it has ended',
    ('sandbox/worker_watch.py', 'StepWatch.take_stack', 'os.read(self.stack_r, 65536)'):
        'read only once select() has said the pipe is readable, within STACK_WAIT_S of asking',
    ('sandbox/worker_watch.py', 'StepWatch._read', 'os.read(fd, 65536)'):
        AFTER_SELECT,
    ('sandbox/worker_watch.py', 'StepWatch.drain', 'os.read(fd, 65536)'):
        AFTER_SELECT,
    ('targets/fetch.py', '_one_fetcher', 'fcntl.flock(fd, fcntl.LOCK_EX)'):
        FLOCK + ' (one download at a time; each of its waits has a 30 s timeout)',
    ('utils/procs.py', 'drain', 'os.read(fd, 512)'):
        AFTER_SELECT,
    ('utils/runlock.py', 'hold_for_task', 'fcntl.flock(fh, fcntl.LOCK_SH)'):
        FLOCK + ' (a new run.py holds it only while it checks no earlier task runs, at most 30 s)',
}


def package_waits():
    found = []
    for path in sorted(PACKAGE.rglob('*.py')):
        found += waits(path.read_text(encoding='utf-8'), str(path.relative_to(PACKAGE)))
    return found


def test_every_blocking_wait_is_bounded_or_reviewed():
    found = package_waits()
    new = [f'{w.path}:{w.line} in {w.function or "<module>"}: {w.call}' for w in found if w.key not in REVIEWED]
    assert not new, ('blocking waits without a bound, not reviewed: give them a timeout (or make them '
                     'watch their peer), or add them to REVIEWED with the reason they end:\n  ' + '\n  '.join(new))
    gone = sorted(set(REVIEWED) - {w.key for w in found})
    assert not gone, f'reviewed waits no longer in the package (remove them from REVIEWED): {gone}'
    assert all(reason.strip() for reason in REVIEWED.values())


def test_the_reader_finds_unbounded_waits_and_passes_bounded_ones():
    source = '''
import fcntl, os, queue, select, subprocess, threading
def unbounded(cond, q, t, proc, sock, fd):
    cond.wait()
    q.get()
    t.join()
    proc.communicate()
    sock.recv(10)
    select.select([fd], [], [])
    os.waitpid(1, 0)
    fcntl.flock(fd, fcntl.LOCK_EX)
    subprocess.run(['true'])
class C:
    def bounded(self, cond, q, t, proc, fd, d):
        cond.wait(0.5)
        cond.wait(timeout=1)
        q.get(timeout=1)
        q.get(block=False)
        t.join(5)
        proc.communicate(timeout=3)
        select.select([fd], [], [], 0.5)
        os.waitpid(-1, os.WNOHANG)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        subprocess.run(['true'], timeout=5)
        d.get('key')
        ', '.join(['a'])
    def still_unbounded(self, cond):
        cond.wait(timeout=None)
'''
    found = waits(source, 'x.py')
    assert [w.call for w in found if w.function == 'unbounded'] == [
        'cond.wait()', 'q.get()', 't.join()', 'proc.communicate()', 'sock.recv(10)',
        'select.select([fd], [], [])', 'os.waitpid(1, 0)', 'fcntl.flock(fd, fcntl.LOCK_EX)',
        "subprocess.run(['true'])"]
    assert not [w for w in found if w.function == 'C.bounded']
    assert [w.call for w in found if w.function == 'C.still_unbounded'] == ['cond.wait(timeout=None)']
    assert found[0].line == 4 and found[0].key == ('x.py', 'unbounded', 'cond.wait()')
