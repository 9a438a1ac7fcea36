"""What every runner shares: launching tasks in dependency order, a few at a time, with live progress.

A runner knows tasks only by their spec (tasks/contract.py). A task starts once
every task it depends on within the same launch has ended well; if one of them
stopped, it is `not run`. Subclasses say how a task is started, watched and
stopped (a local process, a Slurm job); the progress display is the same for all.
"""
import importlib
import time
import traceback

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..errors import UserFacingError
from ..tasks.contract import EXIT_FAILED, EXIT_INTERRUPTED, TaskStatus, status_of
from ..utils.progress import read_progress
from ..utils.checks import check_number


class BaseRunner:
    """max_num_workers: tasks in flight at once; debug: run tasks in this process, one by one,
    with tracebacks. Subclasses implement start/poll/stop and may add `refresh(handles)` (one
    look at all tasks in flight before they are polled) and `where(handle)` (e.g. 'job 12
    RUNNING') to the progress line. The launch loop holds the handles of the tasks in flight."""

    poll_interval = 0.25
    # Whether inference tasks under this runner also score problems as they finish (early
    # evaluation), on the CPUs and memory the task holds.
    early_evaluation = True

    def __init__(self, max_num_workers=2, debug=False):
        self.max_num_workers = check_number('max_num_workers', max_num_workers, whole=True, at_least=1, example=2)
        self.debug = debug
        self.console = Console(stderr=True)

    # ------------------------------------------------------------ to implement
    def start(self, spec, parallel):
        """Start a task; return a handle. `parallel`: how many tasks of this launch may run at once."""
        raise NotImplementedError

    def refresh(self, handles):
        """Called before the tasks in flight are polled, with their handles."""

    def poll(self, handle):
        """A TaskStatus once the task has ended for good, else None."""
        raise NotImplementedError

    def stop(self, handles):
        """Stop these tasks, which are still running."""
        raise NotImplementedError

    def where(self, handle):
        return ''

    def pause(self):
        """Between two looks at the tasks in flight."""
        time.sleep(self.poll_interval)

    def run_inline(self, spec):
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


    def check(self):
        """Raise a UserFacingError if tasks cannot be started at all (before any work is done)."""

    def describe(self, spec):
        """How this runner would start the task (for --dry-run)."""
        return ' '.join(spec.command)

    # ------------------------------------------------------------ the loop
    def launch(self, specs, title=''):
        """Run TaskSpecs; return a TaskStatus per spec, in order."""
        if not specs:
            return []
        if self.debug:
            return self._launch_inline(specs)
        parallel = min(self.max_num_workers, len(specs))
        names = {s.name for s in specs}
        waiting = list(specs)
        running = {}                  # name -> (spec, handle)
        ended = {}                    # name -> TaskStatus
        with Progress(TextColumn('{task.description}'), BarColumn(), MofNCompleteColumn(),
                      TextColumn('{task.fields[extra]}'), TimeElapsedColumn(),
                      console=self.console, transient=False, refresh_per_second=4) as bar:
            rows = {s.name: bar.add_task(f'{title} {_label(s)}'.strip(), total=None, extra='waiting')
                    for s in specs}
            part_rows = {}
            try:
                while waiting or running:
                    for spec in list(waiting):
                        deps = [d for d in spec.depends_on if d in names]
                        stopped = [d for d in deps if d in ended and ended[d].stopped_others]
                        if stopped:
                            waiting.remove(spec)
                            ended[spec.name] = TaskStatus.not_run(spec, stopped)
                        elif all(d in ended for d in deps) and len(running) < self.max_num_workers:
                            waiting.remove(spec)
                            running[spec.name] = (spec, self.start(spec, parallel))
                    self.refresh([handle for _, handle in running.values()])
                    for name, (spec, handle) in list(running.items()):
                        status = self.poll(handle)
                        if status is not None:
                            ended[name] = status
                            del running[name]
                    self._refresh(bar, rows, part_rows, specs, running, ended)
                    if waiting or running:
                        self.pause()
            except KeyboardInterrupt:
                self.stop([handle for _, handle in running.values()])
                raise
            self._refresh(bar, rows, part_rows, specs, running, ended)
        return [ended[s.name] for s in specs]

    def _launch_inline(self, specs):
        ended = {}
        for spec in specs:
            stopped = [d for d in spec.depends_on if d in ended and ended[d].stopped_others]
            ended[spec.name] = TaskStatus.not_run(spec, stopped) if stopped else self.run_inline(spec)
        return [ended[s.name] for s in specs]

    def _refresh(self, bar, rows, part_rows, specs, running, ended):
        for spec in specs:
            row = rows[spec.name]
            info = read_progress(spec.progress_path)
            noun = 'errors' if spec.stage == 'infer' else 'failed'
            # an inference task also scores problems as they finish
            scored = f', {info["scored"]} scored' if (info or {}).get('scored') else ''
            if spec.name in ended:
                status = ended[spec.name]
                info = info or {}
                total = info.get('total') or bar.tasks[row].total or 1
                # skipped: its outputs are complete, whatever the progress file of a run cut short says
                whole = status.state == 'skipped'
                note = f' ({status.note})' if status.note and not whole else ''
                bar.update(row, total=total, completed=total if whole else info.get('done', total),
                           extra=status.state + scored + note)
                # its datasets' lines as it left them (a task ending between two looks left them
                # at what the look before saw, e.g. 0/6 for a task that reused every step)
                _part_rows(bar, part_rows, spec, info, noun, whole, add=False)
                continue
            if spec.name not in running:
                continue
            where = self.where(running[spec.name][1])
            where = f'{where} · ' if where else ''
            if info:
                bar.update(row, total=info['total'], completed=info['done'],
                           extra=f'{where}{info.get("errors", 0)} {noun}{_rate(info)}{scored}')
            else:
                bar.update(row, extra=where + 'starting')
            _part_rows(bar, part_rows, spec, info, noun, whole=False, add=True)


def _part_rows(bar, part_rows, spec, info, noun, whole, add):
    """One line per dataset of an inference task (`add`: new lines for datasets not shown yet;
    `whole`: each complete)."""
    parts = (info or {}).get('parts') or {}
    if len(parts) < 2:
        return
    for name, part in parts.items():
        key = (spec.name, name)
        if key not in part_rows:
            if not add:
                continue
            part_rows[key] = bar.add_task(f'  {name}', total=part['total'], extra='')
        bar.update(part_rows[key], total=part['total'], completed=part['total'] if whole else part['done'],
                   extra=f'{part.get("errors", 0)} {noun}')


def _module_command(command):
    if len(command) < 3 or command[1] != '-m':
        raise UserFacingError(f'--debug runs `python -m MODULE ...` commands in-process; got {command}')
    return command[2], list(command[3:])


def _label(spec):
    label = '/'.join(v for k, v in spec.labels.items() if k in ('model', 'dataset'))
    return f'{label} {spec.labels["shard"]}' if spec.labels.get('shard') else label


def _rate(info):
    elapsed = time.time() - info.get('started', time.time())
    if elapsed <= 1 or not info.get('done'):
        return ''
    return f', {info["done"] / elapsed * 60:.0f}/min'
