"""The step pool of one machine, for one run: every task on the machine feeds it.

Started by the first task of the run on this machine that scores steps
(machine.py), it serves the others over a Unix socket in the machine's
temporary directory: one queue ordered by cost (the longest known step first),
one set of workers (one per CPU), each program run once however many tasks
ask for it. Before, every task had a pool of its own: their workers imported
the same modules again and their queues competed for the CPUs.

Only the run's own tasks may hand it work: a peer must be of this user, not
below the server (a step is), and show the key its starter handed it on stdin
(machine.key_path, a file only this user can read and steps cannot); nothing
of a peer is unpickled before that. A task sends its programs as StepJobs (each with its own limits and its
targets as a reader) and gets each one's StepRun back; what a run means is the
task's business (evaluation/). A task that goes away takes its queued programs
with it. The server stops when the run.py it belongs to dies (`--watch`), on
SIGTERM or SIGINT, or once no task has used it for `--idle` seconds; its
workers, and their steps, never outlive it.

    python -m opencompass_scicode.pool.server --socket PATH [--watch PID] [--idle S]
        [--workers N] [--durations FILE] [--run-root DIR] < KEY
"""
import argparse
import hmac
import os
import select
import signal
import socket
import struct
import sys
import threading
import time
from typing import Callable

from ..sandbox.executor import ForkServerExecutor, StepRun
from ..utils.procs import read_proc
from ..utils.runlock import hold_for_task
from . import wire
from .timings import StepDurations
from .step_pool import StepPool, Submission

IDLE_S = 5.0


def _below(pid, ancestor):
    while pid > 1:
        if pid == ancestor:
            return True
        proc = read_proc(pid)
        pid = proc.parent if proc is not None else 0
    return False


def trusted_peer(conn) -> bool:
    """A process of this user that is not one of ours: a step (below our workers) never is."""
    pid, uid, _ = struct.unpack('3i', conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                     struct.calcsize('3i')))
    return uid == os.getuid() and not _below(pid, os.getpid())


class _Client:
    """One connected task: its socket, and a lock so that slot threads send whole messages."""

    def __init__(self, conn):
        self.conn = conn
        self.lock = threading.Lock()

    def deliver(self, key) -> Callable[[StepRun | None, bool], bool]:
        """The `done` of a submission of this client's program `key`: sends the run back to the
        task."""
        def done(run, copy):
            try:
                with self.lock:
                    wire.send(self.conn, {'key': key, 'run': run, 'copy': copy})
            except OSError:
                pass          # it has gone; withdraw() forgets the rest of its work
            return False      # the task remembers what the run took, not the pool
        return done

    def started(self, key) -> Callable[[], None]:
        """The `started` of this client's program `key`: tells the task its worker took it up."""
        def tell():
            try:
                with self.lock:
                    wire.send(self.conn, {'key': key, 'started': True})
            except OSError:
                pass
        return tell


