#!/usr/bin/env python
"""Evaluate models on SciCode: `python run.py configs/eval_scicode.py`."""
import sys

from opencompass_scicode.cli import main

if __name__ == '__main__':
    sys.exit(main())
