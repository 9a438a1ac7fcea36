"""The official-style baseline: each step program as a file run by a new `python`, pass = exit code 0.

Its test processes import the stand-in `scicode` package in official_like_runtime/,
which pays the official modules' imports and reads the targets file named in
SCICODE_H5_PATH, as the official `process_hdf5_to_tuple` reads its own.
"""
import os
from pathlib import Path

from opencompass_scicode.sandbox.scripts import ScriptRunner

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = Path(__file__).resolve().parent / 'official_like_runtime'


def official_like_runner(targets_path, timeout):
    return ScriptRunner(timeout=timeout, env={
        'PYTHONPATH': os.pathsep.join([str(RUNTIME), str(ROOT)]),
        'SCICODE_H5_PATH': str(targets_path)})
