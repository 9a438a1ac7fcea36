"""One run.py at a time on a run directory.

Two run.py processes on the same run (a `-r` started while the first still
works) would append to the same predictions and overwrite each other's
results. run.py holds `.lock` exclusively for its lifetime and writes its pid
into it. Its tasks hold `.tasks.lock` shared while they run: when run.py is
killed outright its tasks take a few seconds to notice and stop, and a new
run.py waits for them before it starts.

Who holds `.lock` is asked of the kernel (/proc/locks), not read from the file: the file
names its holder only once the holder has written it, so a run.py refused just after a new
holder took the lock would read the pid of the one before, maybe long dead.
"""
import fcntl
import os
import time
from pathlib import Path
from typing import TextIO

from ..errors import UserFacingError


class RunDirBusy(UserFacingError):
    pass


def _try_lock(fh, mode):
    try:
        fcntl.flock(fh, mode | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


class RunLock:
    def __init__(self, root):
        self.root = Path(root)
        self._held = []

    def acquire(self, wait_for_tasks_s=30.0) -> 'RunLock':
        """Take the run for this process, or raise RunDirBusy saying who has it."""
        self.root.mkdir(parents=True, exist_ok=True)
        main = open(self.root / '.lock', 'a+')
        if not _try_lock(main, fcntl.LOCK_EX):
            owner = holder_of(main)
            main.close()
            raise RunDirBusy(
                f'{self.root} is in use by another run.py (pid {owner}).\n'
                f'  fix: wait for it to finish (or stop it), or start a new run without -r')
        self._held.append(main)
        try:            # for a person looking; a full disk is found by the run's first real write
            main.seek(0)
            main.truncate()
            main.write(str(os.getpid()))
            main.flush()
        except OSError:
            pass
        tasks = open(self.root / '.tasks.lock', 'a')
        deadline = time.monotonic() + wait_for_tasks_s
        while not _try_lock(tasks, fcntl.LOCK_EX):
            if time.monotonic() > deadline:
                tasks.close()
                self.release()
                raise RunDirBusy(
                    f'tasks of an earlier run.py are still running in {self.root} after '
                    f'{wait_for_tasks_s:.0f} s.\n  fix: stop them (see the logs/ of this run for '
                    f'their names) and try again')
            time.sleep(0.2)
        tasks.close()           # free again: this run's own tasks take it shared
        return self

    def release(self) -> None:
        """Let go of the run."""
        for fh in self._held:
            fh.close()
        self._held = []


def holder_of(fh) -> str:
    """The pid holding an flock on the open file `fh` as the kernel tells it, else what the file
    says (its holder writes its pid once it has the lock), else 'unknown'."""
    stat = os.fstat(fh.fileno())
    where = f'{os.major(stat.st_dev):02x}:{os.minor(stat.st_dev):02x}:{stat.st_ino}'
    try:
        with open('/proc/locks') as locks:
            for line in locks:
                fields = line.split()
                # "1: FLOCK  ADVISORY  WRITE 1234 fe:00:5678 0 EOF"; a waiter's line has "->"
                if len(fields) >= 6 and fields[1] == 'FLOCK' and fields[5] == where \
                        and fields[4].isdigit() and int(fields[4]) > 0:
                    return fields[4]
    except OSError:
        pass
    fh.seek(0)
    return fh.read().strip() or 'unknown'


def hold_for_task(root) -> TextIO:
    """A task's shared hold on its run (kept until the process exits)."""
    fh = open(Path(root) / '.tasks.lock', 'a')
    fcntl.flock(fh, fcntl.LOCK_SH)
    return fh
