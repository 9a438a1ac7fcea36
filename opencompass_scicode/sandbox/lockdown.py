"""Locks down a freshly forked step process before untrusted code runs in it.

Layers (each applied if the OS allows it; what was active is reported):
- resource limits: address space (memory), processes, file size, no core dumps;
- its own session, working directory, environment without harness secrets;
- no network: a new network namespace (root, or via a user namespace);
- Landlock (Linux >= 5.13): files may be written only inside the working
  directory, and read only from system and Python installation paths, so the
  targets file, predictions and results are out of reach;
- root only: runs under its own unprivileged uid (so the process limit counts
  only this step's processes and no root-owned file is writable).
"""
import ctypes
import errno
import os
import resource
import struct
import sys
from typing import Any

from ..utils.procs import kill
from . import RUNTIME_DIR

_libc = ctypes.CDLL(None, use_errno=True)

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38

# Landlock (uapi/linux/landlock.h); the syscall numbers are the same on every arch.
SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FS_REMOVE_DIR, FS_REMOVE_FILE, FS_MAKE_CHAR, FS_MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
FS_MAKE_REG, FS_MAKE_SOCK, FS_MAKE_FIFO, FS_MAKE_BLOCK = 1 << 8, 1 << 9, 1 << 10, 1 << 11
FS_MAKE_SYM, FS_REFER, FS_TRUNCATE, FS_IOCTL_DEV = 1 << 12, 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1

READ = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
UNSANDBOXED_UID_BASE = 200000


def landlock_abi() -> int:
    """The Landlock ABI version the kernel offers; 0 where it offers none."""
    abi = _libc.syscall(SYS_LANDLOCK_CREATE_RULESET, None, 0, LANDLOCK_CREATE_RULESET_VERSION)
    return abi if abi > 0 else 0


def _fs_rights(abi):
    rights = (FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_READ_DIR | FS_REMOVE_DIR
              | FS_REMOVE_FILE | FS_MAKE_CHAR | FS_MAKE_DIR | FS_MAKE_REG | FS_MAKE_SOCK
              | FS_MAKE_FIFO | FS_MAKE_BLOCK | FS_MAKE_SYM)
    if abi >= 2:
        rights |= FS_REFER
    if abi >= 3:
        rights |= FS_TRUNCATE
    if abi >= 5:
        rights |= FS_IOCTL_DEV
    return rights


def _add_path_rule(ruleset_fd, path, allowed):
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not os.path.isdir(path):
            # Directory-only rights are refused on a file.
            allowed &= FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
        attr = struct.pack('=Qi', allowed, fd)
        buf = ctypes.create_string_buffer(attr, len(attr))
        return _libc.syscall(SYS_LANDLOCK_ADD_RULE, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, buf, 0) == 0
    finally:
        os.close(fd)


def prepare_landlock(workroot, readable, writable_files=('/dev/null',)) -> tuple[int | None, dict[str, Any]]:
    """Build, once per worker, the ruleset every step will enforce.

    Reading is allowed in `readable`; everything beneath `workroot` (where the
    worker makes each step's directory, one step at a time) is allowed.
    Returns (ruleset fd or None, facts for the results).
    """
    abi = landlock_abi()
    if abi == 0:
        return None, {'landlock': False, 'landlock_why': 'not supported by this kernel'}
    handled = _fs_rights(abi)
    handled_net = (NET_BIND_TCP | NET_CONNECT_TCP) if abi >= 4 else 0
    attr = struct.pack('=QQ', handled, handled_net) if abi >= 4 else struct.pack('=Q', handled)
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = _libc.syscall(SYS_LANDLOCK_CREATE_RULESET, buf, len(attr), 0)
    if ruleset < 0:
        return None, {'landlock': False, 'landlock_why': os.strerror(ctypes.get_errno())}
    for path in readable:
        _add_path_rule(ruleset, path, READ & handled)
    for path in writable_files:
        _add_path_rule(ruleset, path, (READ | FS_WRITE_FILE | (FS_TRUNCATE if abi >= 3 else 0)) & handled)
    if not _add_path_rule(ruleset, workroot, handled):
        os.close(ruleset)
        return None, {'landlock': False, 'landlock_why': 'could not add the working directory'}
    return ruleset, {'landlock': True, 'landlock_abi': abi, 'tcp_blocked_by_landlock': bool(handled_net)}


