"""Host side of step execution: hands step jobs to worker processes.

- `forkserver` (default): a few long-lived workers import the scientific
  stack once and fork a sandboxed child per step.
- `subprocess`: a fresh worker (a new Python, nothing preloaded) per step,
  like the official harness's one `python` per step.
Both run the same harness under the same sandbox, so they give the same verdicts.
"""
import json
import os
import pickle
import secrets
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from ..utils.fingerprint import value_digest
from ..utils.pythonpath import with_package
from .job import Limits, StepJob
from .leftovers import sweep_once, sweep_worker

__all__ = ['EXECUTORS', 'ForkServerExecutor', 'Limits', 'StepJob', 'StepRun', 'SubprocessExecutor']

THREAD_VARS = ('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS',
               'NUMEXPR_NUM_THREADS', 'VECLIB_MAXIMUM_THREADS')
# Imported by fast workers at start; a step's own dependencies are imported by the
# worker that first runs one of its steps (worker_step.py, import_for_children).
# Not h5py: the host reads the targets and hands them over.
BASE_PRELOAD = ('numpy', 'numpy.random', 'math', 'cmath', 'scicode.compare.cmp', 'scicode.parse.parse')


@dataclass
class StepRun:
    returncode: Optional[int]
    timed_out: bool
    duration_s: float
    stdout: str = ''
    stderr: str = ''
    events: list = field(default_factory=list)
    nonce: str = ''
    error: Optional[str] = None          # the harness itself failed
    worker_died: bool = False            # ... because its worker died under the step (killed from outside)
    process_limit_hit: bool = False
    import_s: float = 0.0                # of duration_s: the worker importing the step's modules
    busy_s: Optional[float] = None       # the worker's time on it, information after the verdict included
    imported: dict = field(default_factory=dict)   # module -> (seconds, watched modules it brought, clean)
    stack: str = ''      # the step's Python stack (fault handler's text) when it was stopped for its time
    targets_digest: str = ''   # of the expected values the step was given (pickled_targets)


def worker_env(threads) -> dict[str, str]:
    """The environment of a worker process: `threads` threads for the numerical libraries, bytecode
    caching on."""
    env = dict(os.environ)
    env['PYTHONPATH'] = with_package(env.get('PYTHONPATH'))
    env.pop('PYTHONDONTWRITEBYTECODE', None)   # workers start faster with cached bytecode
    env['MPLBACKEND'] = 'Agg'
    for var in THREAD_VARS:
        env.setdefault(var, str(threads))
    return env


def pickled_targets(job) -> tuple[bytes, str]:
    """(the step's expected values pickled, their digest): read here so that workers need neither
    h5py nor the file. The digest (utils/fingerprint.py, value_digest) names the values whatever
    library versions pickled them: a step whose targets changed says so in its record."""
    targets = list((job.targets() if job.targets is not None else None) or [])
    return pickle.dumps(targets, protocol=pickle.HIGHEST_PROTOCOL), value_digest(targets)


def parse_events(text, nonce) -> list[dict[str, Any]]:
    """The harness's events in a step's report `text`; a line that is no JSON is `garbled`, one
    without this run's `nonce` `forged`."""
    events = []
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            events.append({'event': 'garbled', 'detail': line[:200]})
            continue
        if not isinstance(event, dict) or event.get('nonce') != nonce:
            events.append({'event': 'forged', 'detail': line[:200]})
            continue
        events.append(event)
    return events


