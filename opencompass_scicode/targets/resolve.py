"""Which test targets a dataset is scored against, and where they are.

- `official`: the official test_data.h5 (explicit `h5py_file`, or found in the data dir).
- `custom`: an explicit `h5py_file` whose checksum is not the official one.
- `regenerated`: validation split without the official file; see regenerate.py.
"""
import fcntl
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..datasets.files import H5_NAME, H5_SHA256, find_official_h5, sha256_of
from ..errors import DataError
from .h5format import step_ids_in


@dataclass
class Targets:
    kind: str
    path: Optional[Path]
    step_ids: frozenset = frozenset()
    report: Optional[dict] = None   # regeneration outcome per step


def _h5_missing_message(dataset):
    return (f'dataset {dataset.abbr!r} (split {dataset.split!r}) needs the official test targets, '
            f'{H5_NAME} (about 1 GB, sha256 {H5_SHA256[:12]}...), which is not in {dataset.data_dir}/.\n'
            f'  fix: download test_data.h5 from the Google Drive folder linked in the official SciCode '
            f'README (OpenCompass also mirrors it in a zip) and put it at {dataset.data_dir / H5_NAME}, '
            f'or set h5py_file=\'/path/to/test_data.h5\' in the dataset config. Without it only the '
            f'validation split can be scored (with regenerated targets).')


def _official_sha_matches(path):
    """sha256 of a ~1 GB file takes seconds; remember it next to the file."""
    path = Path(path)
    stat = path.stat()
    stamp = path.with_name(path.name + '.sha256.json')
    key = {'size': stat.st_size, 'mtime': stat.st_mtime}
    try:
        saved = json.loads(stamp.read_text())
        if saved.get('key') == key:
            return saved['sha256'] == H5_SHA256
    except (OSError, ValueError, KeyError):
        pass
    digest = sha256_of(path)
    try:
        stamp.write_text(json.dumps({'key': key, 'sha256': digest}))
    except OSError:
        pass
    return digest == H5_SHA256


def plan_targets(dataset):
    """(kind, path) without doing any expensive work; raises DataError if impossible."""
    if dataset.h5py_file:
        path = Path(dataset.h5py_file)
        if not path.is_file():
            raise DataError(f'dataset {dataset.abbr!r}: h5py_file {path} does not exist.\n'
                            f'  fix: correct the path, or remove h5py_file to use {dataset.data_dir / H5_NAME}')
        return 'official', path
    found = find_official_h5(dataset.data_dir)
    if found:
        return 'official', found
    if dataset.split == 'validation':
        from .regenerate import cache_path
        return 'regenerated', cache_path(dataset)
    raise DataError(_h5_missing_message(dataset))


def resolve_targets(dataset, regenerate_missing=True, progress=None):
    kind, path = plan_targets(dataset)
    if kind == 'official':
        if not _official_sha_matches(path):
            kind = 'custom'
        return Targets(kind, Path(path).resolve(), frozenset(step_ids_in(path)))
    return _regenerated(dataset, path, regenerate_missing, progress)


def _regenerated(dataset, path, regenerate_missing, progress):
    from .regenerate import regenerate
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix('.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)   # one regeneration at a time across eval tasks
        report_path = path.with_suffix('.json')
        report = json.loads(report_path.read_text()) if report_path.is_file() and path.is_file() else {}
        wanted = {s.step_id for p in dataset.problems for s in p.scored_steps}
        if wanted - set(report):
            if not regenerate_missing:
                raise DataError(f'regenerated targets {path} lack steps {sorted(wanted - set(report))}')
            print(f'[targets] no official {H5_NAME}: regenerating validation targets from the gold '
                  f'code into {path} (cached)', file=sys.stderr, flush=True)
            report = regenerate(dataset, path, progress=progress)
    return Targets('regenerated', path.resolve(), frozenset(step_ids_in(path)), report)


def needs_regeneration(dataset):
    kind, path = plan_targets(dataset)
    if kind != 'regenerated':
        return False
    report_path = path.with_suffix('.json')
    if not (path.is_file() and report_path.is_file()):
        return True
    report = json.loads(report_path.read_text())
    return any(s.step_id not in report for p in dataset.problems for s in p.scored_steps)
