"""The layout of one run's directory: `<work_dir>/<timestamp>/...`.

    configs/<timestamp>.py                    merged config of the run
    configs/tasks/<stage>_<name>.json         one file per task
    predictions/<model>/<dataset>.jsonl
    predictions/<model>/usage.json            requests, tokens, model time per dataset
    results/<model>/<dataset>.json
    summary/summary_<timestamp>.{txt,csv,md,png}
    logs/infer/<model>.out, logs/eval/<model>/<dataset>.out,
    logs/targets/<dataset>.out                task output (+ .progress.json)
    logs/infer/<model>.server.log             output of a model server the task started
    logs/pool/<host>.log                      output of the run's step pool on that machine
    cache/verdicts/<program key>.json         each distinct step program's verdict (evaluation/sharing.py)
    status.json                               last known state of every task
    .lock, .tasks.lock                        held while run.py and its tasks work (utils/runlock.py)
"""
import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from .writes import replace_whole, write_json_atomic  # noqa: F401 - where the run's files are written

TIMESTAMP_RE = re.compile(r'^\d{8}_\d{6}$')


def new_timestamp() -> str:
    """A run's timestamp for now: `YYYYMMDD_HHMMSS`."""
    return datetime.now().strftime('%Y%m%d_%H%M%S')


def latest_timestamp(work_dir) -> str | None:
    """The latest run's timestamp in `work_dir`, or None where it holds none."""
    root = Path(work_dir)
    if not root.is_dir():
        return None
    stamps = sorted(p.name for p in root.iterdir() if p.is_dir() and TIMESTAMP_RE.match(p.name))
    return stamps[-1] if stamps else None


class RunDir:
    def __init__(self, work_dir, timestamp):
        self.work_dir = Path(work_dir)
        self.timestamp = timestamp
        self.root = self.work_dir / timestamp

    def create(self) -> 'RunDir':
        """Make the run directory and its folders; itself."""
        for sub in ('configs/tasks', 'predictions', 'results', 'summary', 'logs'):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        return self

    @property
    def config_path(self) -> Path:
        """Where the run's config is kept."""
        return self.root / 'configs' / f'{self.timestamp}.py'

    @staticmethod
    def task_name(stage, *parts) -> str:
        """'infer/<model>', 'eval/<model>/<dataset>', 'targets/<dataset>'."""
        return '/'.join((stage, *parts))

    def task_config_path(self, name) -> Path:
        """The task file of task `name`."""
        return self.root / 'configs' / 'tasks' / (name.replace('/', '_') + '.json')

    def log_path(self, name) -> Path:
        """The log of task `name`."""
        return self.root / 'logs' / f'{name}.out'

    def predictions_path(self, model_abbr, dataset_abbr) -> Path:
        """The predictions file of a model and dataset."""
        return self.root / 'predictions' / model_abbr / f'{dataset_abbr}.jsonl'

    def results_path(self, model_abbr, dataset_abbr) -> Path:
        """The results file of a model and dataset."""
        return self.root / 'results' / model_abbr / f'{dataset_abbr}.json'

    @staticmethod
    def part_path(final_path, shard) -> Path:
        """Where one shard writes its part of `final_path` (merged into it when all are done)."""
        final_path = Path(final_path)
        return final_path.parent / f'{final_path.stem}.parts' / f'{shard}{final_path.suffix}'

    def usage_path(self, model_abbr) -> Path:
        """Where a model's usage (requests, tokens) is kept."""
        return self.root / 'predictions' / model_abbr / 'usage.json'

    def summary_path(self, ext) -> Path:
        """The summary file of this run with extension `ext`."""
        return self.root / 'summary' / f'summary_{self.timestamp}.{ext}'

    @property
    def status_path(self) -> Path:
        """The run's status.json: each task's state."""
        return self.root / 'status.json'

    def load_status(self) -> dict[str, Any]:
        """The run's status.json as a dict; {} where there is none yet."""
        try:
            return json.loads(self.status_path.read_text())
        except (OSError, ValueError):
            return {}

    def save_status(self, updates) -> None:
        """Merge `updates` ({task: entry}) into status.json."""
        status = self.load_status()
        status.update(updates)
        write_json_atomic(self.status_path, status)


def remove_parts(paths) -> None:
    """Delete merged part files, then their `.parts` folders once empty."""
    paths = [Path(p) for p in paths]
    for path in paths:
        path.unlink(missing_ok=True)
    for folder in {path.parent for path in paths}:
        try:
            folder.rmdir()
        except OSError:
            pass