def enforce_landlock(ruleset_fd, facts) -> dict[str, Any]:
    """In the step process: from now on only the prepared paths are reachable."""
    if ruleset_fd is None:
        return dict(facts)
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return {'landlock': False, 'landlock_why': 'no_new_privs refused'}
    if _libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset_fd, 0) != 0:
        return {'landlock': False, 'landlock_why': os.strerror(ctypes.get_errno())}
    os.close(ruleset_fd)
    return dict(facts)


def readable_roots(extra=()) -> list[str]:
    """Paths a step may read: the OS and the Python installation, not the project."""
    roots = {'/usr', '/lib', '/lib64', '/lib32', '/bin', '/sbin', '/etc', '/proc', '/sys', '/dev',
             '/opt', sys.prefix, sys.base_prefix, sys.exec_prefix}
    for entry in sys.path:
        # site-packages and the stdlib; the project checkout itself stays out
        if entry and os.path.isdir(entry) and ('site-packages' in entry or 'dist-packages' in entry
                                               or entry.startswith(sys.base_prefix)):
            roots.add(entry)
    # the stand-in `scicode` package the tests import (harness code, no data)
    roots.add(str(RUNTIME_DIR))
    roots.update(extra)
    return sorted(r for r in roots if os.path.exists(r))


def set_limits(memory_bytes=None, max_procs=None, max_file_bytes=None) -> dict[str, int]:
    """Set the step process's resource limits (None: no limit) and forbid core files; the limits
    set."""
    applied = {}
    if memory_bytes:
        # Address space counts what is already mapped (the preloaded libraries), so add it.
        base = _current_vm_bytes()
        limit = base + memory_bytes
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        applied['memory_limit_bytes'] = memory_bytes
    if max_procs:
        resource.setrlimit(resource.RLIMIT_NPROC, (max_procs, max_procs))
        applied['max_processes'] = max_procs
    if max_file_bytes:
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))
        applied['max_file_bytes'] = max_file_bytes
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return applied


def _current_vm_bytes():
    try:
        with open('/proc/self/statm') as fh:
            return int(fh.read().split()[0]) * os.sysconf('SC_PAGE_SIZE')
    except (OSError, ValueError):
        return 0


def leave_network() -> bool:
    """For the worker itself, as root only (a user namespace would change its privileges)."""
    return os.getuid() == 0 and _libc.unshare(CLONE_NEWNET) == 0


def isolate_network() -> dict[str, str]:
    """Take the step process off the network (a network namespace, through a user namespace where
    not root); what was done."""
    if _libc.unshare(CLONE_NEWNET) == 0:
        return {'network': 'isolated (network namespace)'}
    if ctypes.get_errno() == errno.EPERM and _libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0:
        return {'network': 'isolated (user + network namespace)'}
    return {'network': 'not isolated'}


def drop_privileges(workdir, allowed) -> dict[str, Any]:
    """As root, become a uid of our own, unique among live steps (it is the pid).

    Only where the Python installation is readable by other users (`allowed`);
    otherwise the step keeps its uid and relies on Landlock and cgroups.
    """
    if os.getuid() != 0:
        return {'uid': os.getuid()}
    if not allowed:
        return {'uid': 0, 'uid_note': 'kept: the Python installation is not readable by other users'}
    uid = UNSANDBOXED_UID_BASE + os.getpid()
    os.chown(workdir, uid, uid)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    return {'uid': uid}


def set_subreaper(on) -> None:
    """Orphans below this process come back to it (and not to init) while `on`."""
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1 if on else 0, 0, 0, 0)


def die_with_parent() -> None:
    """Have the kernel kill this process when its parent dies."""
    import signal
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


