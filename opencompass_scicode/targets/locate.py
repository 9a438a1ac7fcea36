"""Which test targets a dataset is scored against, and where they are.

- `official`: the official test_data.h5 (explicit `h5py_file`, or found in the data dir).
- `custom`: an explicit `h5py_file` whose checksum is not the official one.
- `opencompass-per-step`: OpenCompass's layout, one file per step (per_step.py): a directory
  (`h5py_file=`, or `test_data/` in the data dir) or OpenCompass's zip of it.
- `regenerated`: validation problems only (the validation split, or split 'all' with
  sample_ids of validation problems) without the official file: targets rebuilt from the gold code (evaluation/regenerate.py), cached in the data dir under a
  key of the data and library versions.
- `verified`: with `targets='verified'`, SciCode-Verified's corrected test_data_cleaned.h5
  (`h5py_file`, or found in the data dir) whose checksum is the published one; another file
  named there is `custom`.

Nothing here runs code or writes targets: it finds them and says what is missing (fetch.py
fetches what is missing, before any of this is asked).
"""
import json
import sys
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Optional

from ..datasets.files import H5_NAME, H5_SHA256, find_official_h5, sha256_of
from ..errors import DataError
from ..utils.fingerprint import fingerprint
from . import per_step
from .sources import VERIFIED_NAME, VERIFIED_SHA256

# Part of the cache key: bump it when regeneration changes what it records.
REGENERATOR_VERSION = 1


@dataclass
class Targets:
    kind: str
    path: Optional[Path]
    step_ids: frozenset = frozenset()
    report: Optional[dict] = None   # regeneration outcome per step

    def file_for(self, step_id) -> Path:
        """The HDF5 file holding the step's targets."""
        return per_step.step_file(self.path, step_id) if self.kind == per_step.KIND else self.path


def wanted_file(dataset) -> str:
    """The targets file `dataset`'s mode asks for, in words."""
    if dataset.targets == 'verified':
        return f'SciCode-Verified\'s corrected targets, {VERIFIED_NAME} (sha256 {VERIFIED_SHA256[:12]}...)'
    return f'the official test targets, {H5_NAME} (about 1 GB, sha256 {H5_SHA256[:12]}...)'


def manual_steps(dataset, data_dir=None, verified=None) -> str:
    """How to put the targets in place by hand (offline, or when every source refused)."""
    data_dir = Path(data_dir if dataset is None else dataset.data_dir)
    verified = dataset.targets == 'verified' if dataset is not None else verified
    if verified:
        return (f'download {VERIFIED_NAME} from SciCode-Verified\'s data release (its README links it) '
                f'and put it at {data_dir / VERIFIED_NAME}, or set h5py_file=\'/path/to/{VERIFIED_NAME}\'; '
                f'on a machine with access, python -m opencompass_scicode.targets.fetch --source verified '
                f'--data-dir {data_dir} fetches and checks it.')
    return (f'download test_data.h5 from the Google Drive folder linked in the official SciCode '
            f'README (OpenCompass also mirrors it in a zip) and put it at {data_dir / H5_NAME}, '
            f'or set h5py_file=\'/path/to/test_data.h5\' in the dataset config; on a machine with access, '
            f'python -m opencompass_scicode.targets.fetch --data-dir {data_dir} fetches and checks it. '
            f'OpenCompass\'s {per_step.ZIP_NAME} works too: unpack it to {data_dir / per_step.DIR_NAME}/ or name '
            f'the zip or the folder with h5py_file=. Without targets only the validation split can be '
            f'scored (with regenerated targets).')


def _h5_missing_message(dataset):
    return (f'dataset {dataset.abbr!r} (split {dataset.split!r}) needs {wanted_file(dataset)}, which is '
            f'not in {dataset.data_dir}/.\n  fix: {manual_steps(dataset)}')


def remember_digest(path, digest) -> None:
    """sha256 of a ~1 GB file takes seconds: keep it next to the file, keyed by size and time."""
    path = Path(path)
    stat = path.stat()
    stamp = path.with_name(path.name + '.sha256.json')
    try:
        stamp.write_text(json.dumps({'key': {'size': stat.st_size, 'mtime': stat.st_mtime}, 'sha256': digest}))
    except OSError:
        pass


