"""Runs tasks as local processes, with live progress (runners/base.py)."""
import os
import select
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..tasks.contract import status_of
from ..utils.lifeline import PARENT_ENV
from ..utils.parallel import PARALLEL_ENV
from ..utils.procs import kill
from .base import BaseRunner


@dataclass
class _Process:
    spec: object
    proc: subprocess.Popen
    started: float


class LocalRunner(BaseRunner):
    """max_num_workers: tasks running at once; debug: run in-process, serially, with tracebacks."""

    def __init__(self, max_num_workers=2, debug=False):
        super().__init__(max_num_workers, debug)
        self._wakeup = None         # read end of the pipe SIGCHLD writes to, while launching

    def launch(self, specs, title=''):
        # A task that ends wakes the loop at once (SIGCHLD) rather than at its next look: the
        # tasks that wait for it, and the run's end, come that much sooner. The signal only
        # writes a byte to a pipe (set_wakeup_fd, done by the interpreter in C): a handler that
        # took a lock (threading.Event.set) could land while the loop holds that same lock and
        # stop the run for good.
        if threading.current_thread() is not threading.main_thread():
            return super().launch(specs, title)
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        os.set_blocking(write_fd, False)
        previous_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
        previous = signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        self._wakeup = read_fd
        try:
            return super().launch(specs, title)
        finally:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL if previous is None else previous)
            signal.set_wakeup_fd(previous_fd)
            self._wakeup = None
            os.close(read_fd)
            os.close(write_fd)

    def pause(self):
        if self._wakeup is None:
            time.sleep(self.poll_interval)
            return
        ready, _, _ = select.select([self._wakeup], [], [], self.poll_interval)
        if ready:
            try:
                while os.read(self._wakeup, 512):
                    pass
            except BlockingIOError:
                pass

    def start(self, spec, parallel):
        log_path = Path(spec.log_path)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, **spec.env)
        env[PARALLEL_ENV] = str(parallel)
        env[PARENT_ENV] = str(os.getpid())
        with open(log_path, 'ab') as log:
            # A session of its own: Ctrl-C reaches run.py alone, which then stops each task.
            proc = subprocess.Popen(spec.command, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        return _Process(spec, proc, time.monotonic())

    def poll(self, handle):
        returncode = handle.proc.poll()
        if returncode is None:
            return None
        return status_of(handle.spec, returncode, time.monotonic() - handle.started)

    def stop(self, handles):
        procs = [h.proc for h in handles]
        kill([proc.pid for proc in procs], signal.SIGINT, group=True, denied_ok=True)
        deadline = time.monotonic() + 5
        for proc in procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                kill(proc.pid, group=True, denied_ok=True)
