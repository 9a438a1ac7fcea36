"""How long each step took last time, and what importing each module cost a worker.

Remembered per data directory (its cache/), so that evaluation is planned for
the workers to finish together (planner.py) and work is split
into shards of similar cost (partitioners/).
"""
import fcntl
import json
import os
import sys
from pathlib import Path
from typing import Any

from ..utils.workdir import write_json_atomic


# Where step durations and import costs are remembered, if not in the data directory's cache/
# (the test suite keeps its made-up programs' timings out of a developer's real ones).
CACHE_ENV = 'OPENCOMPASS_SCICODE_TIMINGS_DIR'


def durations_path(data_dir) -> Path:
    """Where the step durations of `data_dir` are remembered (its cache, or the cache folder the
    environment names)."""
    return Path(os.environ.get(CACHE_ENV) or Path(data_dir) / 'cache') / 'step_durations.json'


def _read_dict(path):
    """{key: dict} from a JSON file; entries of another shape, or an unreadable file, are left out."""
    try:
        data = json.loads(Path(path).read_text()) if path else {}
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


class ImportCosts:
    """Seconds a worker took to import a module, and the watched modules it brought along.

    {module: {'s': seconds, 'brings': [module, ...]}}. A module never seen is
    free if it is in the standard library, else it is assumed to cost DEFAULT
    (a typical scientific import on a small machine).
    """
    DEFAULT = 0.25

    def __init__(self, path=None):
        self.path = Path(path) if path else None
        self.known = self._load()

    def _load(self):
        return {k: v for k, v in _read_dict(self.path).items() if isinstance(v.get('s'), (int, float))}

    def seconds(self, module) -> float:
        """Seconds importing `module` costs a worker: 0 for the standard library, else as measured,
        else the default."""
        if module in self.known:
            return self.known[module]['s']
        return 0.0 if module.partition('.')[0] in sys.stdlib_module_names else self.DEFAULT

    def cost(self, modules) -> float:
        """Seconds importing all of `modules` costs a worker."""
        return sum(self.seconds(m) for m in modules)

    def closure(self, modules) -> set[str]:
        """The modules, and those importing them is known to load as well."""
        out = set(modules)
        for module in modules:
            out.update(self.known.get(module, {}).get('brings', ()))
        return out

    def merge(self, observed) -> dict[str, dict[str, Any]]:
        """observed: {module: (seconds, brought, clean)}. A clean measurement (the worker held
        only its start-up imports) replaces the estimate; any other is a lower bound."""
        merged = self._load()
        for module, (seconds, brought, clean) in observed.items():
            old = merged.get(module, {})
            merged[module] = {'s': round(seconds if clean else max(seconds, old.get('s', 0.0)), 4),
                              'brings': sorted(set(brought) | set(old.get('brings', ())))}
        self.known = merged
        return merged


class StepDurations:
    """Seconds each step took, per program: {step_id: {program key: seconds}}.

    A program seen before is expected to take what it took; a new program for
    a known step is expected to take the longest time seen for that step.
    Import costs live next to it (import_costs.json).
    """
    DEFAULT = 1.0
    KEEP = 8        # programs remembered per step

    def __init__(self, path):
        self.path = Path(path) if path else None
        self.known = self._load()
        self.imports = ImportCosts(self.path.with_name('import_costs.json') if self.path else None)

    def _load(self):
        return _read_dict(self.path)

    def expected(self, step_id, key=None) -> float:
        """Seconds step `step_id` is expected to take (its program `key` if known, else its longest
        seen, else the default)."""
        seen = self.known.get(step_id)
        if not seen:
            return self.DEFAULT
        if key in seen:
            return seen[key]
        return max(seen.values())

    def save(self, observed, imports=None) -> None:
        """observed: [(step_id, program key, seconds)]; imports: as ImportCosts.merge takes them."""
        if not imports:
            imports = {}
        if not self.path:
            self.imports.merge(imports)
            return
        if not observed and not imports:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix('.lock'), 'w') as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            merged = self._load()
            for step_id, key, seconds in observed:
                seen = merged.setdefault(step_id, {})
                seen.pop(key, None)
                seen[key] = round(seconds, 3)
                while len(seen) > self.KEEP:
                    seen.pop(next(iter(seen)))
            if observed:
                write_json_atomic(self.path, merged, indent=0)
            if imports:
                write_json_atomic(self.imports.path, self.imports.merge(imports), indent=0)