# ------------------------------------------------------------ cgroups (v1)
CGROUP_ROOT = '/sys/fs/cgroup'


def _own_cgroup(controller):
    try:
        with open('/proc/self/cgroup') as fh:
            for line in fh:
                _, controllers, path = line.rstrip('\n').split(':', 2)
                if controller in controllers.split(','):
                    return path
    except OSError:
        pass
    return None


def cgroup_parent(controller) -> str | None:
    """Where this process may make cgroups of `controller` (under its own), or None."""
    own = _own_cgroup(controller)
    return None if own is None else os.path.join(CGROUP_ROOT, controller, own.lstrip('/'))


def cgroup_pids(path) -> set[int]:
    """The pids in the cgroup at `path` (empty when it is gone)."""
    try:
        with open(os.path.join(path, 'cgroup.procs')) as fh:
            return {int(x) for x in fh.read().split()}
    except OSError:
        return set()


class WorkerCgroups:
    """The worker's own cgroups (v1 `pids` and `memory`), where the host lets us make them.

    The worker moves itself in once; each step's process is born inside, so
    the caps cover the step and everything it starts, and the cgroup lists
    every process of the step (moving a process per step would cost a
    scheduler-wide synchronisation, about 10 ms, each time). The worker runs
    one step at a time, so it adds one process and its own memory to the counts.
    """

    def __init__(self, name, max_procs=None, memory_bytes=None):
        self.dirs = {}
        self.active = {}
        for controller, value in (('pids', max_procs), ('memory', memory_bytes)):
            parent = cgroup_parent(controller) if value else None
            if parent is None:
                continue
            path = os.path.join(parent, name)
            try:
                os.mkdir(path)
                with open(os.path.join(path, 'cgroup.procs'), 'w') as fh:
                    fh.write(str(os.getpid()))
                if controller == 'pids':
                    limit, knob = value + 1, 'pids.max'
                else:
                    with open(os.path.join(path, 'memory.usage_in_bytes')) as fh:
                        limit, knob = int(fh.read()) + value, 'memory.limit_in_bytes'
                with open(os.path.join(path, knob), 'w') as fh:
                    fh.write(str(limit))
            except OSError:
                self._leave(parent, path)
                continue
            self.dirs[controller] = (parent, path)
            self.active[controller] = value

    def pids(self) -> set[int]:
        """The pids in the worker's cgroups."""
        found = set()
        for _, path in self.dirs.values():
            found |= cgroup_pids(path)
        found.discard(os.getpid())
        return found

    def kill_all(self) -> None:
        """SIGKILL every process of the step (the caller reaps them)."""
        kill(self.pids())

    @staticmethod
    def _leave(parent, path):
        try:
            with open(os.path.join(parent, 'cgroup.procs'), 'w') as fh:
                fh.write(str(os.getpid()))
        except OSError:
            pass
        try:
            os.rmdir(path)
        except OSError:
            pass

    def move_out(self) -> None:
        """Move the calling process back to the parent cgroups (a copy of the worker leaving)."""
        for parent, _ in self.dirs.values():
            try:
                with open(os.path.join(parent, 'cgroup.procs'), 'w') as fh:
                    fh.write(str(os.getpid()))
            except OSError:
                pass

    def remove(self) -> None:
        """Kill what is left in the worker's cgroups and remove them."""
        self.kill_all()
        for parent, path in self.dirs.values():
            self._leave(parent, path)
        self.dirs = {}


def python_readable_by_others() -> bool:
    """Can an unprivileged uid read the Python installation and its packages?"""
    paths = {sys.prefix, sys.base_prefix}
    paths.update(p for p in sys.path if 'site-packages' in p and os.path.isdir(p))
    for path in paths:
        current = '/'
        for part in os.path.abspath(path).strip('/').split('/'):
            current = os.path.join(current, part)
            try:
                mode = os.stat(current).st_mode
            except OSError:
                return False
            if mode & 0o005 != 0o005:
                return False
    return True
