"""Entry point of a task process: `python -m opencompass_scicode.tasks TASK_FILE`."""
import importlib
import os
import sys
import traceback

from ..errors import NoSpaceError, UserFacingError, out_of_space
from ..utils.lifeline import stop_on_sigterm, stop_with_parent
from .base import BaseTask
from .contract import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_NO_SPACE, read_task_file, task_code

USAGE = 'usage: python -m opencompass_scicode.tasks TASK_FILE'


def task_class(stage: str, action=None) -> type:
    """The class of a task of `stage` (and `action`), imported."""
    module, name = task_code(stage, action)
    return getattr(importlib.import_module(module), name)


def load_task(path) -> BaseTask:
    """The task the task file at `path` describes, built from its typed record."""
    record = read_task_file(path)
    return task_class(record.task.stage, getattr(record, 'action', None))(record)


def main(argv=None, standalone=True) -> int:
    """`standalone`: this process exists for the task (not --debug inside run.py), so it
    stops when whoever started it dies, and takes SIGTERM as an interrupt."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(USAGE, file=sys.stderr)
        return 2
    if standalone:
        stop_with_parent()
        stop_on_sigterm()
    try:
        return load_task(argv[0]).main()
    except NoSpaceError as exc:
        return _no_space(exc)
    except UserFacingError as exc:
        print(f'error: {exc}', file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception as exc:
        if out_of_space(exc):
            return _no_space(NoSpaceError(exc.filename or 'a file of the run'))
        traceback.print_exc()
        return EXIT_FAILED


def _no_space(exc):
    """The reason in the task's log, if the log itself can still be written (it is often on the
    full file system); run.py says it to the user, from the exit code."""
    try:
        print(f'error: {exc}', file=sys.stderr, flush=True)
    except OSError:
        pass
    return EXIT_NO_SPACE


if __name__ == '__main__':
    code = main()
    # The task has finished and closed everything it opened (pools, servers, files). Tearing
    # down the interpreter's modules (the API SDK, the scientific stack) would cost another
    # 0.1-0.2 s of CPU, paid by every task as it ends, often while other tasks start.
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:                # a log on a full disk cannot take the last lines: the code still says why
        os._exit(code)
