"""What every runner shares: launching tasks in dependency order, a few at a time, with live progress.

A runner knows tasks only by their spec (tasks/contract.py). A task starts once
every task it depends on within the same launch has ended well; if one of them
stopped, it is `not run`. At most max_num_workers tasks holding a slot run at once;
a task that only waits on an API (an inference task of an API model) holds none, so
all of them start at once, bounded by their endpoints' request limits instead.
Subclasses say how a task is started, watched and stopped (a local process, a Slurm
job); the progress display is the same for all (board.py).
"""
import importlib
import time
import traceback

from rich.console import Console
from typing import Any

from ..errors import UserFacingError
from ..tasks.contract import EXIT_FAILED, EXIT_INTERRUPTED, TaskStatus, status_of
from ..utils.checks import check_number
from .board import TaskBoard


class BaseRunner:
    """max_num_workers: tasks holding a slot in flight at once (inference tasks of API models hold
    none); debug: run tasks in this process, one by one, with tracebacks. Subclasses implement
    start/poll/stop and may add `refresh(handles)` (one look at all tasks in flight before they
    are polled) and `where(handle)` (e.g. 'job 12 RUNNING') to the progress line. The launch
    loop holds the handles of the tasks in flight."""

    poll_interval = 0.25
    # Whether inference tasks under this runner also score problems as they finish (early
    # evaluation), on the CPUs and memory the task holds.
    early_evaluation = True

    def __init__(self, max_num_workers=2, debug=False):
        self.max_num_workers = check_number('max_num_workers', max_num_workers, whole=True, at_least=1, example=2)
        self.debug = debug
        self.console = Console(stderr=True)

    # ------------------------------------------------------------ to implement
    def start(self, spec, parallel) -> Any:
        """Start a task; return a handle. `parallel`: how many tasks of this launch may run at once."""
        raise NotImplementedError

    def refresh(self, handles) -> None:
        """Called before the tasks in flight are polled, with their handles."""

    def poll(self, handle) -> TaskStatus | None:
        """A TaskStatus once the task has ended for good, else None."""
        raise NotImplementedError

    def stop(self, handles) -> None:
        """Stop these tasks, which are still running."""
        raise NotImplementedError

    def where(self, handle) -> str:
        """Where the task of `handle` runs, in a few words for the board ('' where there is nothing
        to add)."""
        return ''

    def pause(self) -> None:
        """Between two looks at the tasks in flight."""
        time.sleep(self.poll_interval)

    def run_inline(self, spec) -> TaskStatus:
        """The spec's `python -m MODULE ARGS` command, run by MODULE's main() in this process."""
        module, args = _module_command(spec.command)
        self.console.print(f'[bold]running {spec.name} in-process (--debug)')
        start = time.monotonic()
        try:
            returncode = importlib.import_module(module + '.__main__').main(args, standalone=False)
        except UserFacingError as exc:
            self.console.print(f'[red]error: {exc}')
            returncode = EXIT_FAILED
        except KeyboardInterrupt:
            returncode = EXIT_INTERRUPTED
            raise
        except Exception:
            traceback.print_exc()
            returncode = EXIT_FAILED
        return status_of(spec, returncode, time.monotonic() - start, log_path='(in-process)')


    def check(self) -> None:
        """Raise a UserFacingError if tasks cannot be started at all (before any work is done)."""

    def describe(self, spec) -> str:
        """How this runner would start the task (for --dry-run)."""
        return ' '.join(spec.command)

    # ------------------------------------------------------------ the loop
    def launch(self, specs, title='') -> list[TaskStatus]:
        """Run TaskSpecs; return a TaskStatus per spec, in order."""
        if not specs:
            return []
        if self.debug:
            return self._launch_inline(specs)
        # How many tasks run side by side at most (a task scoring with a pool of its own divides
        # the CPUs by it): those holding a slot, a few at a time, and all the others.
        slotless = sum(not s.takes_slot for s in specs)
        parallel = max(1, min(self.max_num_workers, len(specs) - slotless) + slotless)
        names = {s.name for s in specs}
        waiting = list(specs)
        running = {}                  # name -> (spec, handle)
        ended = {}                    # name -> TaskStatus
        with TaskBoard(self.console, specs, title) as board:
            try:
                while waiting or running:
                    for spec in list(waiting):
                        deps = [d for d in spec.depends_on if d in names]
                        stopped = [d for d in deps if d in ended and ended[d].stopped_others]
                        if stopped:
                            waiting.remove(spec)
                            ended[spec.name] = TaskStatus.not_run(spec, stopped)
                        elif all(d in ended for d in deps) and (not spec.takes_slot
                                                                or _slots_held(running) < self.max_num_workers):
                            waiting.remove(spec)
                            running[spec.name] = (spec, self.start(spec, parallel))
                    self.refresh([handle for _, handle in running.values()])
                    for name, (spec, handle) in list(running.items()):
                        status = self.poll(handle)
                        if status is not None:
                            ended[name] = status
                            del running[name]
                    board.show(self._where(running), ended)
                    if waiting or running:
                        self.pause()
            except KeyboardInterrupt:
                self.stop([handle for _, handle in running.values()])
                raise
            board.show(self._where(running), ended)
        return [ended[s.name] for s in specs]

    def _where(self, running):
        return {name: self.where(handle) for name, (_, handle) in running.items()}

    def _launch_inline(self, specs):
        ended = {}
        for spec in specs:
            stopped = [d for d in spec.depends_on if d in ended and ended[d].stopped_others]
            ended[spec.name] = TaskStatus.not_run(spec, stopped) if stopped else self.run_inline(spec)
        return [ended[s.name] for s in specs]


def _module_command(command):
    if len(command) < 3 or command[1] != '-m':
        raise UserFacingError(f'--debug runs `python -m MODULE ...` commands in-process; got {command}')
    return command[2], list(command[3:])


def _slots_held(running):
    """How many of the tasks running hold a slot (tasks/contract.py, TaskSpec.takes_slot)."""
    return sum(1 for spec, _ in running.values() if spec.takes_slot)
