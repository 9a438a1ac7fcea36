"""Runs tasks as local processes, with live progress (runners/base.py).

Tasks are forked from a warm launcher (runners/warm.py) that has imported their
code once; `warm_start=False` starts each in a new interpreter instead.
"""
import os
import select
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..tasks.contract import TaskStatus, status_of
from ..utils.lifeline import PARENT_ENV, RUN_ENV
from ..utils.parallel import PARALLEL_ENV
from ..utils.procs import drain, kill, wake_on_child_exit
from ..registry import register
from .base import BaseRunner
from .warm import launcher_for


@dataclass
class _Process:
    spec: object
    proc: Optional[subprocess.Popen]     # None for a task forked by the launcher
    started: float
    pid: int


@register
class LocalRunner(BaseRunner):
    """max_num_workers: tasks holding a slot running at once (an inference task of an API model
    holds none: all of them run at once); debug: run in-process, serially, with tracebacks;
    warm_start: fork tasks from one process that has imported their code (False: a new
    interpreter per task, as `python -m` would start it by hand)."""

    def __init__(self, max_num_workers=2, debug=False, warm_start: bool = True):
        super().__init__(max_num_workers, debug)
        self.warm_start = warm_start
        self._wakeup = None         # read end of the pipe SIGCHLD writes to, while launching
        self._launcher = None       # while launching, with warm_start

    def launch(self, specs, title='') -> list[TaskStatus]:
        if self.debug or not self.warm_start or not specs:
            return self._launch(specs, title)
        preload = list(dict.fromkeys(name for spec in specs for name in spec.preload))
        logs = os.path.commonpath([os.path.dirname(os.path.abspath(spec.log_path)) for spec in specs])
        self._launcher, owned = launcher_for(preload, dict(os.environ, **specs[0].env), logs)
        try:
            return self._launch(specs, title)
        finally:
            if owned:
                self._launcher.close()
            self._launcher = None

    def _launch(self, specs, title):
        # A task that ends wakes the loop at once (SIGCHLD) rather than at its next look: the
        # tasks that wait for it, and the run's end, come that much sooner.
        if threading.current_thread() is not threading.main_thread():
            return super().launch(specs, title)
        with wake_on_child_exit() as self._wakeup:
            try:
                return super().launch(specs, title)
            finally:
                self._wakeup = None

    def pause(self) -> None:
        """Wait until a task may have ended (a child exits, the launcher says so) or the poll
        interval passes."""
        watched = [w for w in (self._wakeup, self._launcher) if w is not None]
        if not watched:
            time.sleep(self.poll_interval)
            return
        ready, _, _ = select.select(watched, [], [], self.poll_interval)
        if self._launcher in ready:
            self._launcher.read()
        if self._wakeup in ready:
            drain(self._wakeup)

    def start(self, spec, parallel) -> '_Process':
        log_path = Path(spec.log_path)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, **spec.env)
        env[PARALLEL_ENV] = str(parallel)
        env[PARENT_ENV] = env[RUN_ENV] = str(os.getpid())
        if self._launcher is not None and self._launcher.fits(spec.command, env):
            pid = self._launcher.start(spec.name, spec.command, env, log_path)
            if pid is not None:
                return _Process(spec, None, time.monotonic(), pid)
        with open(log_path, 'ab') as log:
            # A session of its own: Ctrl-C reaches run.py alone, which then stops each task.
            proc = subprocess.Popen(spec.command, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        return _Process(spec, proc, time.monotonic(), proc.pid)

    def poll(self, handle) -> TaskStatus | None:
        returncode = self._returncode(handle)
        if returncode is None:
            return None
        return status_of(handle.spec, returncode, time.monotonic() - handle.started)

    def _returncode(self, handle):
        return handle.proc.poll() if handle.proc is not None else self._launcher.returncode(handle.pid)

    def stop(self, handles) -> None:
        kill([h.pid for h in handles], signal.SIGINT, group=True, denied_ok=True)
        deadline = time.monotonic() + 5
        for handle in handles:
            while self._returncode(handle) is None and time.monotonic() < deadline:
                time.sleep(0.05)
            if self._returncode(handle) is None:
                kill(handle.pid, group=True, denied_ok=True)
                if handle.proc is not None:
                    handle.proc.wait()
