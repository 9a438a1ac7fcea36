"""Entry point of a task process: `python -m opencompass_scicode.tasks TASK_CONFIG`."""
import sys
import traceback

from ..errors import UserFacingError
from . import EXIT_FAILED, load_task


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print('usage: python -m opencompass_scicode.tasks TASK_CONFIG', file=sys.stderr)
        return 2
    try:
        return load_task(argv[0]).run()
    except UserFacingError as exc:
        print(f'error: {exc}', file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return 130
    except Exception:
        traceback.print_exc()
        return EXIT_FAILED


if __name__ == '__main__':
    sys.exit(main())
