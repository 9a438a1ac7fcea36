"""`python -m opencompass_scicode.environments NAME [--data-dir DIR]`: build (once) and check the
scoring environment NAME in DIR's cache, as a run scoring in it would; prints its versions."""
import argparse
import sys

from ..datasets.files import DEFAULT_DATA_DIR
from ..errors import EXIT_OK, EXIT_USER_ERROR, UserFacingError
from .build import NAMES, ensure


def main(argv=None) -> int:
    """`python -m opencompass_scicode.environments NAME ...`: build scoring environments; the exit
    code."""
    p = argparse.ArgumentParser(prog='python -m opencompass_scicode.environments',
                                description='Build and check a scoring environment.')
    p.add_argument('names', nargs='+', choices=NAMES, metavar='NAME', help=f'one of {", ".join(NAMES)}')
    p.add_argument('--data-dir', default=DEFAULT_DATA_DIR, help='the data directory whose cache holds it')
    args = p.parse_args(argv)
    try:
        for name in args.names:
            env = ensure(name, args.data_dir, say=print)
            print(f'{name}: {env.python} ({", ".join(f"{k} {v}" for k, v in env.versions.items())})')
    except UserFacingError as exc:
        print(f'error: {exc}', file=sys.stderr)
        return EXIT_USER_ERROR
    return EXIT_OK


if __name__ == '__main__':
    sys.exit(main())
