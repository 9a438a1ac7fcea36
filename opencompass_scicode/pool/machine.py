"""A task's side of the machine's step pool (server.py): the same interface as StepPool.

`MachinePool(run_root, ...)` connects to the run's pool on this machine,
starting it if no task has yet (under a lock, so that two tasks never start
two). Programs are sent with what they are expected to take; each run comes
back to the submission's `done`, as StepPool calls it. What the runs took is
remembered here, by the task, in its data directory's timings.

If the server goes away (killed, or stopped for being idle while this task was
about to use it), the programs still waiting are sent to a new one; after
RETRIES failed attempts in a row they come back as harness failures, never as
a verdict.

Nothing here waits without an end: the thread that receives the runs watches the
server through its socket (the kernel closes it when the server dies), and if
that thread stops on an error (a `done` that could not keep its verdict on a
full disk), whoever waits for it (close, the next submit) raises that error
instead of waiting for runs that will never come back.
"""
import fcntl
import hashlib
import os
import secrets
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from ..errors import ThreadFailed
from ..utils.lifeline import PARENT_ENV, RUN_ENV
from ..utils.pythonpath import with_package
from . import wire
from .timings import StepDurations
from .step_pool import NoClaims, PassesOnFailure, cost_of, harness_failure, protections_of, take_in

RETRIES = 3
START_TIMEOUT_S = 60.0
POLL_S = 0.5            # how often a waiter looks again whether the thread it waits on still lives
HOST = socket.gethostname()


def socket_path(run_root) -> Path:
    """Where the run's pool on this machine listens: the machine's own temporary directory (a run
    directory may be on a file system shared by many machines), in a folder only we can enter."""
    folder = Path(tempfile.gettempdir()) / f'scicode-pool-{os.getuid()}'
    folder.mkdir(mode=0o700, exist_ok=True)
    held = folder.lstat()
    if not stat.S_ISDIR(held.st_mode) or held.st_uid != os.getuid() or held.st_mode & 0o077:
        # someone else made it first (the temporary directory is shared): our key would be theirs
        raise OSError(f'{folder} is not a folder of this user\'s alone; remove it, or set TMPDIR to a '
                      f'folder of your own')
    name = hashlib.sha256(f'{Path(run_root).resolve()}\0{HOST}'.encode()).hexdigest()[:24]
    return folder / f'{name}.sock'


def _watched_pid():
    """The process whose end stops the server: run.py (a local task knows it), or this process
    when run.py runs tasks itself (--debug); none in a cluster job (the server stops when idle)."""
    parent = os.environ.get(RUN_ENV) or os.environ.get(PARENT_ENV, '')
    if parent.isdigit():
        return int(parent)
    return 0 if os.environ.get('SLURM_JOB_ID') else os.getpid()