def digest_of(path) -> str:
    """sha256 of `path`, from the stamp beside it when that still fits the file."""
    path = Path(path)
    stat = path.stat()
    stamp = path.with_name(path.name + '.sha256.json')
    try:
        saved = json.loads(stamp.read_text())
        if saved.get('key') == {'size': stat.st_size, 'mtime': stat.st_mtime}:
            return saved['sha256']
    except (OSError, ValueError, KeyError):
        pass
    digest = sha256_of(path)
    remember_digest(path, digest)
    return digest


def _official_sha_matches(path):
    return digest_of(path) == H5_SHA256


def _verified_kind(dataset, path):
    """'verified' when the file is SciCode-Verified's (or the one targets_sha256 pins), else 'custom'."""
    return 'verified' if digest_of(path) in {VERIFIED_SHA256, dataset.targets_sha256} else 'custom'


def regenerated_path(dataset) -> Path:
    """Where the validation targets rebuilt from the gold code are cached for these data and libraries."""
    libs = {name: version(name) for name in ('numpy', 'scipy', 'sympy', 'h5py')}
    key = fingerprint({'data': sha256_of(dataset.files_dir / 'problems_dev.jsonl'),
                       'libs': libs, 'python': sys.version_info[:2],
                       'regenerator': REGENERATOR_VERSION, 'mode': 'official'})
    return dataset.data_dir / 'regenerated' / f'validation_targets_{key}.h5'


def report_path(h5_path) -> Path:
    """Regeneration outcome per step ({step_id: 'ok' | why not}), kept next to the file."""
    return Path(h5_path).with_suffix('.json')


def read_report(h5_path) -> dict[str, str]:
    """The regeneration report beside `h5_path` ({step_id: 'ok' | why not}); {} where there is none."""
    path = report_path(h5_path)
    if not (path.is_file() and Path(h5_path).is_file()):
        return {}
    return json.loads(path.read_text())


def plan_targets(dataset) -> tuple[str, Path]:
    """(kind, path); raises DataError if impossible. Reads no targets: the only work is unpacking
    OpenCompass's zip, once (per_step.unpacked)."""
    if dataset.h5py_file:
        path = Path(dataset.h5py_file)
        if path.is_dir():
            if not per_step.is_per_step_dir(path):
                raise DataError(f'dataset {dataset.abbr!r}: h5py_file {path} is a folder without '
                                f'<step_id>.h5 files.\n  fix: name test_data.h5, or the folder '
                                f'OpenCompass\'s {per_step.ZIP_NAME} unpacks to')
            return per_step.KIND, path
        if not path.is_file():
            raise DataError(f'dataset {dataset.abbr!r}: h5py_file {path} does not exist.\n'
                            f'  fix: correct the path, or remove h5py_file to use {dataset.data_dir / H5_NAME}')
        if path.suffix == '.zip':
            return per_step.KIND, per_step.unpacked(path, dataset.data_dir)
        return ('verified' if dataset.targets == 'verified' else 'official'), path
    if dataset.targets == 'verified':
        path = dataset.data_dir / VERIFIED_NAME
        if path.is_file():
            return 'verified', path
        raise DataError(_h5_missing_message(dataset))
    found = find_official_h5(dataset.data_dir)
    if found:
        return 'official', found
    folder = per_step.found_in(dataset.data_dir)
    if folder:
        return per_step.KIND, folder
    if dataset.validation_only:         # gold code for every problem
        return 'regenerated', regenerated_path(dataset)
    raise DataError(_h5_missing_message(dataset))


def _gap(h5py, fh, step):
    """What the open file lacks of `step`'s targets ('' when nothing)."""
    needed = len(step.test_cases)
    group = fh.get(step.step_id)
    if not isinstance(group, h5py.Group):
        return 'no entry'
    present = sum(isinstance(group.get(f'test{k}'), h5py.Group) for k in range(1, needed + 1))
    return f'{present} of its {needed} tests' if present < needed else ''


