"""What every task shares: its spec, its run directory, skipping finished work, logging.

A task runs in its own process (`python -m opencompass_scicode.tasks TASK_FILE`)
or, with --debug, inside run.py. Its exit code is its whole answer to the runner.
"""
import contextlib
import sys
from pathlib import Path
from typing import Iterator

from ..utils.runlock import hold_for_task
from ..utils.workdir import RunDir
from .contract import EXIT_SKIPPED, TaskFile


@contextlib.contextmanager
def second_to_first() -> Iterator[None]:
    """Around clean-up in a `finally`: an error it raises while another one is on its way out (a
    full disk met again by the clean-up's own writes) is dropped, so that the user is told of the
    first, which names the write that could not be made."""
    failing = sys.exc_info()[1] is not None
    try:
        yield
    except Exception:
        if not failing:
            raise


class BaseTask:
    """`cfg`: the task file's typed record (tasks/contract.py)."""

    def __init__(self, cfg: TaskFile) -> None:
        self.cfg = cfg
        self.spec = cfg.task
        self.run_dir = RunDir(cfg.work_dir, cfg.timestamp)

    @property
    def name(self) -> str:
        """The task's name (`infer/<model>`, ...)."""
        return self.spec.name

    @property
    def progress_path(self) -> Path:
        """Where the task writes its progress for the runner's board."""
        return Path(self.spec.progress_path)

    def is_complete(self) -> bool:
        """True if the outputs exist and were made from today's inputs and settings."""
        raise NotImplementedError

    def run(self) -> int:
        """Do the work; return an exit code (tasks/contract.py)."""
        raise NotImplementedError

    def main(self) -> int:
        """Run the task unless its outputs are complete already; the exit code (EXIT_SKIPPED then)."""
        self._hold = hold_for_task(self.run_dir.root)
        if self.is_complete():
            self.log('outputs complete; nothing to do')
            return EXIT_SKIPPED
        return self.run()

    def log(self, msg) -> None:
        """Write `msg` to the task's log (its stderr), named by the task; lost when the disk is
        full."""
        try:
            print(f'[{self.name}] {msg}', file=sys.stderr, flush=True)
        except OSError:     # the log's disk is full: the line is lost, the task's next write stops it
            pass
