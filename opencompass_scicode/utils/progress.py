"""Progress of a task, shared through a small JSON file the runner polls."""
import json
import threading
import time
from pathlib import Path
from typing import Any

from ..errors import NoSpaceError
from .workdir import write_json_atomic


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
        self._lock = threading.Lock()     # evaluation threads report steps concurrently
        self.write(force=True)

    def update(self, done=None, errors=None, total=None, force=False) -> None:
        """Count `done` and `errors` of `total` steps (None: unchanged); written when due, at the
        end or with `force`."""
        with self._lock:
            if done is not None:
                self.state['done'] = done
            if errors is not None:
                self.state['errors'] = errors
            if total is not None:
                self.state['total'] = total
            self._write(force or self.state['done'] >= self.state['total'])

    def add(self, name, count=1) -> None:
        """Count something beside the steps (e.g. steps scored early, during inference)."""
        with self._lock:
            self.state[name] = self.state.get(name, 0) + count
            self._write(False)

    def started(self, name) -> None:
        """A step (`name`) began to run: the runner names one still running after a minute.
        Called from the step pool's threads, which must go on whatever happens here: a write
        refused (a full disk) is left for the task's own next write to meet."""
        with self._lock:
            self.state.setdefault('running', {})[name] = time.time()
            self._advise()

    def finished(self, name) -> None:
        """A step ended (written at once, so that no ended step is named as running)."""
        with self._lock:
            if self.state.get('running', {}).pop(name, None) is not None:
                self._advise()

    def _advise(self):
        try:
            self._write(True)
        except (OSError, NoSpaceError):
            pass

    def update_part(self, name, done, errors=0) -> None:
        """Progress of one part (a dataset of an inference task); the totals follow."""
        with self._lock:
            part = self.state['parts'][name]
            part['done'], part['errors'] = done, errors
            parts = self.state['parts'].values()
            self.state['done'] = sum(p['done'] for p in parts)
            self.state['errors'] = sum(p['errors'] for p in parts)
            self._write(self.state['done'] >= self.state['total'])

    def write(self, force=False) -> None:
        """Write the progress file (if the last write is old enough, or with `force`)."""
        with self._lock:
            self._write(force)

    def _write(self, force):
        now = time.monotonic()
        if not force and now - self._last < self.min_interval:
            return
        self._last = now
        if self.path is not None:
            # a glance for the progress bars, rewritten every half second: not worth a sync
            write_json_atomic(self.path, self.state, indent=None, durable=False)


def read_progress(path) -> dict[str, Any]:
    """A task's progress record from its file."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


LONG_STEP_S = 60


def long_running(info, now=None) -> str:
    """'step X running N min' for the step of a progress record that has run longest, once that
    is over LONG_STEP_S; else ''."""
    running = (info or {}).get('running') or {}
    if not running:
        return ''
    name, since = min(running.items(), key=lambda item: item[1])
    seconds = (now or time.time()) - since
    if seconds < LONG_STEP_S:
        return ''
    return f'step {name} running {int(seconds // 60)} min' if seconds >= 120 else f'step {name} running {seconds:.0f} s'
