"""The processes below a worker: counting them, killing them and reaping them.

A worker is a child subreaper (lockdown.set_subreaper): whatever a step starts,
even after setsid or a double fork, comes back to the worker as an orphan, so
the worker's subtree is the step and all it started. Counting that subtree
holds the process limit where no `pids` cgroup does, and killing it after each
step is the clean-up that needs neither cgroups nor the step's keeping to its
process group. The zygote does the same for its workers.
"""
import os
import time

from ..utils.procs import kill, process_table


def _parent_map():
    """{pid: parent pid} of every process we can see."""
    return {pid: proc.parent for pid, proc in process_table().items()}


def _children_of(pid):
    return [child for child, parent in _parent_map().items() if parent == pid]


def _reap():
    """Reap finished children; True if some child is still running."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def kill_descendants() -> None:
    """SIGKILL every process below this one (orphans come back to us as subreaper)."""
    me = os.getpid()
    for _ in range(10000):
        if not _reap():
            return
        kill(_children_of(me))
        time.sleep(0.001)


def count_descendants(root) -> int:
    """Processes below `root` (orphans come back to it, so its subtree is the whole step)."""
    parents = _parent_map()
    count = 0
    for pid in parents:
        seen = pid
        for _ in range(64):
            seen = parents.get(seen)
            if seen is None:
                break
            if seen == root:
                count += 1
                break
    return count


def count_user_processes(uid) -> int:
    """Processes that `uid` owns (RLIMIT_NPROC counts them all, not only the step's)."""
    count = 0
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                if os.stat(f'/proc/{entry}').st_uid == uid:
                    count += 1
            except OSError:
                pass
    return count
