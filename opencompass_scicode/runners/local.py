"""Runs tasks as separate local processes, a few at a time, with live progress."""
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..errors import UserFacingError
from ..sandbox import PACKAGE_PARENT
from ..tasks import EXIT_OK, EXIT_STEP_ERRORS, load_task
from ..utils.progress import read_progress



@dataclass
class TaskStatus:
    name: str
    state: str            # done | errors | failed | skipped | interrupted | not run
    duration_s: float
    log_path: str
    returncode: int = None
    note: str = ''

    @property
    def ok(self):
        return self.state in ('done', 'skipped')


def state_of(returncode):
    if returncode == EXIT_OK:
        return 'done'
    if returncode == EXIT_STEP_ERRORS:
        return 'errors'
    if returncode in (130, -signal.SIGINT):
        return 'interrupted'
    return 'failed'


class LocalRunner:
    """max_num_workers: tasks running at once; debug: run in-process, serially, with tracebacks."""

    def __init__(self, max_num_workers=2, debug=False):
        self.max_num_workers = max(1, int(max_num_workers))
        self.debug = debug
        self.console = Console(stderr=True)
        self._procs = {}
        self._lock = threading.Lock()

    def launch(self, tasks, title=''):
        """Run task dicts (from the partitioner); return a TaskStatus per task, in order."""
        if not tasks:
            return []
        if self.debug:
            return [self._run_inline(t) for t in tasks]
        # Eval tasks running side by side share the CPUs (see evaluator.default_workers).
        self._parallel = min(self.max_num_workers, len(tasks))
        statuses = [None] * len(tasks)
        with Progress(TextColumn('{task.description}'), BarColumn(), MofNCompleteColumn(),
                      TextColumn('{task.fields[extra]}'), TimeElapsedColumn(),
                      console=self.console, transient=False, refresh_per_second=4) as bar:
            rows = [bar.add_task(f'{title} {_label(t)}'.strip(), total=None, extra='waiting')
                    for t in tasks]
            self._part_rows = {}
            with ThreadPoolExecutor(max_workers=self.max_num_workers) as pool:
                futures = [pool.submit(self._run_process, t) for t in tasks]
                try:
                    while not all(f.done() for f in futures):
                        self._refresh(bar, rows, tasks, futures)
                        time.sleep(0.25)
                except KeyboardInterrupt:
                    self.kill_all()
                    raise
                self._refresh(bar, rows, tasks, futures)
            for i, future in enumerate(futures):
                statuses[i] = future.result()
        return statuses

    def _refresh(self, bar, rows, tasks, futures):
        for index, (row, task, future) in enumerate(zip(rows, tasks, futures)):
            info = read_progress(load_task(task).progress_path)
            noun = 'failed' if task['stage'] == 'eval' else 'errors'
            if future.done():
                status = future.result()
                info = info or {}
                total = info.get('total') or bar.tasks[row].total or 1
                bar.update(row, total=total, completed=info.get('done', total), extra=status.state)
            elif info:
                bar.update(row, total=info['total'], completed=info['done'],
                           extra=f'{info.get("errors", 0)} {noun}{_rate(info)}')
            elif task['config_path'] in self._procs:
                bar.update(row, extra='starting')
            parts = (info or {}).get('parts') or {}
            if len(parts) > 1:           # one line per dataset of an inference task
                for name, part in parts.items():
                    key = (index, name)
                    if key not in self._part_rows:
                        self._part_rows[key] = bar.add_task(f'  {name}', total=part['total'], extra='')
                    bar.update(self._part_rows[key], total=part['total'], completed=part['done'],
                               extra=f'{part.get("errors", 0)} {noun}')

    def _run_process(self, task):
        runnable = load_task(task)
        log_path = runnable.log_path
        log_path.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        env['OPENCOMPASS_SCICODE_PARALLEL_EVALS'] = str(self._parallel)
        env['PYTHONPATH'] = os.pathsep.join(p for p in (str(PACKAGE_PARENT), env.get('PYTHONPATH')) if p)
        start = time.monotonic()
        with open(log_path, 'ab') as log:
            proc = subprocess.Popen([sys.executable, '-m', 'opencompass_scicode.tasks',
                                     task['config_path']], stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=env, start_new_session=True)
            with self._lock:
                self._procs[task['config_path']] = proc
            returncode = proc.wait()
        with self._lock:
            self._procs.pop(task['config_path'], None)
        return TaskStatus(runnable.name, state_of(returncode), round(time.monotonic() - start, 1),
                          str(log_path), returncode)

    def _run_inline(self, task):
        runnable = load_task(task)
        start = time.monotonic()
        self.console.print(f'[bold]running {runnable.name} in-process (--debug)')
        try:
            returncode = runnable.run()
        except UserFacingError as exc:
            self.console.print(f'[red]error: {exc}')
            returncode = 1
        except KeyboardInterrupt:
            raise
        except Exception:
            traceback.print_exc()
            returncode = 1
        return TaskStatus(runnable.name, state_of(returncode), round(time.monotonic() - start, 1),
                          '(in-process)', returncode)

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


def _label(task):
    if task.get('dataset_abbr'):
        return f'{task["model_abbr"]}/{task["dataset_abbr"]}'
    return task['model_abbr']


def _rate(info):
    elapsed = time.time() - info.get('started', time.time())
    if elapsed <= 1 or not info.get('done'):
        return ''
    return f', {info["done"] / elapsed * 60:.0f}/min'
