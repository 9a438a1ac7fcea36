"""A task stops when the process that started it dies.

run.py may be killed outright (SIGKILL, a closed terminal, an OOM kill). Its
tasks would go on writing into the run directory while a new `run.py -r`
starts on the same files. So a task watches its parent: once it is gone,
the task is interrupted as Ctrl-C would interrupt it (what it finished is
saved), and killed if it does not stop within a grace period. Its workers see
their channels close and stop too.

SIGTERM (a cancelled Slurm job, a plain `kill`) stops a task the same way:
as Ctrl-C, so that what the task holds (a model server it started, its
workers) is stopped by its own clean-up instead of being left behind.
"""
import os
import signal
import threading
import time

from .procs import kill

PARENT_ENV = 'OPENCOMPASS_SCICODE_PARENT_PID'      # the process whose end stops the task
# run.py, for what serves the whole run (the step pool): a task forked by the warm launcher
# (runners/warm.py) has the launcher as its parent, which ends with its stage, not the run.
RUN_ENV = 'OPENCOMPASS_SCICODE_RUN_PID'


def _signal_own(sig):
    # A task started in a session of its own leads its process group: stop its workers with it.
    kill(os.getpid(), sig, group=os.getpgrp() == os.getpid())


def stop_with_parent(poll_s=0.5, grace_s=10.0) -> None:
    """Watch the parent from a daemon thread; return at once."""
    expected = os.environ.get(PARENT_ENV)
    parent = int(expected) if expected and expected.isdigit() else os.getppid()

    def watch():
        while os.getppid() == parent:
            time.sleep(poll_s)
        _signal_own(signal.SIGINT)
        time.sleep(grace_s)
        _signal_own(signal.SIGKILL)

    threading.Thread(target=watch, name='parent-watch', daemon=True).start()


def stop_on_sigterm() -> None:
    """SIGTERM becomes SIGINT to this process: whatever handles Ctrl-C (asyncio's handler,
    KeyboardInterrupt) handles it, and every `finally` runs."""
    signal.signal(signal.SIGTERM, lambda signum, frame: signal.raise_signal(signal.SIGINT))
