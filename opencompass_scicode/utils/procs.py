"""The process table as /proc shows it (Linux): who is whose parent, in which group, alive or not;
sending a signal to processes that may be gone already; and waking a loop when a child ends.

Standard library only: the sandbox's workers use it too, and start fast.
"""
import contextlib
import os
import signal
from typing import Iterator, NamedTuple, Optional


class Proc(NamedTuple):
    state: str        # 'R', 'S', ..., 'Z' for a zombie (dead, waiting to be reaped)
    parent: int
    group: int

    @property
    def live(self) -> bool:
        """Whether the process is not a zombie."""
        return self.state != 'Z'


def read_proc(pid) -> Optional[Proc]:
    """Process `pid`, or None if it is gone."""
    try:
        with open(f'/proc/{pid}/stat', 'rb') as fh:
            stat = fh.read()
    except OSError:
        return None
    # The command name may hold spaces or parentheses: the fields start after the last ')'.
    fields = stat[stat.rfind(b')') + 2:].split()
    if len(fields) < 3:
        return None
    return Proc(fields[0].decode(), int(fields[1]), int(fields[2]))


def process_table() -> dict[int, 'Proc']:
    """{pid: Proc} of every process visible here."""
    table = {}
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            proc = read_proc(entry)
            if proc is not None:
                table[int(entry)] = proc
    return table


def kill(pids, sig=signal.SIGKILL, *, group=False, denied_ok=False) -> int:
    """Send `sig` (SIGKILL unless told) to each of `pids` (one pid, or several), or with
    group=True to each process group they name; the number of those signalled.

    One already gone is skipped (ProcessLookupError), and with denied_ok so is one we
    may not signal (PermissionError); any other error is raised. Nothing is reaped or
    waited for: that is for whoever started them.
    """
    send = os.killpg if group else os.kill
    skipped = (ProcessLookupError, PermissionError) if denied_ok else ProcessLookupError
    sent = 0
    for pid in ([pids] if isinstance(pids, int) else pids):
        try:
            send(pid, sig)
        except skipped:
            continue
        sent += 1
    return sent


@contextlib.contextmanager
def wake_on_child_exit() -> Iterator[int]:
    """A pipe that turns readable when a child process ends (SIGCHLD): yields its read end, for
    select(), to be emptied with `drain`. Main thread only; the handlers before are put back.

    The signal only writes a byte to the pipe (set_wakeup_fd, done by the interpreter in C): a
    handler that took a lock (threading.Event.set) could land while the loop holds that same
    lock, and stop it for good."""
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    os.set_blocking(write_fd, False)
    previous_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    previous = signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    try:
        yield read_fd
    finally:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL if previous is None else previous)
        signal.set_wakeup_fd(previous_fd)
        os.close(read_fd)
        os.close(write_fd)


def drain(fd) -> None:
    """Read a non-blocking pipe empty."""
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass
