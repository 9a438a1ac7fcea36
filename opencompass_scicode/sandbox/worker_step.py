"""One job in a worker, from its arrival to its result: get ready, fork, watch, clean up, report.

Each step runs in a forked child (worker_child.py) that the worker watches
(worker_watch.py). Once the step is over, whatever it left is killed, in the
step's cgroups and below the worker (worker_reaper.py), before its output is
read to the end: only then has every writer gone. The result is what the
host's executor reads.
"""
import os
import pickle
import shutil
import sys
import tempfile
import time
from typing import Any

from . import worker_state as state
from .worker_child import child_main
from .worker_reaper import kill_descendants
from .worker_watch import StepWatch


class _TargetsUnpickler(pickle.Unpickler):
    """The host may run a newer NumPy than this worker (a scoring environment's): NumPy 2 pickles
    arrays by `numpy._core`, which NumPy 1.x calls `numpy.core`."""

    def find_class(self, module, name) -> Any:
        if module == 'numpy._core' or module.startswith('numpy._core.'):
            try:
                __import__(module)
            except ImportError:
                module = 'numpy.core' + module[len('numpy._core'):]
        return super().find_class(module, name)


def load_targets(blob) -> Any:
    """A step's targets from their pickle `blob`."""
    import io
    return _TargetsUnpickler(io.BytesIO(blob)).load()


def run_job(job, workroot, host_fd) -> dict[str, Any]:
    """Run one job in a forked child; `host_fd`, the job channel, says when the host is gone."""
    started = time.monotonic()
    imported = _get_ready(job)
    import_s = time.monotonic() - started
    try:
        job['targets'] = load_targets(job['targets'])
    except Exception as exc:
        return {'error': f'could not load the targets of step {job["step_id"]}: {type(exc).__name__}: {exc}',
                'duration_s': 0.0}
    workdir = tempfile.mkdtemp(prefix='step-', dir=workroot)
    limits = job['limits']
    cgroups = state.cgroups_for(limits)
    poll_procs = limits.get('max_processes') if 'pids' not in cgroups.active else None
    job['started_at'] = started          # the harness measures the budget for later tests from it
    pid, pipes = _fork_step(job, workdir, cgroups)
    watch = StepWatch(job, started, pipes, poll_procs)
    pidfd = os.pidfd_open(pid)
    try:
        watch.follow(pid, pidfd, host_fd)
    finally:
        os.close(pidfd)
        cgroups.kill_all()           # whatever is left in the step's cgroups ...
        kill_descendants()           # ... and below the worker, however detached; reaped here
        if watch.status is None:
            watch.status = _reap_step(pid)
        watch.drain()                # every writer is dead now: read what is left
        shutil.rmtree(workdir, ignore_errors=True)
    return _result(job, watch, started, imported, import_s)


def _get_ready(job):
    """Leave the network (once, where the worker may) and import what the job names."""
    if job['limits'].get('isolate_network', True) and not state.WORKER_NETNS:
        from .lockdown import leave_network
        state.WORKER_NETNS = leave_network()
    return import_for_children(job.get('modules', ()), job.get('watch', ()))


def import_for_children(modules, watch=()) -> dict[str, tuple[float, list[str], bool]]:
    """Import what a job's dependencies name, once per worker, before forking.

    Every later child then starts with it in memory. Failures are left for the
    step itself to report (its own import will fail the same way). Returns,
    per module imported now: the seconds it took, which `watch` modules it
    brought along, and whether the worker held nothing beyond its start-up
    imports before (then the seconds are what the import costs on its own).
    The host plans which worker runs what with this.
    """
    import gc
    imported = {}
    for name in modules:
        if name not in sys.modules:
            before = {m for m in watch if m in sys.modules}
            clean = before <= state.PRELOADED
            start = time.monotonic()
            try:
                __import__(name)
            except Exception:
                continue
            brought = sorted(m for m in watch if m in sys.modules and m not in before and m != name)
            imported[name] = (round(time.monotonic() - start, 4), brought, clean)
    if imported:
        gc.freeze()       # no collection first: it would cost more than the garbage it frees
    return imported


def _fork_step(job, workdir, cgroups):
    """Fork the step's child; its pid and the read ends of its stdout, stderr, report and stack
    pipes (the stack pipe: where the step's Python stack is written when its time is up)."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    rep_r, rep_w = os.pipe()
    stack_r, stack_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        child_main(job, workdir, out_w, err_w, rep_w, stack_w, cgroups)
    for fd in (out_w, err_w, rep_w, stack_w):
        os.close(fd)
    return pid, (out_r, err_r, rep_r, stack_r)


def _reap_step(pid):
    """The wait status of a step the worker stopped (None if it was reaped already)."""
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        status = None
    return status


def _result(job, watch, started, imported, import_s):
    returncode = None
    if watch.status is not None:
        returncode = os.waitstatus_to_exitcode(watch.status)
    return {
        'host_gone': watch.host_gone,
        'loaded': [m for m in job.get('watch', ()) if m in sys.modules],
        'imported': imported,
        'import_s': round(import_s, 4),
        'returncode': returncode,
        'timed_out': watch.timed_out,
        'process_limit_hit': watch.too_many,
        # The verdict's duration: up to its decision when the step went on for information.
        'duration_s': round((watch.decision.at or time.monotonic()) - started, 3),
        'busy_s': round(time.monotonic() - started, 3),
        **watch.texts(),
    }
