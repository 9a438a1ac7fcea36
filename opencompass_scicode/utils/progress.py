"""Progress of a task, shared through a small JSON file the runner polls."""
import json
import os
import time
from pathlib import Path


class ProgressFile:
    def __init__(self, path, label, total, unit='steps', min_interval=0.5, parts=None):
        self.path = Path(path) if path else None
        self.label = label
        self.state = {'label': label, 'done': 0, 'total': total, 'errors': 0, 'unit': unit,
                      'started': time.time(),
                      'parts': {name: {'done': 0, 'total': n, 'errors': 0}
                                for name, n in (parts or {}).items()}}
        self.min_interval = min_interval
        self._last = 0.0
        self.write(force=True)

    def update(self, done=None, errors=None, total=None, force=False):
        if done is not None:
            self.state['done'] = done
        if errors is not None:
            self.state['errors'] = errors
        if total is not None:
            self.state['total'] = total
        self.write(force=force or self.state['done'] >= self.state['total'])

    def update_part(self, name, done, errors=0):
        """Progress of one part (a dataset of an inference task); the totals follow."""
        part = self.state['parts'][name]
        part['done'], part['errors'] = done, errors
        parts = self.state['parts'].values()
        self.update(done=sum(p['done'] for p in parts), errors=sum(p['errors'] for p in parts))

    def write(self, force=False):
        now = time.monotonic()
        if not force and now - self._last < self.min_interval:
            return
        self._last = now
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + '.tmp')
        tmp.write_text(json.dumps(self.state))
        os.replace(tmp, self.path)


def read_progress(path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