def uncovered_steps(dataset, path) -> list[tuple[str, str]]:
    """[(step_id, what is missing)] for the scored steps of `dataset` that the targets cannot
    score: no entry (or no file, per step) for the step, or fewer test groups than it has tests.
    A step without tests (SciCode-Verified's 72.6) needs no entry."""
    import h5py
    path = Path(path)
    steps = [s for p in dataset.problems for s in p.scored_steps if s.test_cases]
    if not path.is_dir():
        with h5py.File(path, 'r') as fh:
            return [(s.step_id, why) for s in steps if (why := _gap(h5py, fh, s))]
    out = []
    for step in steps:
        file = per_step.step_file(path, step.step_id)
        if not file.is_file():
            out.append((step.step_id, f'no file {file.name}'))
            continue
        try:
            with h5py.File(file, 'r') as fh:
                why = _gap(h5py, fh, step)
        except OSError:
            why = f'{file.name} is no readable HDF5 file'
        if why:
            out.append((step.step_id, why))
    return out


def check_coverage(dataset) -> None:
    """Before any request: the targets file covers every scored step of `dataset`, with every test
    it needs. Otherwise each uncovered step would only end as an `eval_error`, after its answer was
    paid for. Regenerated targets are complete by construction (the targets task fills them)."""
    kind, path = plan_targets(dataset)
    if kind == 'regenerated':
        return
    try:
        missing = uncovered_steps(dataset, path)
    except OSError as exc:
        raise DataError(f'dataset {dataset.abbr!r}: the targets file {path} cannot be read as HDF5 ({exc}).\n'
                        f'  fix: download it again ({wanted_file(dataset)}) or correct h5py_file') from None
    if not missing:
        return
    total = dataset.scored_step_count
    shown = ', '.join(f'{sid} ({why})' for sid, why in missing[:5])
    if len(missing) > 5:
        shown += f' and {len(missing) - 5} more'
    raise DataError(
        f'dataset {dataset.abbr!r} (split {dataset.split!r}): the targets in {path} do not cover '
        f'{len(missing)} of its {total} scored steps: {shown}. Nothing was asked of any model: those '
        f'steps could not be scored.\n'
        f'  fix: use the official {H5_NAME} (sha256 {H5_SHA256[:12]}...), or all of OpenCompass\'s '
        f'{per_step.ZIP_NAME}, which cover every split; or keep to the problems these targets cover '
        f'with sample_ids; for an offline check of the pipeline, a stand-in file: '
        f'python -m opencompass_scicode.targets.standin FILE')


def untried_steps(dataset, h5_path) -> list[str]:
    """Scored steps of `dataset` that regeneration into `h5_path` has not tried yet."""
    report = read_report(h5_path)
    return [s.step_id for p in dataset.problems for s in p.scored_steps if s.step_id not in report]


def missing_regenerated(dataset) -> list[str]:
    """Scored steps of `dataset` that regeneration has not tried yet (empty unless it uses regenerated targets)."""
    kind, path = plan_targets(dataset)
    return untried_steps(dataset, path) if kind == 'regenerated' else []


def load_targets(dataset) -> 'Targets':
    """The targets `dataset` is scored against; DataError if regenerated ones are not all there yet."""
    kind, path = plan_targets(dataset)
    if kind == per_step.KIND:
        return Targets(kind, Path(path).resolve(), per_step.step_ids_in(path))
    if kind in ('official', 'verified'):
        from .h5format import step_ids_in     # h5py: only where a targets file is opened
        if kind == 'verified':
            kind = _verified_kind(dataset, path)
        elif not _official_sha_matches(path):
            kind = 'custom'
        return Targets(kind, Path(path).resolve(), frozenset(step_ids_in(path)))
    missing = untried_steps(dataset, path)
    if missing:
        raise DataError(f'regenerated targets {path} lack steps {", ".join(missing)}')
    # The file holds exactly the steps its report says were regenerated ('ok'): no need to open it.
    report = read_report(path)
    return Targets('regenerated', path.resolve(), frozenset(s for s, why in report.items() if why == 'ok'), report)


def targets_digest(targets) -> str:
    """sha256 of the targets a dataset was scored against (cached beside the file, see digest_of);
    for OpenCompass's one file per step, the sha256 of their names and digests in name order."""
    path = Path(targets.path)
    if not path.is_dir():
        return digest_of(path)
    import hashlib
    whole = hashlib.sha256()
    for item in sorted(path.glob('*.h5')):
        whole.update(f'{item.name} {digest_of(item)}\n'.encode('utf-8'))
    return whole.hexdigest()
