"""Each distinct step program's verdict, once per run.

`SharedVerdicts`: eval tasks of one run (separate processes) score identical
step programs — same program text, tests, targets and limits; for example a
model whose answers are the same with and without background. The first task
to claim a program runs it; the others reuse its record.

They are the claims of the step pool (pool/step_pool.py): it runs a program only
if no verdict is known and no live process here runs it. Step durations are
remembered in pool/timings.py.
"""
import hashlib
import json
import os
import socket
from pathlib import Path
from typing import Any

from ..utils.writes import create_exclusive, write_json_atomic
from ..utils.fingerprint import fingerprint


def verdicts_dir(run_root) -> Path:
    """Where a run keeps its verdicts."""
    return Path(run_root) / 'cache' / 'verdicts'


def program_key(job, targets_identity, verdict_settings) -> str:
    """The key of a step program: equal keys, equal programs, targets and verdict settings, so one
    verdict serves them all."""
    digest = hashlib.sha256()
    for part in (job.step_id, job.program, json.dumps(list(job.tests)), job.dependencies,
                 json.dumps(targets_identity, sort_keys=True), json.dumps(verdict_settings, sort_keys=True)):
        digest.update(part.encode('utf-8'))
        digest.update(b'\0')
    return digest.hexdigest()[:32]


def targets_identity(path) -> dict[str, Any]:
    """What a verdict's targets were: the file (or, per step, the folder of files) as it is now."""
    path = Path(path)
    if path.is_dir():
        files = sorted((f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in path.glob('*.h5'))
        return {'path': str(path.resolve()), 'files': fingerprint(files)}
    stat = os.stat(path)
    return {'path': str(path.resolve()), 'size': stat.st_size, 'mtime_ns': stat.st_mtime_ns}


HOST = socket.gethostname()


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class SharedVerdicts:
    def __init__(self, directory):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)

    def _result(self, key):
        return self.dir / f'{key}.json'

    def _claim(self, key):
        return self.dir / f'{key}.claim'

    def get(self, key) -> dict[str, Any] | None:
        """The verdict record kept for `key`, or None."""
        try:
            return json.loads(self._result(key).read_text())
        except (OSError, ValueError):
            return None

    def settled(self, key) -> bool:
        """Has the program a verdict already (the step pool then does not run it)?"""
        return self.get(key) is not None

    def try_claim(self, key) -> bool:
        """True: the caller must run it. False: someone else is running it right now."""
        claim = self._claim(key)
        for _ in range(2):
            try:
                create_exclusive(claim, f'{HOST} {os.getpid()}')
            except FileExistsError:
                try:
                    host, _, pid = claim.read_text().rpartition(' ')
                    owner = int(pid or 0)
                except (OSError, ValueError):
                    host, owner = '', 0
                if host and host != HOST:
                    # Another node of a cluster (the run directory on a shared file system): whether
                    # its owner lives cannot be told from here, and waiting on a dead node would
                    # never end. Run it as well; the verdict is the same.
                    return True
                if owner and _alive(owner):
                    return False
                claim.unlink(missing_ok=True)     # its owner died: take over
                continue
            return True
        return False

    def put(self, key, record) -> None:
        """Keep `record` as the verdict of `key`, and give up the claim on it."""
        write_json_atomic(self._result(key), record, indent=None)
        self._claim(key).unlink(missing_ok=True)

    def release(self, key) -> None:
        """Give up the claim on `key` without a verdict (someone else may run it)."""
        self._claim(key).unlink(missing_ok=True)

    def put_meta(self, name, value) -> None:
        """Keep `value` under `name` beside the verdicts."""
        write_json_atomic(self.dir / f'_{name}.json', value, indent=None)

    def get_meta(self, name) -> Any:
        """The value kept under `name` (put_meta)."""
        try:
            return json.loads((self.dir / f'_{name}.json').read_text())
        except (OSError, ValueError):
            return None


class LocalVerdicts(SharedVerdicts):
    """Same interface, nothing shared: for evaluations outside a run directory."""

    def __init__(self):
        self._results = {}

    def get(self, key) -> dict[str, Any] | None:
        """The verdict record of `key` from this process, or None."""
        return self._results.get(key)

    def settled(self, key) -> bool:
        """Whether `key` has a verdict here."""
        return key in self._results

    def try_claim(self, key) -> bool:
        """Always True: nobody else runs programs for this process."""
        return True

    def put(self, key, record) -> None:
        """Keep `record` as the verdict of `key`."""
        self._results[key] = record

    def release(self, key) -> None:
        """Nothing to give up: claims are not kept in one process."""
        pass
