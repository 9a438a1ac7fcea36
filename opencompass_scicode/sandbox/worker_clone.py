"""Copies of a worker: a new worker that starts with everything this one has imported.

The host sends the copy's channel over the worker's control socket. The copy
must not be this worker's child (the worker kills all its children after each
step): a double fork, with this worker not a subreaper meanwhile, hands it to
the zygote. What is the original's alone (its Landlock ruleset, its cgroups,
its network namespace) the copy leaves before it serves.
"""
import os
import select
from typing import Any

from . import worker_state as state


def clone(jobs_in, results_out, control, serve) -> dict[str, Any]:
    """Start a copy of this worker, with everything it has imported, on the channel the
    host sent over `control` (job and result pipes, and a control socket of its own);
    the copy runs `serve(jobs_fd, results_fd, control_fd)`.

    It leaves this worker's cgroups before we go on.
    """
    import socket
    from .lockdown import set_subreaper
    if control is None:
        return {'error': 'this worker cannot be copied'}
    _, fds, _, _ = socket.recv_fds(control, 16, 3)
    if len(fds) != 3:
        for fd in fds:
            os.close(fd)
        return {'error': 'the host sent no channel for the copy'}
    ready_r, ready_w = os.pipe()
    set_subreaper(False)
    pid = os.fork()
    if pid == 0:
        if os.fork() != 0:
            os._exit(0)
        try:                               # the copy
            _become_copy((jobs_in.fileno(), results_out.fileno(), control.fileno(), ready_r), ready_w)
            serve(*fds)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    set_subreaper(True)
    for fd in (ready_w, *fds):
        os.close(fd)
    return _copy_started(ready_r)


def _become_copy(originals, ready_w):
    """In the copy: close the original's descriptors, leave what is the original's alone,
    then say so on `ready_w`."""
    for fd in originals:
        os.close(fd)
    if state.LANDLOCK[0] is not None:
        os.close(state.LANDLOCK[0])
    state.LANDLOCK = state.NO_LANDLOCK
    for cgroups in state.CGROUPS.values():
        cgroups.move_out()
    state.CGROUPS.clear()
    state.WORKER_NETNS = False           # its steps get a network namespace of their own
    os.write(ready_w, b'1')
    os.close(ready_w)


def _copy_started(ready_r):
    ready, _, _ = select.select([ready_r], [], [], 10)
    ok = bool(ready) and os.read(ready_r, 1) == b'1'
    os.close(ready_r)
    return {'cloned': ok} if ok else {'error': 'the copy did not start'}
