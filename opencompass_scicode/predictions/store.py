"""Per-step prediction records, one JSON object per line, appended as they arrive.

Appending and flushing each record means a crash loses at most the steps in
flight. When a step appears more than once, the last record wins (a retried
step is appended again). Each record is a Prediction (record.py), checked as
it is appended and as it is read.
"""
import hashlib
import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Any, Iterator

from ..utils.workdir import remove_parts
from ..utils.writes import append_synced, replace_whole
from .record import Prediction, as_prediction


_STEP_ID = re.compile(rb'"step_id":\s*"([^"\\]+)"')
_SAMPLE = re.compile(rb'"sample":\s*(\d+)')


def record_key(step_id, sample=0) -> str:
    """How a step's record is found: its step id, and for the second and later samples of a
    problem (infer_cfg n > 1) `step_id@sample`, so one sample's files read as before."""
    return step_id if not sample else f'{step_id}@{sample}'


class PredictionStore:
    """`base`: a file read before this one and never written (a shard appends to its part file
    and sees the whole run's records before it)."""

    def __init__(self, path, base=None):
        self.path = Path(path)
        self.base = PredictionStore(base) if base else None
        self._lock = threading.Lock()     # appends may come from several threads
        self._read = None                 # [file identity, bytes read, latest records] (load)

    def exists(self) -> bool:
        """Whether the file (or the one it goes on from) exists."""
        return self.path.is_file() or bool(self.base and self.base.exists())

    def records(self) -> Iterator[Prediction]:
        """Every record (a Prediction) in file order, superseded ones included. A torn last line
        (crash mid-write) is skipped."""
        if self.base:
            yield from self.base.records()
        if not self.path.is_file():
            return
        with open(self.path, encoding='utf-8') as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                try:
                    yield Prediction.model_validate_json(line)
                except ValueError:
                    continue

    def load(self) -> dict[str, Prediction]:
        """record_key(step_id, sample) -> latest record (a Prediction).

        The file only grows (records are appended), so a store reads it once and then only what
        was appended since: early evaluation loads it each time a problem is answered."""
        latest = self.base.load() if self.base else {}
        with self._lock:
            latest.update(self._latest_own())
        return latest

    def _latest_own(self):
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            self._read = None
            return {}
        identity = (stat.st_dev, stat.st_ino)
        if self._read is None or self._read[0] != identity or stat.st_size < self._read[1]:
            self._read = [identity, 0, {}]          # a new file (or set aside and started anew)
        _, offset, latest = self._read
        with open(self.path, 'rb') as fh:
            fh.seek(offset)
            data = fh.read()
        complete = data.rfind(b'\n') + 1           # a line still being written is read next time
        for line in data[:complete].splitlines():
            try:
                record = Prediction.model_validate_json(line)
            except ValueError:                       # a torn line (crash mid-write), or blank
                continue
            latest[record_key(record.step_id, record.sample)] = record
        self._read[1] = offset + complete
        return dict(latest)

    def append(self, record) -> None:
        """Append one record (a Prediction, or a dict checked as one) and sync it to disk."""
        line = json.dumps(as_prediction(record).to_json(), ensure_ascii=False) + '\n'
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self._ends_torn():
                line = '\n' + line     # a crash cut the last line short; do not glue onto it
            append_synced(self.path, line)      # what a full disk lets through is a torn line (torn())

    def _ends_torn(self):
        try:
            with open(self.path, 'rb') as fh:
                fh.seek(-1, os.SEEK_END)
                return fh.read(1) != b'\n'
        except OSError:    # missing or empty file
            return False

    def torn(self) -> list[tuple[int, str | None]]:
        """[(line number, record_key or None)] of the lines of this file that hold no record: cut
        short by a crash between write and flush (the last line, or one a later append went on
        after). The key is read from what is left of the line, when it got that far."""
        if not self.path.is_file():
            return []
        found = []
        with open(self.path, 'rb') as fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    json.loads(line)
                except ValueError:
                    step, sample = _STEP_ID.search(line), _SAMPLE.search(line)
                    key = record_key(step.group(1).decode(errors='replace'),
                                     int(sample.group(1)) if sample else 0) if step else None
                    found.append((number, key))
        return found

    def set_aside(self, why) -> None:
        """Rename the file out of the way (kept for inspection); the next append starts anew."""
        if self.path.is_file():
            stamp = time.strftime('%Y%m%d_%H%M%S')
            os.replace(self.path, self.path.with_name(f'{self.path.stem}.{why}-{stamp}{self.path.suffix}'))

    def usage(self) -> dict[str, Any]:
        """What answering cost: requests, tokens and model time over every record (retried
        steps included), and the steps whose latest record has an answer or an error."""
        totals = {'steps answered': 0, 'requests': 0, 'prompt tokens': 0, 'completion tokens': 0,
                  'errors': 0, 'model time (s)': 0.0}
        latest = {}
        for rec in self.records():
            latest[rec.step_id] = rec
            usage = rec.usage
            totals['requests'] += usage.get('requests', 1 if rec.response is not None else 0)
            totals['prompt tokens'] += usage.get('prompt_tokens', 0)
            totals['completion tokens'] += usage.get('completion_tokens', 0)
            totals['model time (s)'] += usage.get('latency_s', rec.duration_s or 0)
        totals['steps answered'] = sum(1 for r in latest.values() if not r.error)
        totals['errors'] = sum(1 for r in latest.values() if r.error)
        totals['model time (s)'] = round(totals['model time (s)'], 3)
        return totals

    def digest(self) -> str | None:
        """16 hex digits of the file's sha256: what the answers were, for a stored verdict; None
        where there is no file."""
        if not self.path.is_file():
            return None
        return hashlib.sha256(self.path.read_bytes()).hexdigest()[:16]


def merge_parts(final_path, part_paths) -> None:
    """Append the part files' records to the final file (in one atomic replace) and remove the
    parts. Lines the final file already holds are not added again, so a merge cut short between
    the replace and the removal can simply run again."""
    final_path = Path(final_path)
    parts = [Path(p) for p in part_paths if Path(p).is_file()]
    lines = final_path.read_text(encoding='utf-8').splitlines() if final_path.is_file() else []
    seen = set(lines)
    for part in parts:
        for line in part.read_text(encoding='utf-8').splitlines():
            if line.strip() and line not in seen:
                seen.add(line)
                lines.append(line)
    final_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = final_path.with_name(f'.{final_path.name}.{os.getpid()}.tmp')
    replace_whole(tmp, final_path, ''.join(line + '\n' for line in lines if line.strip()))
    remove_parts(parts)
