"""The process table as /proc shows it (Linux): who is whose parent, in which group, alive or not;
and sending a signal to processes that may be gone already.

Standard library only: the sandbox's workers use it too, and start fast.
"""
import os
import signal
from typing import NamedTuple, Optional


class Proc(NamedTuple):
    state: str        # 'R', 'S', ..., 'Z' for a zombie (dead, waiting to be reaped)
    parent: int
    group: int

    @property
    def live(self):
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


def process_table():
    """{pid: Proc} of every process visible here."""
    table = {}
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            proc = read_proc(entry)
            if proc is not None:
                table[int(entry)] = proc
    return table


def kill(pids, sig=signal.SIGKILL, *, group=False, denied_ok=False):
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
