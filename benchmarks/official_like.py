"""The official-style baseline: each step program as a file run by a new `python`, pass = exit code 0.

step_program writes that file as the official generator does: the program's prefix
(evaluation/program.py, code_prefix), then the tests, each after its `target`.

Its test processes import the stand-in `scicode` package in official_like_runtime/,
which pays the official modules' imports and reads the targets file named in
SCICODE_H5_PATH, as the official `process_hdf5_to_tuple` reads its own.
"""
import os
from pathlib import Path

from opencompass_scicode.evaluation.program import with_simps_shim
from opencompass_scicode.sandbox.scripts import ScriptRunner

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = Path(__file__).resolve().parent / 'official_like_runtime'


def official_like_runner(targets_path, timeout):
    return ScriptRunner(timeout=timeout, env={
        'PYTHONPATH': os.pathsep.join([str(RUNTIME), str(ROOT)]),
        'SCICODE_H5_PATH': str(targets_path)})


def _official_tests(step_id, test_cases):
    """The official test part of a step's program."""
    lines = ['\n\nfrom scicode.parse.parse import process_hdf5_to_tuple\n\n',
             f"targets = process_hdf5_to_tuple('{step_id}', {len(test_cases)})\n"]
    for index, test in enumerate(test_cases):
        lines.append(f'target = targets[{index}]\n\n')
        lines.extend(line + '\n' for line in test.split('\n'))
    return ''.join(lines)


def step_program(prefix, step_id, test_cases, simps_shim=True):
    """The whole program the official harness runs for a step: `prefix` and its tests."""
    program = prefix + _official_tests(step_id, test_cases)
    return with_simps_shim(program) if simps_shim else program