class PoolServer:
    def __init__(self, path, workers, key, durations=None, idle_s=IDLE_S):
        self.path = path
        self.key = key.encode()
        self.idle_s = idle_s
        # each job carries its task's limits (sandbox/job.py)
        self.pool = StepPool(lambda: ForkServerExecutor(workers=workers),
                             durations=StepDurations(durations))
        self.clients = set()
        self.last_seen = time.monotonic()
        self.lock = threading.Lock()
        self.closing = False
        self.listener = None
        self._inode = None

    def listen(self) -> None:
        """Listen on the socket (only this user may connect), start the workers and accept tasks."""
        if os.path.lexists(self.path):
            os.unlink(self.path)       # a dead server's; the one starting us holds the spawn lock
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        os.chmod(self.path, 0o600)
        self._inode = os.stat(self.path).st_ino
        self.listener.listen(128)
        self.pool.start()              # the workers import the scientific stack meanwhile
        threading.Thread(target=self._accept, name='pool-accept', daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return                 # closed: the server is stopping
            if not trusted_peer(conn):
                conn.close()
                continue
            with self.lock:
                if self.closing:
                    conn.close()
                    continue
                client = _Client(conn)
                self.clients.add(client)
            threading.Thread(target=self._serve, args=(client,), name='pool-client', daemon=True).start()

    def _shows_key(self, conn):
        conn.settimeout(10)
        try:
            shown = wire.exactly(conn, len(self.key))
        except OSError:
            return False
        conn.settimeout(None)
        return shown is not None and hmac.compare_digest(shown, self.key)

    def _serve(self, client):
        try:
            if not self._shows_key(client.conn):
                return
            while True:
                message = wire.receive(client.conn)
                if message is None:
                    break
                self.pool.submit([Submission(key, job, expected_s, client.deliver(key), owner=client,
                                             started=client.started(key))
                                  for key, job, expected_s in message['submit']])
        except (OSError, EOFError, ValueError, KeyError, TypeError):
            pass
        finally:
            self.pool.withdraw(client)
            client.conn.close()
            with self.lock:
                self.clients.discard(client)
                self.last_seen = time.monotonic()

    def idle(self) -> bool:
        """True (and no longer reachable) once nobody has used the pool for idle_s seconds."""
        with self.lock:
            if self.clients or self.pool.busy():
                self.last_seen = time.monotonic()
                return False
            if time.monotonic() - self.last_seen < self.idle_s:
                return False
            self.unreachable()
            return True

    def unreachable(self) -> None:
        """Take the socket's name first (only if it is still ours: a new server may hold it by
        now), then stop listening: a task that cannot connect starts a new server."""
        self.closing = True
        try:
            if os.stat(self.path).st_ino == self._inode:
                os.unlink(self.path)
        except OSError:
            pass
        if self.listener is not None:
            self.listener.close()


def _watch_fd(pid):
    """A descriptor readable once `pid` has ended (None: nothing to watch), or -1 if it has."""
    if not pid:
        return None
    try:
        return os.pidfd_open(pid)
    except ProcessLookupError:
        return -1


def serve(args) -> int:
    """Run the pool server as `args` say until it is stopped or idle; the exit code."""
    if args.run_root:
        _hold = hold_for_task(args.run_root)       # a new run.py -r waits for this server too
    watched = _watch_fd(args.watch)
    if watched == -1:
        return 1
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    key = sys.stdin.readline().strip()
    if not key:
        print('step pool: no key on stdin', file=sys.stderr, flush=True)
        return 2
    print(f'step pool: {args.workers} workers on {args.socket} (pid {os.getpid()})', file=sys.stderr, flush=True)
    server = PoolServer(args.socket, args.workers, key, args.durations, args.idle)
    server.listen()
    while not stop.is_set():
        ready, _, _ = select.select([watched] if watched is not None else [], [], [], 0.5)
        if ready:
            print('step pool: run.py has ended; stopping', file=sys.stderr, flush=True)
            break
        if server.idle():
            server.pool.close()
            print('step pool: idle; stopped', file=sys.stderr, flush=True)
            return 0
    # Stopped from outside: whatever runs is abandoned (the workers die with this process).
    server.unreachable()
    return 1


def main(argv=None) -> int:
    """`python -m opencompass_scicode.pool.server ...`: the exit code of serve."""
    p = argparse.ArgumentParser(prog='python -m opencompass_scicode.pool.server')
    p.add_argument('--socket', required=True)
    p.add_argument('--watch', type=int, default=0, help='stop when this process (run.py) ends')
    p.add_argument('--idle', type=float, default=IDLE_S)
    p.add_argument('--workers', type=int, default=len(os.sched_getaffinity(0)))
    p.add_argument('--durations', help='the remembered step durations (their import costs plan the workers)')
    p.add_argument('--run-root', help='hold the run, as its tasks do, while serving it')
    return serve(p.parse_args(argv))


if __name__ == '__main__':
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
