"""Running untrusted step code: host-side executors, worker processes, the lock-down of each
step process, the harness inside it, and the stand-in `scicode` package tests import (runtime/).

Kept import-light: worker processes import modules of this package.
"""
from pathlib import Path

# The stand-in `scicode` package that test processes import.
RUNTIME_DIR = Path(__file__).resolve().parent / 'runtime'

__all__ = ['RUNTIME_DIR']
