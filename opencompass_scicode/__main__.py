"""`python -m opencompass_scicode CONFIG`: the same command line as `python run.py CONFIG`."""
import sys

from .cli import main

if __name__ == '__main__':
    sys.exit(main(prog='python -m opencompass_scicode'))