class MachinePool(PassesOnFailure):
    """run_root: the run directory; durations: StepDurations of the task's data directory;
    claims: verdicts known already (`settled(key)`: not sent at all)."""

    def __init__(self, run_root, durations=None, claims=None, log_path=None):
        self.run_root = Path(run_root)
        self.path = socket_path(run_root)
        self.durations = durations or StepDurations(None)
        self.claims = claims or NoClaims()
        self.log_path = Path(log_path) if log_path else self.run_root / 'logs' / 'pool' / f'{HOST}.log'
        self.protections = {}
        self._conn = None
        self._send_lock = threading.Lock()
        self._changed = threading.Condition()
        self._waiting = {}          # key -> submissions not answered yet (the first one was sent)
        self._observed, self._imported = [], {}
        self._receiver = None
        self._failure = None        # what stopped the receiver, raised to whoever waits on it
        self._closed = False

    # ------------------------------------------------------------ as StepPool
    def start(self) -> None:
        """Connect to the machine's pool now (starting it if no task has), so its workers import
        while the caller goes on."""
        with self._changed:
            self._ensure_connected()

    def submit(self, submissions) -> None:
        """Send `submissions` to the machine's pool; returns at once (each `done` is called when its
        run comes back)."""
        with self._changed:
            if self._closed:
                raise RuntimeError('submit after close')
            self._raise_failure()
            fresh = take_in(self._waiting, self.claims, submissions)
            if not fresh:
                return
            self._ensure_connected()
        self._send(fresh)

    def close(self) -> None:
        """Wait until every program sent has come back, then let go of the server. Raises what
        stopped the receiver, if it stopped on an error, once it has (never waits for it)."""
        with self._changed:
            self._closed = True
            while self._waiting and self._failure is None:
                if not self._receiver.is_alive():     # it answers or fails everything before it ends
                    self._failure = ThreadFailed('the step pool\'s receiver', RuntimeError(
                        f'it ended with {len(self._waiting)} programs unanswered'))
                    break
                self._changed.wait(POLL_S)
            conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.shutdown(socket.SHUT_RDWR)      # the receiver sees the end and returns
            except OSError:
                pass                                 # the server went first
            conn.close()
        if self._receiver is not None:
            self._receiver.join()                    # it returns at the shutdown just above
        with self._changed:
            self._raise_failure()
        self.durations.save(self._observed, self._imported)

    # ------------------------------------------------------------ the connection
    def _ensure_connected(self):
        """(Caller holds _changed.) A connection, and the thread that reads what comes back."""
        if self._conn is None:
            self._conn = self._open()
            self._receiver = threading.Thread(target=self._receive, name='pool-receiver', daemon=True)
            self._receiver.start()

    def _open(self):
        """A connection to the run's pool here, starting the pool if nobody has."""
        for _ in range(RETRIES):
            conn = _try_connect(self.path) or self._start_server()
            if conn is not None:
                return conn
        raise OSError(f'could not reach or start the step pool at {self.path} (see {self.log_path})')

    def _start_server(self):
        with open(f'{self.path}.lock', 'w') as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)        # one task starts it; the others connect
            conn = _try_connect(self.path)
            if conn is not None:
                return conn
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            cmd = [sys.executable, '-m', 'opencompass_scicode.pool.server', '--socket', str(self.path),
                   '--watch', str(_watched_pid()), '--run-root', str(self.run_root)]
            if self.durations.path:
                cmd += ['--durations', str(self.durations.path)]
            env = dict(os.environ, PYTHONPATH=with_package(os.environ.get('PYTHONPATH')))
            key = secrets.token_hex(32)
            _write_private(key_path(self.path), key)
            with open(self.log_path, 'ab') as log:
                # A session of its own: a Ctrl-C or a stop aimed at the starting task is not for it.
                # The key goes through a pipe: a command line or an environment can be read in /proc.
                server = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=log, stderr=log, env=env,
                                          start_new_session=True)
            server.stdin.write(f'{key}\n'.encode())
            server.stdin.close()
            deadline = time.monotonic() + START_TIMEOUT_S
            while time.monotonic() < deadline and server.poll() is None:
                conn = _try_connect(self.path)
                if conn is not None:
                    return conn
                time.sleep(0.02)
            return None

    def _send(self, items):
        message = {'submit': [(item.key, item.job, item.expected_s) for item in items]}
        try:
            with self._send_lock:
                wire.send(self._conn, message)
        except (OSError, AttributeError):
            pass            # the server has gone: the receiver sends them to the next one

    def _receive(self):
        try:
            self._receive_all()
        except BaseException as exc:    # noqa: B036 - passed on to whoever waits for the runs
            with self._changed:
                self._failure = ThreadFailed.passing_on('the step pool\'s receiver', exc)
                self._changed.notify_all()

    def _receive_all(self):
        conn = self._conn
        while True:
            try:
                message = wire.receive(conn)
            except (OSError, EOFError, ValueError):
                message = None
            if message is None:
                if not self._reconnect(conn):
                    return
                conn = self._conn
                continue
            if message.get('started'):          # a slot of the server took it up
                with self._changed:
                    starting = [item.started for item in self._waiting.get(message['key'], ()) if item.started]
                for started in starting:
                    started()
                continue
            self._answer(message['key'], message['run'], message['copy'])

    def _answer(self, key, run, copy):
        with self._changed:
            waiting = self._waiting.pop(key, [])
        for i, item in enumerate(waiting):
            measured = item.done(run, copy or i > 0)
            if i == 0 and not copy and measured:
                self._observed.append((item.job.step_id, key, cost_of(run)))
                self._imported.update(run.imported)
        self.protections = self.protections or protections_of(run)
        with self._changed:
            self._changed.notify_all()

    def _reconnect(self, lost):
        """The server went away: send what still waits to a new one. False when this receiver is
        done: the connection was let go on purpose, or nothing waits (the next submit connects
        anew, with a receiver of its own), or no new server could be had (what waits then comes
        back as a harness failure)."""
        with self._changed:
            if self._conn is not lost:
                return False
            if not self._waiting:
                self._conn = None
                lost.close()
                return False
            try:
                self._conn = self._open()
            except OSError as exc:
                self._conn, error = None, exc
                failed, self._waiting = self._waiting, {}
            else:
                failed = None
                items = [subs[0] for subs in self._waiting.values()]
        if failed is None:
            self._send(items)
            return True
        run = harness_failure(error)
        for subs in failed.values():
            for i, item in enumerate(subs):
                item.done(run, i > 0)
        with self._changed:
            self._changed.notify_all()
        return False


def key_path(path) -> Path:
    """The pool's key: who can read it may hand the pool work. Steps cannot (another uid, or
    Landlock), so a step that reaches the socket is turned away before a byte of it is read."""
    return Path(f'{path}.key')


def _write_private(path, text):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, 'w') as fh:
        fh.write(text)


def _try_connect(path):
    """A connection that has shown the pool's key, or None."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        key = key_path(path).read_text().strip()
        sock.connect(str(path))
        sock.sendall(key.encode())
        return sock
    except OSError:
        sock.close()
        return None
