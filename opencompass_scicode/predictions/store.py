"""Per-step prediction records, one JSON object per line, appended as they arrive.

Appending and flushing each record means a crash loses at most the steps in
flight. When a step appears more than once, the last record wins (a retried
step is appended again).
"""
import hashlib
import json
import os
import threading
import time
from pathlib import Path


def record_key(step_id, sample=0):
    """How a step's record is found: its step id, and for the second and later samples of a
    problem (infer_cfg n > 1) `step_id@sample`, so one sample's files read as before."""
    return step_id if not sample else f'{step_id}@{sample}'


class PredictionStore:
    def __init__(self, path):
        self.path = Path(path)
        self._lock = threading.Lock()     # appends may come from several threads

    def exists(self):
        return self.path.is_file()

    def records(self):
        """Every record in file order, superseded ones included. A torn last line
        (crash mid-write) is skipped."""
        if not self.path.is_file():
            return
        with open(self.path, encoding='utf-8') as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                try:
                    yield json.loads(line)
                except json.JSONDecodeError:
                    continue

    def load(self):
        """record_key(step_id, sample) -> latest record."""
        return {record_key(record['step_id'], record.get('sample', 0)): record for record in self.records()}

    def append(self, record):
        line = json.dumps(record, ensure_ascii=False) + '\n'
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self._ends_torn():
                line = '\n' + line     # a crash cut the last line short; do not glue onto it
            with open(self.path, 'a', encoding='utf-8') as fh:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())

    def _ends_torn(self):
        try:
            with open(self.path, 'rb') as fh:
                fh.seek(-1, os.SEEK_END)
                return fh.read(1) != b'\n'
        except OSError:    # missing or empty file
            return False

    def set_aside(self, why):
        """Rename the file out of the way (kept for inspection); the next append starts anew."""
        if self.path.is_file():
            stamp = time.strftime('%Y%m%d_%H%M%S')
            os.replace(self.path, self.path.with_name(f'{self.path.stem}.{why}-{stamp}{self.path.suffix}'))

    def usage(self):
        """What answering cost: requests, tokens and model time over every record (retried
        steps included), and the steps whose latest record has an answer or an error."""
        totals = {'steps answered': 0, 'requests': 0, 'prompt tokens': 0, 'completion tokens': 0,
                  'errors': 0, 'model time (s)': 0.0}
        latest = {}
        for rec in self.records():
            latest[rec['step_id']] = rec
            usage = rec.get('usage') or {}
            totals['requests'] += usage.get('requests', 1 if rec.get('response') is not None else 0)
            totals['prompt tokens'] += usage.get('prompt_tokens', 0)
            totals['completion tokens'] += usage.get('completion_tokens', 0)
            totals['model time (s)'] += usage.get('latency_s', rec.get('duration_s') or 0)
        totals['steps answered'] = sum(1 for r in latest.values() if not r.get('error'))
        totals['errors'] = sum(1 for r in latest.values() if r.get('error'))
        totals['model time (s)'] = round(totals['model time (s)'], 3)
        return totals

    def digest(self):
        if not self.path.is_file():
            return None
        return hashlib.sha256(self.path.read_bytes()).hexdigest()[:16]
