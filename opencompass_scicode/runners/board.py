"""The live progress of one launch of tasks, on stderr, the same for every runner.

One line per task: waiting, where it runs (a Slurm job's state), its steps done and errors,
then how it ended. Tasks report through their progress files (utils/progress.py). Two more
kinds of line, kept few so that a sweep of many models stays readable:
- one per dataset of an inference task, while the launch has at most PART_LINES_UP_TO tasks
  (with more, each model's line alone, its datasets added up);
- one for scoring during inference (early evaluation): the steps every task has scored so far,
  against all the steps the tasks will answer, and how many are answered; shown once the
  first step is scored.
A line that scores (an eval task's, the scoring line) names the step running longest once it
has run for a minute (utils/progress.py, long_running): a step in an endless loop shows by name.
"""
import time

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..utils.progress import long_running, read_progress

PART_LINES_UP_TO = 3


class TaskBoard:
    """`show(where, ended)` after each look at the tasks: `where` holds the tasks running (name ->
    what the runner says of where, '' for nothing), `ended` their TaskStatus once ended."""

    def __init__(self, console, specs, title=''):
        self.specs = list(specs)
        self.title = title
        self.bar = Progress(TextColumn('{task.description}'), BarColumn(), MofNCompleteColumn(),
                            TextColumn('{task.fields[extra]}'), TimeElapsedColumn(),
                            console=console, transient=False, refresh_per_second=4)
        self.rows = {}
        self.part_rows = {}
        self.scoring_row = None
        self.part_lines = len(self.specs) <= PART_LINES_UP_TO

    def __enter__(self):
        self.bar.__enter__()
        self.rows = {s.name: self.bar.add_task(f'{self.title} {_label(s)}'.strip(), total=None, extra='waiting')
                     for s in self.specs}
        return self

    def __exit__(self, *exc):
        return self.bar.__exit__(*exc)

    def show(self, where, ended) -> None:
        """Redraw the board: each task's progress, `where` it runs ({name: where}) and how those
        `ended` ({name: TaskStatus}) ended."""
        infos = {spec.name: read_progress(spec.progress_path) for spec in self.specs}
        for spec in self.specs:
            info = infos[spec.name]
            if spec.name in ended:
                self._ended(spec, info or {}, ended[spec.name])
            elif spec.name in where:
                self._running(spec, info, where[spec.name])
        self._scoring([info for info in infos.values() if info])

    def _ended(self, spec, info, status):
        row = self.rows[spec.name]
        total = info.get('total') or self.bar.tasks[row].total or 1
        # skipped: its outputs are complete, whatever the progress file of a run cut short says
        whole = status.state == 'skipped'
        note = f' ({status.note})' if status.note and not whole else ''
        self.bar.update(row, total=total, completed=total if whole else info.get('done', total),
                        extra=status.state + note)
        # its datasets' lines as it left them: a task that ended between two looks would keep what
        # the look before saw (0/6 for one that reused every step)
        self._parts(spec, info, whole, add=False)

    def _running(self, spec, info, where):
        row = self.rows[spec.name]
        where = f'{where} · ' if where else ''
        if not info:
            self.bar.update(row, extra=where + 'starting')
            return
        noun = _noun(spec)
        long = long_running(info) if spec.stage == 'eval' else ''      # inference: on the scoring line
        self.bar.update(row, total=info['total'], completed=info['done'],
                        extra=f'{where}{info.get("errors", 0)} {noun}{_rate(info)}' + (f' · {long}' if long else ''))
        self._parts(spec, info, whole=False, add=True)

    def _parts(self, spec, info, whole, add):
        """One line per dataset of an inference task (`add`: lines for datasets not shown yet;
        `whole`: each complete)."""
        parts = info.get('parts') or {}
        if not self.part_lines or len(parts) < 2:
            return
        for name, part in parts.items():
            key = (spec.name, name)
            if key not in self.part_rows:
                if not add:
                    continue
                self.part_rows[key] = self.bar.add_task(f'  {name}', total=part['total'], extra='')
            self.bar.update(self.part_rows[key], total=part['total'],
                            completed=part['total'] if whole else part['done'],
                            extra=f'{part.get("errors", 0)} {_noun(spec)}')

    def _scoring(self, infos):
        scored = sum(info.get('scored', 0) for info in infos)
        if not scored:
            return
        answered = sum(info.get('done', 0) for info in infos)
        total = sum(info.get('total', 0) for info in infos)
        if self.scoring_row is None:
            label = f'{self.title} scoring'.strip()
            self.scoring_row = self.bar.add_task(label, total=total, extra='')
        running = {name: since for info in infos for name, since in (info.get('running') or {}).items()}
        long = long_running({'running': running})
        self.bar.update(self.scoring_row, total=max(total, scored), completed=scored,
                        extra=f'{answered} answered' + (f' · {long}' if long else ''))


def _noun(spec):
    return 'errors' if spec.stage == 'infer' else 'failed'


def _label(spec):
    label = '/'.join(v for k, v in spec.labels.items() if k in ('model', 'dataset'))
    return f'{label} {spec.labels["shard"]}' if spec.labels.get('shard') else label


def _rate(info):
    elapsed = time.time() - info.get('started', time.time())
    if elapsed <= 1 or not info.get('done'):
        return ''
    return f', {info["done"] / elapsed * 60:.0f}/min'
