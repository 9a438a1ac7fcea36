"""A worker process that runs step jobs, each in a forked, sandboxed child.

`python -m opencompass_scicode.sandbox.worker [--preload mod,mod]` reads
pickled jobs on stdin (the host has already read their targets) and writes
one pickled result per job on stdout. With --preload it imports the scientific
stack once, so every forked child starts with it in memory (the fast
executor); without, each child pays its own imports (the plain executor spawns
one worker per step). With --channels it is the zygote: it forks one worker
per channel, adopts the copies workers make of themselves (worker_clone.py)
and ends when the last of them is gone.

The worker is a child subreaper: whatever a step starts (even after setsid
or a double fork) is re-parented to the worker and killed when the step ends.

A worker does not outlive its host, however the host ends (SIGKILL included):
idle, it reads EOF on its job channel; mid-step, that channel turns readable
(the host never writes while a step runs), and it kills the step and all it
started before leaving. The zygote ends after its last worker. A worker first
announces its pid, so that the host can kill it if it stops answering.

This module is the entry point and the worker's loop with its host; what a
worker keeps between steps is in worker_state.py, one step from job to result
in worker_step.py (its child in worker_child.py, watched by worker_watch.py),
the clean-up below the worker in worker_reaper.py, its copies in worker_clone.py.
"""
import argparse
import fcntl
import os
import pickle
import shutil
import sys

from . import RUNTIME_DIR
from . import worker_state as state
from .worker_clone import clone
from .worker_reaper import kill_descendants
from .worker_step import run_job


def _prepare(preload):
    """Imports shared by every worker (done once, in the zygote when there is one)."""
    sys.path.insert(0, str(RUNTIME_DIR))
    from . import harness, lockdown as sandbox  # noqa: F401
    from .guard import WATCHED  # noqa: F401
    import scicode.compare.cmp  # noqa: F401  (the tests' helpers, from runtime/)
    import scicode.parse.parse  # noqa: F401
    state.DROP_OK = sandbox.python_readable_by_others()
    for name in preload:
        try:
            __import__(name)
        except Exception as exc:  # a missing optional module must not stop the worker
            print(f'[worker] could not preload {name}: {exc}', file=sys.stderr)
    state.PRELOADED = frozenset(sys.modules)


def _serve(jobs_in, results_out, control=None):
    """The worker loop: one pickled job in, one pickled result out, until the input closes."""
    _answer(results_out, {'pid': os.getpid()})    # the host's way to kill us if we stop answering
    workroot = _settle()
    sys.stdout = sys.stderr          # stray prints must not corrupt the result channel
    try:
        while True:
            try:
                job = pickle.load(jobs_in)
            except EOFError:
                break
            if job.get('op') == 'clone':
                result = clone(jobs_in, results_out, control, _serve_channel)
            else:
                result = run_job(job, workroot, jobs_in.fileno())
            if result.get('host_gone'):
                break                # nobody to answer; the step and all it started are gone
            _answer(results_out, result)
    finally:
        shutil.rmtree(workroot, ignore_errors=True)
        state.remove_cgroups()


def _settle():
    """Before the first job: become the subreaper, keep the collector off what is loaded, and
    make the work root with its Landlock ruleset. Returns the work root."""
    import gc
    from . import lockdown as sandbox
    sandbox.set_subreaper(True)
    # Objects that exist now are never collected in the children: a collection
    # walking them would copy most of the worker's memory into each child.
    gc.collect()
    gc.freeze()
    from .leftovers import make_workroot
    workroot = make_workroot()
    os.chmod(workroot, 0o711)
    ruleset, facts = sandbox.prepare_landlock(workroot, sandbox.readable_roots())
    if ruleset is not None:
        # Out of the way of the low descriptors the child rearranges (0-4).
        moved = fcntl.fcntl(ruleset, fcntl.F_DUPFD_CLOEXEC, 100)
        os.close(ruleset)
        ruleset = moved
    state.LANDLOCK = (ruleset, facts)
    return workroot


def _answer(results_out, message):
    pickle.dump(message, results_out, protocol=pickle.HIGHEST_PROTOCOL)
    results_out.flush()


def _serve_channel(jobs_fd, results_fd, control_fd):
    import socket
    _serve(os.fdopen(jobs_fd, 'rb'), os.fdopen(results_fd, 'wb'), socket.socket(fileno=control_fd))


def main(argv=None) -> None:
    """`python -m opencompass_scicode.sandbox.worker ...`: a worker serving its channel, or with
    --channels the zygote."""
    parser = argparse.ArgumentParser()
    parser.add_argument('--preload', default='', help='comma-separated modules to import once')
    parser.add_argument('--channels', default='',
                        help='zygote mode: "jobfd:resultfd:controlfd,..." one worker is forked per triple')
    args = parser.parse_args(argv)
    _prepare([m for m in args.preload.split(',') if m])
    if not args.channels:
        _serve(sys.stdin.buffer, sys.stdout.buffer)
        os._exit(0)          # nothing to finalise: tearing down the interpreter costs tens of ms
    _zygote(args.channels)


def _zygote(channels_arg):
    """The imports of _prepare are paid once; each worker is a fork of this process.

    It also adopts copies of workers (see worker_clone.py). Every worker and copy holds
    the write end of `lifeline` (step processes close it): at its end they are all gone.
    """
    from .lockdown import set_subreaper
    set_subreaper(True)
    lifeline, alive = os.pipe()
    channels = [tuple(int(fd) for fd in triple.split(':')) for triple in channels_arg.split(',')]
    for channel in channels:
        pid = os.fork()
        if pid == 0:
            try:
                os.close(lifeline)
                for other in channels:
                    if other != channel:
                        for fd in other:
                            os.close(fd)
                _serve_channel(*channel)
            finally:
                os._exit(0)
    os.close(alive)
    for channel in channels:
        for fd in channel:
            os.close(fd)
    os.read(lifeline, 1)   # nothing is ever written: returns at EOF, when no worker is left
    kill_descendants()     # whatever a worker that died abruptly left behind; reaps the rest
    os._exit(0)


if __name__ == '__main__':
    main()
