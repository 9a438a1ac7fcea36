"""Processes we start find this package where we found it, installed or not."""
import os
from pathlib import Path

# The directory holding `opencompass_scicode`.
PACKAGE_PARENT = str(Path(__file__).resolve().parent.parent.parent)


def with_package(pythonpath=None, first=()) -> str:
    """A PYTHONPATH value: `first`, then the package's directory, then `pythonpath`."""
    return os.pathsep.join(p for p in (*first, PACKAGE_PARENT, pythonpath) if p)
