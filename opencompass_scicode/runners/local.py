"""Runs tasks as local processes, a few at a time, with live progress.

It knows tasks only by their spec (tasks/contract.py): the command to start,
the log to write, the progress file to show. With `debug`, tasks run one by
one inside this process, with tracebacks.
"""
import importlib
import os
import signal
import subprocess
import threading
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..errors import UserFacingError
from ..tasks.contract import EXIT_FAILED, EXIT_INTERRUPTED, status_of
from ..utils.lifeline import PARENT_ENV
from ..utils.progress import read_progress

# Evaluation tasks running side by side divide the CPUs among them (evaluation/evaluator.py).
PARALLEL_ENV = 'OPENCOMPASS_SCICODE_PARALLEL_EVALS'


class LocalRunner:
    """max_num_workers: tasks running at once; debug: run in-process, serially, with tracebacks."""

    def __init__(self, max_num_workers=2, debug=False):
        self.max_num_workers = max(1, int(max_num_workers))
        self.debug = debug
        self.console = Console(stderr=True)
        self._procs = {}
        self._lock = threading.Lock()

    def launch(self, specs, title=''):
        """Run TaskSpecs; return a TaskStatus per spec, in order."""
        if not specs:
            return []
        if self.debug:
            return [self._run_inline(spec) for spec in specs]
        self._parallel = min(self.max_num_workers, len(specs))
        with Progress(TextColumn('{task.description}'), BarColumn(), MofNCompleteColumn(),
                      TextColumn('{task.fields[extra]}'), TimeElapsedColumn(),
                      console=self.console, transient=False, refresh_per_second=4) as bar:
            rows = [bar.add_task(f'{title} {_label(s)}'.strip(), total=None, extra='waiting')
                    for s in specs]
            self._part_rows = {}
            with ThreadPoolExecutor(max_workers=self.max_num_workers) as pool:
                futures = [pool.submit(self._run_process, s) for s in specs]
                try:
                    while not all(f.done() for f in futures):
                        self._refresh(bar, rows, specs, futures)
                        wait(futures, timeout=0.25, return_when=FIRST_COMPLETED)
                except KeyboardInterrupt:
                    self.kill_all()
                    raise
                self._refresh(bar, rows, specs, futures)
            return [future.result() for future in futures]

    def _refresh(self, bar, rows, specs, futures):
        for index, (row, spec, future) in enumerate(zip(rows, specs, futures)):
            info = read_progress(spec.progress_path)
            noun = 'errors' if spec.stage == 'infer' else 'failed'
            # an inference task also scores problems as they finish
            scored = f', {info["scored"]} scored' if (info or {}).get('scored') else ''
            if future.done():
                status = future.result()
                info = info or {}
                total = info.get('total') or bar.tasks[row].total or 1
                bar.update(row, total=total, completed=info.get('done', total), extra=status.state + scored)
            elif info:
                bar.update(row, total=info['total'], completed=info['done'],
                           extra=f'{info.get("errors", 0)} {noun}{_rate(info)}{scored}')
            elif spec.name in self._procs:
                bar.update(row, extra='starting')
            parts = (info or {}).get('parts') or {}
            if len(parts) > 1:           # one line per dataset of an inference task
                for name, part in parts.items():
                    key = (index, name)
                    if key not in self._part_rows:
                        self._part_rows[key] = bar.add_task(f'  {name}', total=part['total'], extra='')
                    bar.update(self._part_rows[key], total=part['total'], completed=part['done'],
                               extra=f'{part.get("errors", 0)} {noun}')

    def _run_process(self, spec):
        log_path = Path(spec.log_path)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, **spec.env)
        env[PARALLEL_ENV] = str(self._parallel)
        env[PARENT_ENV] = str(os.getpid())
        start = time.monotonic()
        with open(log_path, 'ab') as log:
            # A session of its own: Ctrl-C reaches run.py alone, which then stops each task.
            proc = subprocess.Popen(spec.command, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=env, start_new_session=True)
            with self._lock:
                self._procs[spec.name] = proc
            returncode = proc.wait()
        with self._lock:
            self._procs.pop(spec.name, None)
        return status_of(spec, returncode, time.monotonic() - start)

    def _run_inline(self, spec):
        """The spec's `python -m MODULE ARGS` command, run by MODULE's main() in this process."""
        module, args = _module_command(spec.command)
        self.console.print(f'[bold]running {spec.name} in-process (--debug)')
        start = time.monotonic()
        try:
            returncode = importlib.import_module(module + '.__main__').main(args, standalone=False)
        except UserFacingError as exc:
            self.console.print(f'[red]error: {exc}')
            returncode = EXIT_FAILED
        except KeyboardInterrupt:
            returncode = EXIT_INTERRUPTED
            raise
        except Exception:
            traceback.print_exc()
            returncode = EXIT_FAILED
        return status_of(spec, returncode, time.monotonic() - start, log_path='(in-process)')

    def kill_all(self):
        with self._lock:
            procs = list(self._procs.values())
        for proc in procs:
            try:
                os.killpg(proc.pid, signal.SIGINT)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + 5
        for proc in procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass


def _module_command(command):
    if len(command) < 3 or command[1] != '-m':
        raise UserFacingError(f'--debug runs `python -m MODULE ...` commands in-process; got {command}')
    return command[2], list(command[3:])


def _label(spec):
    return '/'.join(v for k, v in spec.labels.items() if k in ('model', 'dataset'))


def _rate(info):
    elapsed = time.time() - info.get('started', time.time())
    if elapsed <= 1 or not info.get('done'):
        return ''
    return f', {info["done"] / elapsed * 60:.0f}/min'
