"""The forked child that runs one step: it locks itself down, then hands over to the harness.

Apart from the worker because it runs in another process, under rules of its
own: it never returns (it exits 70 if anything before or around the harness
fails, 71 if the harness returns), and the order of its lock-down is part of
the sandbox. Its own session and death with the worker come first; then its
descriptors (output on 1 and 2, the report channel on 3, the Landlock ruleset
on 4, the stack pipe on 5, nothing else), environment and directory; then the
resource limits, the network, Landlock and, last, the drop of privileges
(leaving the network and handing the step its directory need the root it gives up).

With forensics on, the standard library's fault handler is set to write the
step's Python stack to the stack pipe on STACK_SIGNAL: the worker sends it just
before it kills a step whose time is up (worker_watch.py), so that the record
says where the step hung. It is written by the handler in C, whatever the
step's Python code is doing (even inside a long numpy call). What the step
writes there itself is only ever shown as text; it cannot change a verdict.
"""
import fcntl
import json
import os
import random
import signal
import sys

from . import worker_state as state
from .worker_reaper import count_user_processes

LANDLOCK_FD = 4
REPORT_FD = 3
STACK_FD = 5
STACK_SIGNAL = signal.SIGUSR2


def child_main(job, workdir, out_w, err_w, rep_w, stack_w, cgroups) -> None:
    """In the forked child: lock down, then hand over to the harness. Never returns."""
    try:
        from . import harness, lockdown as sandbox
        os.setsid()
        sandbox.die_with_parent()
        limits = job['limits']
        landlock_fd = _take_descriptors(limits, out_w, err_w, rep_w, stack_w)
        if job.get('forensics'):
            import faulthandler
            faulthandler.register(STACK_SIGNAL, file=STACK_FD, all_threads=False)
        _enter(workdir)
        protections = _lock_down(sandbox, limits, workdir, cgroups, landlock_fd)
        _reseed()
        if job.get('threads'):
            _use_threads(job['threads'])
        os.write(REPORT_FD, (json.dumps({'event': 'sandbox', 'nonce': job['nonce'],
                                         'protections': protections}) + '\n').encode())
        harness.run_step(job, REPORT_FD)
    except BaseException:
        import traceback
        try:
            traceback.print_exc()
            sys.stderr.flush()
        finally:
            os._exit(70)
    os._exit(71)


def _take_descriptors(limits, out_w, err_w, rep_w, stack_w):
    """Report on 3, output on 1 and 2, nothing on 0, the Landlock ruleset on 4 if it is to be
    used (its descriptor, else None), the stack pipe on 5; every other descriptor closed."""
    stack_w = fcntl.fcntl(stack_w, fcntl.F_DUPFD, 256)   # out of the way of the dup2s below
    os.dup2(rep_w, REPORT_FD)
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    landlock_fd = None
    if state.LANDLOCK[0] is not None and limits.get('landlock', True):
        os.dup2(state.LANDLOCK[0], LANDLOCK_FD)
        landlock_fd = LANDLOCK_FD
    else:
        os.closerange(LANDLOCK_FD, LANDLOCK_FD + 1)
    os.dup2(stack_w, STACK_FD)
    # the worker's pipes, the targets file, ...
    os.closerange(STACK_FD + 1, 65536)
    sys.stdout = open(1, 'w', encoding='utf-8', errors='backslashreplace', closefd=False)
    sys.stderr = open(2, 'w', encoding='utf-8', errors='backslashreplace', closefd=False)
    return landlock_fd


def _enter(workdir):
    """No harness variables in the environment; home, temporary files and cwd in `workdir`."""
    for key in [k for k in os.environ if k.startswith('SCICODE_')]:
        del os.environ[key]
    os.environ.update(HOME=workdir, TMPDIR=workdir, MPLCONFIGDIR=workdir)
    os.chdir(workdir)


def _lock_down(sandbox, limits, workdir, cgroups, landlock_fd):
    """Limits, network, Landlock, privileges, in that order; what is in force, for the report."""
    protections = {'own_process': True, 'own_workdir': True, 'subreaper_cleanup': True,
                   'cgroups': dict(cgroups.active)}
    drop = limits.get('drop_privileges', True) and os.getuid() == 0 and state.DROP_OK
    max_procs, protections['process_limit'] = _process_limit(limits, cgroups, drop)
    protections.update(sandbox.set_limits(limits.get('memory_bytes'), max_procs,
                                          limits.get('max_file_bytes')))
    if state.WORKER_NETNS:
        protections['network'] = 'isolated (the worker\'s network namespace)'
    elif limits.get('isolate_network', True):
        protections.update(sandbox.isolate_network())
    if limits.get('landlock', True):
        protections.update(sandbox.enforce_landlock(landlock_fd, state.LANDLOCK[1]))
    if limits.get('drop_privileges', True):
        protections.update(sandbox.drop_privileges(workdir, state.DROP_OK))
    return protections


def _process_limit(limits, cgroups, drop):
    """RLIMIT_NPROC for the step (None for none), and what holds the step's process limit."""
    max_procs = limits.get('max_processes')
    if 'pids' in cgroups.active:
        max_procs = None                      # the cgroup counts the whole step already
    elif max_procs and os.getuid() != 0:
        max_procs += count_user_processes(os.getuid())
    elif max_procs and not drop:
        max_procs = None                      # root ignores RLIMIT_NPROC: the worker polls instead
    how = 'cgroup' if 'pids' in cgroups.active else 'rlimit' if max_procs else 'polling'
    return max_procs, how


def _use_threads(count):
    """More (or fewer) threads for BLAS/OpenMP than the worker started with: the libraries are
    loaded already, so their environment variables no longer count."""
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(count)
    except Exception as exc:        # a step still runs, with the worker's share of threads
        print(f'[worker] could not set {count} threads: {exc}', file=sys.stderr)


def _reseed():
    """Fresh entropy for the global generators, as a new interpreter would have.

    Forked children would otherwise share one stream. A random MT19937 state
    is what numpy's own seeding from entropy produces, at a fraction of the cost.
    """
    random.seed()
    numpy = sys.modules.get('numpy')
    if numpy is not None:
        key = numpy.frombuffer(os.urandom(624 * 4), dtype=numpy.uint32).copy()
        numpy.random.set_state(('MT19937', key, 624))
