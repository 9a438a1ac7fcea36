"""Runs a complete program text as `python program.py` in a temporary directory.

For trusted code only (regenerating targets from the gold code, the
official-style baseline in benchmarks/): no sandbox beyond its own process
group and directory. Model code goes through executor.py.
"""
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..utils.procs import kill
from ..utils.pythonpath import with_package
from . import RUNTIME_DIR


@dataclass
class ExecResult:
    returncode: Optional[int]
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    error: Optional[str] = None     # the harness could not run the program


def read_capped(path, cap) -> str:
    """At most `cap` bytes of a file: its head and tail, with a marker between."""
    size = path.stat().st_size
    with open(path, 'rb') as fh:
        if size <= cap:
            data = fh.read()
        else:
            head = fh.read(cap // 2)
            fh.seek(size - cap // 2)
            tail = fh.read()
            data = head + f'\n...[{size - len(head) - len(tail)} bytes cut]...\n'.encode() + tail
    return data.decode('utf-8', errors='replace')


def test_process_env(extra=None) -> dict[str, str]:
    """The environment of a test process: this package's runtime `scicode` first on PYTHONPATH, no
    bytecode files, no display; then `extra`."""
    env = dict(os.environ)
    env['PYTHONPATH'] = with_package(first=[str(RUNTIME_DIR)])
    env['PYTHONDONTWRITEBYTECODE'] = '1'
    env['MPLBACKEND'] = 'Agg'
    env.update(extra or {})
    return env


class ScriptRunner:
    """A fresh `python program.py` per call, killed with its process group on timeout.

    Its `scicode` package (runtime/) reads no targets: a program that needs them
    brings its own (the official-style baseline puts one first on PYTHONPATH).
    """

    def __init__(self, timeout, max_output_bytes=64 * 1024, python=None, env=None):
        self.timeout = timeout
        self.max_output_bytes = max_output_bytes
        self.python = python or sys.executable
        self.env = env or {}

    def run(self, program) -> 'ExecResult':
        """Run `program` in a fresh Python with the time limit and output caps; its exit code,
        output and duration."""
        with tempfile.TemporaryDirectory(prefix='scicode-step-') as workdir:
            work = Path(workdir)
            script = work / 'program.py'
            script.write_text(program, encoding='utf-8')
            out_path, err_path = work / '.stdout', work / '.stderr'
            start = time.monotonic()
            with open(out_path, 'wb') as out, open(err_path, 'wb') as err:
                try:
                    proc = subprocess.Popen(
                        [self.python, script.name], cwd=work, stdout=out, stderr=err,
                        stdin=subprocess.DEVNULL, env=test_process_env(self.env),
                        start_new_session=True)
                except OSError as exc:
                    return ExecResult(None, '', '', 0.0, error=f'could not start python: {exc}')
                timed_out = False
                try:
                    proc.wait(timeout=self.timeout)
                except subprocess.TimeoutExpired:
                    timed_out = True
                finally:
                    kill(proc.pid, group=True, denied_ok=True)
                    proc.wait()
            duration = time.monotonic() - start
            return ExecResult(
                returncode=proc.returncode,
                stdout=read_capped(out_path, self.max_output_bytes),
                stderr=read_capped(err_path, self.max_output_bytes),
                duration_s=round(duration, 3),
                timed_out=timed_out,
            )
