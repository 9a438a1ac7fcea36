"""At most one running step per CPU of this machine, however many processes score steps.

Each evaluation task sizes its pool to the CPUs it was given, but several may
run on one machine at once: the inference tasks of a sweep each score their
problems as they finish, and Slurm jobs that share CPUs land on one node.
Steps that outnumber the CPUs stretch each other's wall time, and a step's
time limit is wall time: a step that passes alone could time out in a crowd.
So a step holds one of the machine's CPU slots while it runs.

A slot is an exclusive `flock` on one of N files in the machine's temporary
directory (N = its CPUs). The kernel releases it when its holder dies, however
it dies, so a crashed run never leaves a slot taken.
"""
import contextlib
import fcntl
import os
import random
import tempfile
import time
from typing import Iterator

POLL_S = 0.01


class CpuSlots:
    def __init__(self, count=None, directory=None):
        self.count = max(1, count or os.cpu_count() or 1)
        self.dir = directory or os.path.join(tempfile.gettempdir(), f'scicode-cpu-slots-{os.getuid()}')
        os.makedirs(self.dir, exist_ok=True)

    def _try(self, index):
        fd = os.open(os.path.join(self.dir, f'slot-{index}'), os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            os.close(fd)
            return None

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Wait for a free slot; hold it for the block. Waiting only happens when more steps run
        on this machine than it has CPUs."""
        start = random.randrange(self.count)     # holders spread over the files
        fd = None
        while fd is None:
            for offset in range(self.count):
                fd = self._try((start + offset) % self.count)
                if fd is not None:
                    break
            else:
                time.sleep(POLL_S)
        try:
            yield
        finally:
            os.close(fd)        # closing the only descriptor releases the lock