class _Worker:
    """A channel to one worker process: one pickle per job and per result.

    Both ends are our own processes (step code runs in the worker's children
    and never sees this channel); pickle carries the targets as they are.
    The worker first announces its pid: the host kills it by a pidfd (never a
    pid that may have been reused) when it does not answer in time.
    """
    GRACE_S = 60      # beyond a job's timeout: starting, importing and clearing up after the step

    def __init__(self, preload, threads, channel=None, python=None):
        self.control = None            # a socket to hand the worker a channel for a copy of itself
        self.pid = self.pidfd = None   # from the worker's announcement
        if channel is not None:        # forked by a zygote; we hold the pipe ends
            self.proc, (self.jobs, self.results, self.control) = None, channel
        else:
            cmd = [python or sys.executable, '-m', 'opencompass_scicode.sandbox.worker']
            if preload:
                cmd += ['--preload', ','.join(preload)]
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         env=worker_env(threads))
            self.jobs, self.results = self.proc.stdin, self.proc.stdout
        # Written and read with deadlines, on the descriptors (the file objects only close them).
        os.set_blocking(self.jobs.fileno(), False)

    def run(self, payload) -> dict[str, Any]:
        """The worker's result; {'error': ..., 'worker_lost': True} if it died or did not answer in time."""
        waited = payload.get('limits', {}).get('timeout', 0) + self.GRACE_S
        started = time.monotonic()
        deadline = started + waited
        try:
            _send(self.jobs.fileno(), pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL), deadline)
            if self.pidfd is None:
                self.pid = _receive(self.results.fileno(), deadline)['pid']
                self.pidfd = os.pidfd_open(self.pid)
            return _receive(self.results.fileno(), deadline)
        except TimeoutError:
            fate = 'killed and replaced' if self.kill() else 'replaced'
            return {'error': f'the worker did not answer within {waited:.0f} s (the timeout and '
                             f'{self.GRACE_S:.0f} s of grace); it was {fate}',
                    'worker_lost': True, 'duration_s': round(time.monotonic() - started, 3)}
        except (EOFError, pickle.UnpicklingError):      # gone, maybe halfway through its answer
            return {'error': 'worker died', 'worker_lost': True, 'worker_died': True}
        except (BrokenPipeError, OSError) as exc:
            return {'error': f'worker died: {exc}', 'worker_lost': True, 'worker_died': True}

    def kill(self) -> bool:
        """False if we cannot: a zygote's worker that has not announced itself yet (it will
        find its channel closed when it gets going, and leave)."""
        try:
            if self.pidfd is not None:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            elif self.proc is not None:
                self.proc.kill()
            else:
                return False
        except ProcessLookupError:
            pass
        return True

    def lost(self) -> None:
        """After it died or was killed: close our ends and sweep what it left (see leftovers.py)."""
        self.close()
        pid = self.pid or (self.proc.pid if self.proc is not None else None)
        if pid is not None:
            sweep_worker(pid)

    def close(self) -> None:
        for stream in (self.jobs, self.results, self.control):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None
        if self.proc is not None:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _wait_for(fd, deadline, write=False):
    """Until `fd` can be read (or written); TimeoutError at `deadline`."""
    wait = max(0.0, deadline - time.monotonic())
    readable, writable, _ = select.select([] if write else [fd], [fd] if write else [], [], wait)
    if not (readable or writable):
        raise TimeoutError


def _send(fd, data, deadline):
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:          # the pipe is full: the worker reads it when it can
            _wait_for(fd, deadline, write=True)


class _Reader:
    """Just enough of a file for pickle.load, over a pipe, every read done by `deadline`."""

    def __init__(self, fd, deadline):
        self.fd, self.deadline = fd, deadline

    def read(self, size) -> bytes:
        chunks = []
        while size > 0:
            _wait_for(self.fd, self.deadline)
            chunk = os.read(self.fd, size)
            if not chunk:
                break                      # the end: pickle raises on the short read
            chunks.append(chunk)
            size -= len(chunk)
        return b''.join(chunks)

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def readline(self) -> bytes:
        line = bytearray()
        while not line.endswith(b'\n'):
            char = self.read(1)
            if not char:
                break
            line += char
        return bytes(line)


def _receive(fd, deadline):
    return pickle.load(_Reader(fd, deadline))


def _channel():
    """(our ends, the worker's ends) of a job pipe, a result pipe and a control socket."""
    jobs_r, jobs_w = os.pipe()
    results_r, results_w = os.pipe()
    ours, theirs = socket.socketpair()
    return ((os.fdopen(jobs_w, 'wb'), os.fdopen(results_r, 'rb'), ours),
            (jobs_r, results_w, theirs.detach()))


