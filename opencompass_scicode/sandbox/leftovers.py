"""What a worker leaves behind when it is killed outright, and sweeping it.

A worker makes a work root for its steps' directories and, where it may, cgroups
of its own (lockdown.WorkerCgroups), and removes them when it ends. Killed with
SIGKILL (by a user stopping a run, the OOM killer, or a host whose worker stopped
answering) it cannot: the cgroups stay, with any process a step detached still in
them, and so does the work root. Both are named after the worker's pid, so whoever
starts an executor next can tell which belong to workers that are gone.
"""
import os
import re
import shutil
import tempfile
import threading
import time

from ..utils.procs import kill
from .lockdown import cgroup_parent, cgroup_pids

WORKROOT = re.compile(r'scicode-steps-(\d+)-\w+')     # \w+: what tempfile.mkdtemp appends
CGROUP = re.compile(r'scicode-worker-(\d+)')
CONTROLLERS = ('pids', 'memory')
_WORKER_CMDLINE = b'opencompass_scicode.sandbox.worker'

_sweeping = threading.Lock()
_swept = False


def make_workroot() -> str:
    """A directory for the steps of this worker, named so that a sweep knows whose it is."""
    return tempfile.mkdtemp(prefix=f'scicode-steps-{os.getpid()}-')


def cgroup_name() -> str:
    """The name of this worker's cgroups: its pid, so that a sweep knows whose they are."""
    return f'scicode-worker-{os.getpid()}'


def worker_alive(pid) -> bool:
    """A live worker: not gone, not a zombie, not another program that got its pid since."""
    try:
        with open(f'/proc/{pid}/cmdline', 'rb') as fh:
            return _WORKER_CMDLINE in fh.read()     # empty for a zombie
    except OSError:
        return False


def _owned(directory, pattern):
    """{owner pid: [paths]} of the entries of `directory` that `pattern` names."""
    owners = {}
    try:
        entries = os.listdir(directory)
    except OSError:
        return owners
    for entry in entries:
        match = pattern.fullmatch(entry)
        if match:
            owners.setdefault(int(match.group(1)), []).append(os.path.join(directory, entry))
    return owners


def _cgroups():
    owners = {}
    for controller in CONTROLLERS:
        parent = cgroup_parent(controller)
        if parent is not None:
            for pid, paths in _owned(parent, CGROUP).items():
                owners.setdefault(pid, []).extend(paths)
    return owners


def remove_cgroup(path, wait_s=5.0) -> bool:
    """Kill what is still in the cgroup, then remove it (possible once its processes are gone)."""
    deadline = time.monotonic() + wait_s
    while True:
        kill(cgroup_pids(path))
        try:
            os.rmdir(path)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)


def sweep_worker(pid, cgroups=None, workroots=None) -> None:
    """Remove what worker `pid` (gone, or being killed) left: its cgroups, and what runs in
    them, first, so that no step is left writing in the work roots removed next."""
    if cgroups is None:
        cgroups = _cgroups().get(pid, [])
    if workroots is None:
        workroots = _owned(tempfile.gettempdir(), WORKROOT).get(pid, [])
    for path in cgroups:
        remove_cgroup(path)
    for path in workroots:
        shutil.rmtree(path, ignore_errors=True)


def sweep_stale() -> None:
    """Sweep what every worker that is no longer alive left behind."""
    cgroups = _cgroups()
    workroots = _owned(tempfile.gettempdir(), WORKROOT)
    for pid in set(cgroups) | set(workroots):
        if not worker_alive(pid):
            sweep_worker(pid, cgroups.get(pid, []), workroots.get(pid, []))


def sweep_once() -> None:
    """sweep_stale, the first time a process calls it: leftovers are from runs before this one."""
    global _swept
    with _sweeping:
        if _swept:
            return
        _swept = True
    sweep_stale()
