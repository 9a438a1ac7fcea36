"""utils.procs.kill, the one helper that signals processes which may be gone already: it kills
each pid of a list or each member of a process group, skips a pid no process has, and raises
what it was not told to skip."""
import os
import signal
import subprocess

import pytest

from opencompass_scicode.utils import procs
from opencompass_scicode.utils.procs import kill

SLEEP = ['sleep', '600']
BOUND_S = 30          # only a bound for a failing test: a killed process is reaped at once


def _no_such_pid():
    """A pid no process can have: the kernel hands out pids below pid_max."""
    with open('/proc/sys/kernel/pid_max') as fh:
        return int(fh.read())


def _killed(proc):
    """Reap `proc`; True if SIGKILL ended it (a TimeoutExpired fails the test: it still runs)."""
    return proc.wait(timeout=BOUND_S) == -signal.SIGKILL


def _stop(procs_started):
    for proc in procs_started:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_kills_every_pid_of_a_list_and_skips_one_already_gone():
    started = [subprocess.Popen(SLEEP) for _ in range(2)]
    try:
        assert all(proc.poll() is None for proc in started)
        assert kill([started[0].pid, _no_such_pid(), started[1].pid]) == 2
        assert all(_killed(proc) for proc in started)
    finally:
        _stop(started)


def test_a_single_pid_and_another_signal():
    proc = subprocess.Popen(SLEEP)
    try:
        assert kill(proc.pid, signal.SIGTERM) == 1
        assert proc.wait(timeout=BOUND_S) == -signal.SIGTERM
        assert kill(_no_such_pid()) == 0
    finally:
        _stop([proc])


def test_kills_a_whole_process_group_and_nothing_outside_it():
    # Groups of our own session: a process may join only a group of its session.
    leader = subprocess.Popen(SLEEP, preexec_fn=lambda: os.setpgid(0, 0))
    started = [leader]
    try:
        member = subprocess.Popen(SLEEP, preexec_fn=lambda: os.setpgid(0, leader.pid))
        outsider = subprocess.Popen(SLEEP, preexec_fn=lambda: os.setpgid(0, 0))
        started += [member, outsider]
        assert os.getpgid(member.pid) == leader.pid != os.getpgid(outsider.pid)
        assert kill([leader.pid, _no_such_pid()], group=True) == 1
        assert _killed(leader) and _killed(member)
        assert outsider.poll() is None
    finally:
        _stop(started)


def test_a_pid_we_may_not_signal_is_skipped_only_when_told(monkeypatch):
    def denied(pid, sig):
        raise PermissionError(1, 'Operation not permitted')
    monkeypatch.setattr(procs.os, 'kill', denied)
    with pytest.raises(PermissionError):
        kill([12345])
    assert kill([12345, 12346], denied_ok=True) == 0