def _spawn_zygote(count, preload, threads, python=None):
    """One process imports the stack once and forks `count` workers; returns their channels."""
    ours, theirs = zip(*(_channel() for _ in range(count)))
    cmd = [python or sys.executable, '-m', 'opencompass_scicode.sandbox.worker',
           '--channels', ','.join(':'.join(map(str, fds)) for fds in theirs)]
    if preload:
        cmd += ['--preload', ','.join(preload)]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, env=worker_env(threads),
                            pass_fds=[fd for fds in theirs for fd in fds])
    for fds in theirs:
        for fd in fds:
            os.close(fd)
    return proc, list(ours)


class _BaseExecutor:
    name = None
    PREFETCH_BYTES = 64 * 1024 * 1024
    copy_s = None          # seconds to copy a worker (copy_worker), None where it cannot be done

    def __init__(self, workers=1, preload=(), threads=None, python=None):
        """`python`: the interpreter workers run (a scoring environment's; default this one). It
        needs only the standard library and this package's sandbox, which its path is given."""
        self.python = python
        self._prefetched = {}     # id(job) -> (job, its pickled targets); the job keeps its id unique
        self._prefetch_thread = None
        self._stop_prefetch = threading.Event()
        self.workers = max(1, workers)
        cpus = os.cpu_count() or 1
        self.threads = threads or max(1, cpus // self.workers)
        self.preload = tuple(dict.fromkeys(BASE_PRELOAD + tuple(preload)))

    def prefetch(self, jobs) -> None:
        """Read the targets of `jobs`, in this order, in the background (up to PREFETCH_BYTES):
        while workers start up, a core is idle."""
        if self._prefetch_thread is not None:
            self._prefetch_thread.join()       # the previous batch (bounded work) ...
        self._prefetched.clear()               # ... and what it read for steps that did not run

        def read():
            total = 0
            for job in jobs:
                if self._stop_prefetch.is_set():
                    return
                try:
                    blob = pickled_targets(job)
                except Exception:
                    continue          # read again, and reported, when the job runs
                total += len(blob[0])
                if total > self.PREFETCH_BYTES:
                    return
                self._prefetched[id(job)] = (job, blob)
        # Joined in close(): a thread left holding h5py's lock would hang the interpreter's exit.
        self._prefetch_thread = threading.Thread(target=read, name='targets-prefetch', daemon=True)
        self._prefetch_thread.start()

    def _stop_prefetching(self):
        self._stop_prefetch.set()
        if self._prefetch_thread is not None:
            self._prefetch_thread.join()
            self._prefetch_thread = None
        self._prefetched.clear()

    def _take_prefetched(self, job):
        entry = self._prefetched.pop(id(job), None)
        return entry[1] if entry is not None and entry[0] is job else None

    def _payload(self, job):
        """(nonce, payload), or (nonce, a result saying why the job cannot run)."""
        nonce = secrets.token_hex(16)
        try:
            targets = self._take_prefetched(job) or pickled_targets(job)
        except Exception as exc:
            return nonce, {'error': f'could not read the targets of step {job.step_id}: '
                                    f'{type(exc).__name__}: {exc}', 'duration_s': 0.0}
        targets, digest = targets
        return nonce, job.payload(nonce, targets, digest)

    @staticmethod
    def _to_run(result, nonce):
        if result.get('error'):
            return StepRun(None, False, result.get('duration_s', 0.0), error=result['error'], nonce=nonce,
                           worker_died=result.get('worker_died', False))
        run = StepRun(result['returncode'], result['timed_out'], result['duration_s'],
                      result['stdout'], result['stderr'], parse_events(result['report'], nonce), nonce)
        run.process_limit_hit = result.get('process_limit_hit', False)
        run.import_s = result.get('import_s', 0.0)
        run.busy_s = result.get('busy_s', run.duration_s)
        run.imported = result.get('imported', {})
        run.stack = result.get('stack', '')
        return run

    def run(self, job, slot=0) -> StepRun:
        """Run `job` on worker `slot`; one caller per slot at a time."""
        nonce, payload = self._payload(job)
        result = payload if 'error' in payload else self._execute(job, payload, slot)
        run = self._to_run(result, nonce)
        run.targets_digest = payload.get('targets_digest', '')
        return run

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()

    def start(self) -> None:
        """Start the workers now (else on the first run)."""
        sweep_once()            # what workers killed outright before left behind

    def abandon(self, slot, job) -> None:
        """Stop `job` if worker `slot` runs it now, where that can be done (see ForkServerExecutor)."""

    def close(self) -> None:
        """Stop what runs beside the workers (prefetching targets)."""
        self._stop_prefetching()


class ForkServerExecutor(_BaseExecutor):
    name = 'forkserver'
    copy_s = 0.02

    def start(self) -> None:
        super().start()
        self._zygote, channels = _spawn_zygote(self.workers, self.preload, self.threads, self.python)
        self._slots = [_Worker(self.preload, self.threads, channel) for channel in channels]
        self._busy = [threading.Lock() for _ in channels]
        self._running_lock = threading.Lock()
        self._running = [None] * self.workers         # the job each worker runs (abandon)
        self._abandoned = [False] * self.workers
        self.loaded = [set(self.preload) for _ in range(self.workers)]
        self.watch = set()        # modules some job needs: workers say which they hold

    def _execute(self, job, payload, slot):
        payload['watch'] = sorted(self.watch)
        with self._busy[slot]:
            worker = self._slots[slot]
            with self._running_lock:
                self._running[slot] = job
            result = worker.run(payload)
            with self._running_lock:
                self._running[slot] = None
                abandoned, self._abandoned[slot] = self._abandoned[slot], False
            self.loaded[slot].update(job.modules)
            self.loaded[slot].update(result.get('loaded', ()))   # and what those imports pulled in
            if result.get('worker_lost') or abandoned:
                worker.lost()                  # replace a dead or stuck worker by a standalone one
                self._slots[slot] = _Worker(self.preload, self.threads, python=self.python)
                self.loaded[slot] = set(self.preload)
        return result

    def abandon(self, slot, job) -> None:
        """Stop `job` if worker `slot` runs it now (nobody wants its verdict any more): the worker
        is killed, its step with it, and replaced as a lost worker is."""
        with self._running_lock:
            if self._running[slot] is job and self._slots[slot].kill():
                self._abandoned[slot] = True

    def copy_worker(self, source, target) -> bool:
        """Replace worker `target` by a copy of worker `source`, imports included (about
        10 ms, where importing them again can take a second). Called by target's caller;
        waits for source's current step (and for a copy being made of target). False if
        source cannot be copied."""
        ours, theirs = _channel()
        first, second = sorted((source, target))     # a fixed order: two copies at once cannot deadlock
        with self._busy[first], self._busy[second]:
            worker = self._slots[source]
            try:
                if worker.control is None:
                    raise OSError('a standalone worker')
                socket.send_fds(worker.control, [b'c'], list(theirs))
                result = worker.run({'op': 'clone'})
            except OSError as exc:
                result = {'error': str(exc)}
            for fd in theirs:
                os.close(fd)
            if result.get('error'):
                for end in ours:
                    end.close()
                return False
            old, self._slots[target] = self._slots[target], _Worker(self.preload, self.threads, ours)
            self.loaded[target] = set(self.loaded[source])
        old.close()
        return True

    def close(self) -> None:
        self._stop_prefetching()
        for worker in getattr(self, '_slots', []):
            worker.close()
        self._slots = []
        zygote = getattr(self, '_zygote', None)
        if zygote is not None:
            try:
                zygote.wait(timeout=30)
            except subprocess.TimeoutExpired:
                zygote.kill()
                zygote.wait()


class SubprocessExecutor(_BaseExecutor):
    """A new Python for every step, nothing preloaded."""
    name = 'subprocess'

    loaded = None       # nothing carries over from one step to the next

    def _execute(self, job, payload, slot):
        payload['modules'] = []
        worker = _Worker((), self.threads, python=self.python)
        result = {'worker_lost': True}      # if run() itself fails
        try:
            result = worker.run(payload)
        finally:
            if result.get('worker_lost'):
                worker.lost()
            else:
                worker.close()
        return result


EXECUTORS = {'forkserver': ForkServerExecutor, 'subprocess': SubprocessExecutor}
