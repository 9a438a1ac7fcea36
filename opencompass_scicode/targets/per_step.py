"""OpenCompass's layout of the test targets: one file per step.

OpenCompass ships the targets as `scicode_test_data.zip`, which unpacks to
`data/scicode/test_data/<step_id>.h5`; each file holds the group `<step_id>/test<k>` of the
official layout, so each step reads as from the official file. A directory of such files
works wherever test_data.h5 does, found at `<data dir>/test_data/` or named with `h5py_file=`
(the directory, or the zip itself, unpacked once into the data dir's cache). Results call these
targets `opencompass-per-step`.
"""
import zipfile
from pathlib import Path

from ..errors import DataError
from ..utils.fingerprint import fingerprint

KIND = 'opencompass-per-step'
DIR_NAME = 'test_data'
ZIP_NAME = 'scicode_test_data.zip'


def is_per_step_dir(path) -> bool:
    """Whether `path` is a folder of OpenCompass's per-step targets files."""
    path = Path(path)
    return path.is_dir() and any(path.glob('*.h5'))


def found_in(data_dir) -> Path | None:
    """`<data dir>/test_data/` when it holds step files, else None."""
    folder = Path(data_dir) / DIR_NAME
    return folder if is_per_step_dir(folder) else None


def step_file(folder, step_id) -> Path:
    """The targets file of `step_id` in a per-step folder."""
    return Path(folder) / f'{step_id}.h5'


def step_ids_in(folder) -> frozenset[str]:
    """The step ids a per-step folder holds a file for."""
    return frozenset(p.stem for p in Path(folder).glob('*.h5'))


def unpack(zip_path, dest) -> None:
    """The zip's <step_id>.h5 files into `dest`, flat whatever folder the zip has them in (never a
    path out of `dest`), each under its name only once whole. BadZipFile as zipfile raises it."""
    with zipfile.ZipFile(zip_path) as zf:
        members = [m for m in zf.infolist() if m.filename.endswith('.h5') and not m.is_dir()]
        if not members:
            raise DataError(f'{zip_path} holds no <step_id>.h5 files; is it OpenCompass\'s {ZIP_NAME}?')
        dest.mkdir(parents=True, exist_ok=True)
        for member in members:
            target = dest / Path(member.filename).name
            with zf.open(member) as src, open(target.with_suffix('.partial'), 'wb') as out:
                while chunk := src.read(1 << 20):
                    out.write(chunk)
            target.with_suffix('.partial').replace(target)


def unpacked(zip_path, data_dir) -> Path:
    """The directory OpenCompass's zip unpacks to, under the data dir's cache (done once per zip
    file: its path, size and time name the place)."""
    zip_path = Path(zip_path).resolve()
    stat = zip_path.stat()
    key = fingerprint({'zip': str(zip_path), 'size': stat.st_size, 'mtime_ns': stat.st_mtime_ns})
    dest = Path(data_dir) / 'cache' / 'opencompass_targets' / key
    done = dest / '.complete'
    if done.is_file():
        return dest
    try:
        unpack(zip_path, dest)
    except zipfile.BadZipFile as exc:
        raise DataError(f'{zip_path} is not a readable zip file ({exc}).\n'
                        f'  fix: download {ZIP_NAME} again, or unpack it yourself and name the folder '
                        f'with h5py_file=') from None
    done.write_text('')
    return dest
