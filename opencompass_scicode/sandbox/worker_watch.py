"""Watching a running step from the worker: its output, its clock, and why it ended.

The worker waits on the step's pipes (stdout, stderr and the harness's
report), on the step's pidfd and on the host's job channel at once. The step
ends when it exits, when its time is up, when it has more processes than
allowed (counted here wherever no `pids` cgroup holds the step) or when the
host is gone. Once the harness reports the verdict decided, the step may go
on for information on a clock of its own (forensics.extra_time); running out
of that is no time-out. Output is kept capped, head and tail.

Just before a step is stopped for its time limit (with forensics on), the worker
asks it for its Python stack (worker_child.py) and reads it from the stack pipe
for at most STACK_WAIT_S; then the step is killed as before.
"""
import json
import os
import select
import signal
import time

from .forensics import extra_time
from .worker_child import STACK_SIGNAL
from .worker_reaper import count_descendants

INFO_GRACE_S = 0.5       # after the information time: for the harness to report and leave
STACK_WAIT_S = 1.0       # for the step's stack once asked (it comes within milliseconds)
STACK_QUIET_S = 0.1      # no more of it this long after its first bytes: it is all there
STACK_CAP = 16 * 1024


class CappedBuffer:
    """Keeps the first and last `cap/2` bytes of a stream, counts the rest."""

    def __init__(self, cap):
        self.half = max(1, cap // 2)
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def feed(self, data) -> None:
        """Keep `data`: the head and the tail within the cap, a count of what is left out between."""
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.half:
                cut = len(self.tail) - self.half
                self.dropped += cut
                del self.tail[:cut]

    def text(self) -> str:
        """What was kept, as text: the head, a marker of what was left out, the tail."""
        middle = f'\n...[{self.dropped} bytes cut]...\n'.encode() if self.dropped else b''
        return (bytes(self.head) + middle + bytes(self.tail)).decode('utf-8', errors='replace')


class Decision:
    """Watches the report stream for the harness's `decided` event (with this step's nonce):
    the moment the verdict was decided, when the step goes on for information."""

    def __init__(self, nonce):
        self.marker = nonce.encode()
        self.partial = b''
        self.at = None

    def feed(self, data) -> bool:
        """Read more of the step's report; True once the harness says the verdict is decided."""
        lines = (self.partial + data).split(b'\n')
        self.partial = lines.pop()[-4096:]       # an unfinished line; a long one is not ours
        for line in lines:
            if b'"decided"' in line and self.marker in line:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if isinstance(event, dict) and event.get('event') == 'decided' and \
                        event.get('nonce') == self.marker.decode():
                    self.at = time.monotonic()
                    return True
        return False


class StepWatch:
    """One running step, seen from the worker: what it wrote, and how it ended.

    `status` is its wait status once reaped; `timed_out`, `too_many` (processes)
    and `host_gone` say why the worker stopped it otherwise.
    """

    def __init__(self, job, started, pipes, poll_procs):
        self.out_r, self.err_r, self.rep_r, self.stack_r = pipes
        cap = job['limits'].get('max_output_bytes', 64 * 1024)
        self.buffers = {self.out_r: CappedBuffer(cap), self.err_r: CappedBuffer(cap),
                        self.rep_r: CappedBuffer(1 << 20)}
        self.open_fds = set(self.buffers)
        self.stack = CappedBuffer(STACK_CAP)
        self.wants_stack = bool(job.get('forensics'))
        self.started = started
        self.deadline = started + job['limits']['timeout']
        self.later_tests_s = job.get('later_tests_s', 0)
        self.decision = Decision(job['nonce'])
        self.poll_procs = poll_procs
        self.timed_out, self.too_many, self.host_gone, self.status = False, False, False, None

    def follow(self, pid, pidfd, host_fd) -> None:
        """Read its output until the step ends or the worker must stop it."""
        while self.status is None:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                self.timed_out = self.decision.at is None  # after the verdict, the end of its information time
                if self.timed_out and self.wants_stack:
                    self.take_stack(pidfd)
                return
            if self.poll_procs and count_descendants(os.getpid()) > self.poll_procs:
                self.too_many = self.decision.at is None
                return
            wait = min(remaining, 0.05 if self.poll_procs else 1.0)
            ready, _, _ = select.select(list(self.open_fds) + [pidfd, host_fd], [], [], wait)
            if host_fd in ready:     # the host never writes while a step runs: this is its end (EOF)
                self.host_gone = True
                return
            self._read([fd for fd in ready if fd != pidfd])
            if pidfd in ready:
                _, self.status = os.waitpid(pid, 0)

    def take_stack(self, pidfd) -> None:
        """Ask the step for its Python stack and read it (the step is killed afterwards)."""
        try:
            signal.pidfd_send_signal(pidfd, STACK_SIGNAL)
        except OSError:              # it is gone already
            return
        end = time.monotonic() + STACK_WAIT_S
        while True:
            wait = end - time.monotonic()
            if self.stack.head:
                wait = min(wait, STACK_QUIET_S)
            if wait <= 0:
                return
            ready, _, _ = select.select([self.stack_r], [], [], wait)
            if not ready:
                return
            data = os.read(self.stack_r, 65536)
            if not data:
                return
            self.stack.feed(data)

    def _read(self, fds):
        for fd in fds:
            data = os.read(fd, 65536)
            if not data:
                self.open_fds.discard(fd)
                continue
            self.buffers[fd].feed(data)
            if fd == self.rep_r and self.decision.at is None and self.decision.feed(data):
                # The verdict is decided: what follows is for information, on its own clock.
                at = self.decision.at
                self.deadline = at + extra_time(at - self.started, self.later_tests_s) + INFO_GRACE_S

    def drain(self) -> None:
        """Once every writer is dead: read what is left in the pipes, then close them."""
        for fd in list(self.open_fds):
            while True:
                ready, _, _ = select.select([fd], [], [], 0.5)
                data = os.read(fd, 65536) if ready else b''
                if not data:
                    break
                self.buffers[fd].feed(data)
        for fd in (*self.buffers, self.stack_r):
            os.close(fd)

    def texts(self) -> dict[str, str]:
        """{'stdout', 'stderr', 'report', 'stack'}: what the step wrote, capped (the stack: its
        Python stack when it was stopped for its time limit, else empty)."""
        return {'stdout': self.buffers[self.out_r].text(), 'stderr': self.buffers[self.err_r].text(),
                'report': self.buffers[self.rep_r].text(), 'stack': self.stack.text()}
