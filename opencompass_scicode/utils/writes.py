"""Every file a run writes goes through here: whole files are replaced whole (write, sync, rename,
sync the folder), records are appended and synced, and a write refused for lack of space becomes
one NoSpaceError naming the file.

A test-only hook makes the disk "fill up" at the N-th write, so that a test can stop a run at
every write it makes, in turn (as SQLite's I/O-error tests do): with

    OPENCOMPASS_SCICODE_FAIL_WRITE=N:COUNTER[:UNDER[:CONTAINING]]

every write to a file under UNDER (every file without it) whose path holds CONTAINING (if given)
is counted, across all the run's processes, in the file COUNTER (one byte per write;
COUNTER.paths gets "n time path" per line). The N-th is refused with ENOSPC, as a full disk
refuses it, and from then on every write under UNDER is (COUNTER.full marks the disk full;
N = 0: count only). The variable reaches the tasks, launcher and step pool through their
environment.
"""
import errno
import json
import os
import threading
import time
from pathlib import Path

from ..errors import NoSpaceError, out_of_space

FAIL_ENV = 'OPENCOMPASS_SCICODE_FAIL_WRITE'


def before_write(path) -> None:
    """Count a write of `path` (the test hook; nothing when FAIL_ENV is unset), refused with
    OSError(ENOSPC) once the hook says the disk is full."""
    spec = os.environ.get(FAIL_ENV)
    if not spec:
        return
    limit, counter, under, containing = (spec.split(':', 3) + ['', ''])[:4]
    path = os.path.abspath(path)
    if under and not path.startswith(os.path.abspath(under) + os.sep):
        return
    full = f'{counter}.full'
    if os.path.exists(full):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)
    if containing not in path:
        return
    # O_APPEND: the byte lands at the end whoever else writes, and the offset after it is ours
    fd = os.open(counter, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, b'.')
        number = os.lseek(fd, 0, os.SEEK_CUR)
    finally:
        os.close(fd)
    fd = os.open(f'{counter}.paths', os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, f'{number} {time.time():.3f} {path}\n'.encode())
    finally:
        os.close(fd)
    if int(limit) and number >= int(limit):
        open(full, 'a').close()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)


def _no_space_or_raise(exc, path):
    if out_of_space(exc):
        raise NoSpaceError(path) from None
    raise exc


def sync_folder(folder) -> None:
    """Make a rename (or a new file) in `folder` survive a power cut."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_whole(tmp, path, data, durable=True) -> None:
    """Write `data` (text, or bytes) to `tmp`, then rename it over `path`: `path` is the old file
    or the new one, never a part. `durable`: the file, then the rename, are synced to the disk
    first (a power cut leaves the old or the new file, not an empty one). A write that fails
    (a full disk) leaves `path` as it was and no `tmp` behind."""
    tmp, path = Path(tmp), Path(path)
    try:
        before_write(path)
        with open(tmp, 'wb') as fh:
            fh.write(data.encode('utf-8') if isinstance(data, str) else data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
        if durable:
            sync_folder(path.parent)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        _no_space_or_raise(exc, path)


def write_whole(path, data, durable=True) -> None:
    """`path` replaced whole by `data` (text or bytes), through a temporary file beside it that
    keeps its suffix (some readers go by it); safe from several threads and processes."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f'.{path.stem}.{os.getpid()}.{threading.get_ident()}.tmp{path.suffix}')
    replace_whole(tmp, path, data, durable)


def write_json_atomic(path, obj, indent=1, durable=True) -> None:
    """Readers see the old file or the new one, never half of it; safe from several threads."""
    write_whole(path, json.dumps(obj, indent=indent, ensure_ascii=False), durable)


def append_synced(path, text) -> None:
    """Append `text` (whole records) to `path` and sync it: once this returns, a power cut keeps
    it. A write cut short (a full disk) may leave part of it: readers skip a torn last line."""
    path = Path(path)
    try:
        before_write(path)
        with open(path, 'a', encoding='utf-8') as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        _no_space_or_raise(exc, path)


def create_exclusive(path, text) -> None:
    """Create `path` holding `text`, failing with FileExistsError if it exists (a claim)."""
    try:
        before_write(path)
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        raise
    except OSError as exc:
        _no_space_or_raise(exc, path)
    try:
        with os.fdopen(fd, 'w') as fh:
            fh.write(text)
    except OSError as exc:
        Path(path).unlink(missing_ok=True)
        _no_space_or_raise(exc, path)
