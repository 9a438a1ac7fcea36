"""A worker process that runs step jobs, each in a forked, sandboxed child.

`python -m opencompass_scicode.sandbox.worker [--preload mod,mod]` reads
pickled jobs on stdin (the host has already read their targets) and writes
one pickled result per job on stdout. With --preload it imports the scientific
stack once, so every forked child starts with it in memory (the fast
executor); without, each child pays its own imports (the plain executor spawns
one worker per step). With --channels it is the zygote: it forks one worker
per channel, adopts the copies workers make of themselves (_clone) and ends
when the last of them is gone.

The worker is a child subreaper: whatever a step starts (even after setsid
or a double fork) is re-parented to the worker and killed when the step ends.

A worker does not outlive its host, however the host ends (SIGKILL included):
idle, it reads EOF on its job channel; mid-step, that channel turns readable
(the host never writes while a step runs), and it kills the step and all it
started before leaving. The zygote ends after its last worker. A worker first
announces its pid, so that the host can kill it if it stops answering.
"""
import argparse
import fcntl
import json
import os
import pickle
import random
import select
import shutil
import sys
import tempfile
import time

from ..utils.procs import kill, process_table
from . import RUNTIME_DIR
from .forensics import extra_time

LANDLOCK_FD = 4
REPORT_FD = 3
DROP_OK = False      # set at start: may steps run under their own uid?
_CGROUPS = {}        # limits -> this worker's step cgroups, reused from step to step
LANDLOCK = (None, {'landlock': False, 'landlock_why': 'not prepared'})   # (ruleset fd, facts)
# As root the worker leaves the network itself, once: a namespace per step costs
# about a millisecond to make and more to tear down. Steps run one at a time.
WORKER_NETNS = False
PRELOADED = frozenset()   # modules loaded at start-up


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


def kill_descendants():
    """SIGKILL every process below this one (orphans come back to us as subreaper)."""
    me = os.getpid()
    for _ in range(10000):
        if not _reap():
            return
        kill(_children_of(me))
        time.sleep(0.001)


class CappedBuffer:
    """Keeps the first and last `cap/2` bytes of a stream, counts the rest."""

    def __init__(self, cap):
        self.half = max(1, cap // 2)
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def feed(self, data):
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

    def text(self):
        middle = f'\n...[{self.dropped} bytes cut]...\n'.encode() if self.dropped else b''
        return (bytes(self.head) + middle + bytes(self.tail)).decode('utf-8', errors='replace')


INFO_GRACE_S = 0.5       # after the information time: for the harness to report and leave


class _Decision:
    """Watches the report stream for the harness's `decided` event (with this step's nonce):
    the moment the verdict was decided, when the step goes on for information."""

    def __init__(self, nonce):
        self.marker = nonce.encode()
        self.partial = b''
        self.at = None

    def feed(self, data):
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


def _child(job, workdir, out_w, err_w, rep_w, cgroups):
    """In the forked child: lock down, then hand over to the harness. Never returns."""
    try:
        from . import harness, lockdown as sandbox
        os.setsid()
        sandbox.die_with_parent()
        os.dup2(rep_w, REPORT_FD)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        limits = job['limits']
        landlock_fd = None
        if LANDLOCK[0] is not None and limits.get('landlock', True):
            os.dup2(LANDLOCK[0], LANDLOCK_FD)
            landlock_fd = LANDLOCK_FD
        # the worker's pipes, the targets file, ...
        os.closerange(LANDLOCK_FD + 1 if landlock_fd else LANDLOCK_FD, 65536)
        sys.stdout = open(1, 'w', encoding='utf-8', errors='backslashreplace', closefd=False)
        sys.stderr = open(2, 'w', encoding='utf-8', errors='backslashreplace', closefd=False)
        for key in [k for k in os.environ if k.startswith('SCICODE_')]:
            del os.environ[key]
        os.environ.update(HOME=workdir, TMPDIR=workdir, MPLCONFIGDIR=workdir)
        os.chdir(workdir)
        protections = {'own_process': True, 'own_workdir': True, 'subreaper_cleanup': True,
                       'cgroups': dict(cgroups.active)}
        drop = limits.get('drop_privileges', True) and os.getuid() == 0 and DROP_OK
        max_procs = limits.get('max_processes')
        if 'pids' in cgroups.active:
            max_procs = None                      # the cgroup counts the whole step already
        elif max_procs and os.getuid() != 0:
            max_procs += _process_count(os.getuid())
        elif max_procs and not drop:
            max_procs = None                      # root ignores RLIMIT_NPROC: the worker polls instead
        protections['process_limit'] = ('cgroup' if 'pids' in cgroups.active else
                                         'rlimit' if max_procs else 'polling')
        protections.update(sandbox.set_limits(limits.get('memory_bytes'), max_procs,
                                              limits.get('max_file_bytes')))
        if WORKER_NETNS:
            protections['network'] = 'isolated (the worker\'s network namespace)'
        elif limits.get('isolate_network', True):
            protections.update(sandbox.isolate_network())
        if limits.get('landlock', True):
            protections.update(sandbox.enforce_landlock(landlock_fd, LANDLOCK[1]))
        if limits.get('drop_privileges', True):
            protections.update(sandbox.drop_privileges(workdir, DROP_OK))
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


def _import_for_children(modules, watch=()):
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
            clean = before <= PRELOADED
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


def _cgroups_for(limits):
    from . import leftovers
    from .lockdown import WorkerCgroups
    key = (limits.get('max_processes'), limits.get('memory_bytes'))
    if key not in _CGROUPS:
        for other in _CGROUPS.values():       # limits changed: leave the old cgroups
            other.remove()
        _CGROUPS.clear()
        _CGROUPS[key] = WorkerCgroups(leftovers.cgroup_name(), *key)
    return _CGROUPS[key]


def _count_descendants(root):
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


def _process_count(uid):
    count = 0
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                if os.stat(f'/proc/{entry}').st_uid == uid:
                    count += 1
            except OSError:
                pass
    return count


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


def run_job(job, workroot, host_fd):
    """Run one job in a forked child; `host_fd`, the job channel, says when the host is gone."""
    started = time.monotonic()
    global WORKER_NETNS
    if job['limits'].get('isolate_network', True) and not WORKER_NETNS:
        from .lockdown import leave_network
        WORKER_NETNS = leave_network()
    imported = _import_for_children(job.get('modules', ()), job.get('watch', ()))
    import_s = time.monotonic() - started
    try:
        job['targets'] = pickle.loads(job['targets'])
    except Exception as exc:
        return {'error': f'could not load the targets of step {job["step_id"]}: {type(exc).__name__}: {exc}',
                'duration_s': 0.0}
    workdir = tempfile.mkdtemp(prefix='step-', dir=workroot)
    limits = job['limits']
    cgroups = _cgroups_for(limits)
    poll_procs = limits.get('max_processes') if 'pids' not in cgroups.active else None
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    rep_r, rep_w = os.pipe()
    job['started_at'] = started          # the harness measures the budget for later tests from it
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _child(job, workdir, out_w, err_w, rep_w, cgroups)
    for fd in (out_w, err_w, rep_w):
        os.close(fd)
    cap = limits.get('max_output_bytes', 64 * 1024)
    buffers = {out_r: CappedBuffer(cap), err_r: CappedBuffer(cap), rep_r: CappedBuffer(1 << 20)}
    deadline = started + job['timeout']
    timed_out, too_many, host_gone, status = False, False, False, None
    decision = _Decision(job['nonce'])
    pidfd = os.pidfd_open(pid)
    open_fds = set(buffers)
    try:
        while status is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = decision.at is None     # after the verdict, the end of its information time
                break
            if poll_procs and _count_descendants(os.getpid()) > poll_procs:
                too_many = decision.at is None
                break
            wait = min(remaining, 0.05 if poll_procs else 1.0)
            ready, _, _ = select.select(list(open_fds) + [pidfd, host_fd], [], [], wait)
            if host_fd in ready:     # the host never writes while a step runs: this is its end (EOF)
                host_gone = True
                break
            for fd in ready:
                if fd == pidfd:
                    continue
                data = os.read(fd, 65536)
                if data:
                    buffers[fd].feed(data)
                    if fd == rep_r and decision.at is None and decision.feed(data):
                        # The verdict is decided: what follows is for information, on its own clock.
                        deadline = decision.at + extra_time(decision.at - started, job.get('later_tests_s', 0)) \
                            + INFO_GRACE_S
                else:
                    open_fds.discard(fd)
            if pidfd in ready:
                _, status = os.waitpid(pid, 0)
    finally:
        os.close(pidfd)
        cgroups.kill_all()           # whatever is left in the step's cgroups ...
        kill_descendants()           # ... and below the worker, however detached; reaped here
        if status is None:
            try:
                _, status = os.waitpid(pid, 0)
            except ChildProcessError:
                status = None
        for fd in list(open_fds):    # every writer is dead now: read what is left
            while True:
                ready, _, _ = select.select([fd], [], [], 0.5)
                data = os.read(fd, 65536) if ready else b''
                if not data:
                    break
                buffers[fd].feed(data)
        for fd in buffers:
            os.close(fd)
        shutil.rmtree(workdir, ignore_errors=True)
    returncode = None
    if status is not None:
        returncode = os.waitstatus_to_exitcode(status)
    return {
        'host_gone': host_gone,
        'loaded': [m for m in job.get('watch', ()) if m in sys.modules],
        'imported': imported,
        'import_s': round(import_s, 4),
        'returncode': returncode,
        'timed_out': timed_out,
        'process_limit_hit': too_many,
        # The verdict's duration: up to its decision when the step went on for information.
        'duration_s': round((decision.at or time.monotonic()) - started, 3),
        'busy_s': round(time.monotonic() - started, 3),
        'stdout': buffers[out_r].text(),
        'stderr': buffers[err_r].text(),
        'report': buffers[rep_r].text(),
    }


def _prepare(preload):
    """Imports shared by every worker (done once, in the zygote when there is one)."""
    global PRELOADED
    sys.path.insert(0, str(RUNTIME_DIR))
    from . import harness, lockdown as sandbox  # noqa: F401
    from .guard import WATCHED  # noqa: F401
    import scicode.compare.cmp  # noqa: F401  (the tests' helpers, from runtime/)
    import scicode.parse.parse  # noqa: F401
    global DROP_OK
    DROP_OK = sandbox.python_readable_by_others()
    for name in preload:
        try:
            __import__(name)
        except Exception as exc:  # a missing optional module must not stop the worker
            print(f'[worker] could not preload {name}: {exc}', file=sys.stderr)
    PRELOADED = frozenset(sys.modules)


def _serve(jobs_in, results_out, control=None):
    """The worker loop: one pickled job in, one pickled result out, until the input closes."""
    import gc
    from . import lockdown as sandbox
    _answer(results_out, {'pid': os.getpid()})    # the host's way to kill us if we stop answering
    sandbox.set_subreaper(True)
    # Objects that exist now are never collected in the children: a collection
    # walking them would copy most of the worker's memory into each child.
    gc.collect()
    gc.freeze()
    from .leftovers import make_workroot
    workroot = make_workroot()
    os.chmod(workroot, 0o711)
    global LANDLOCK
    ruleset, facts = sandbox.prepare_landlock(workroot, sandbox.readable_roots())
    if ruleset is not None:
        # Out of the way of the low descriptors the child rearranges (0-4).
        moved = fcntl.fcntl(ruleset, fcntl.F_DUPFD_CLOEXEC, 100)
        os.close(ruleset)
        ruleset = moved
    LANDLOCK = (ruleset, facts)
    sys.stdout = sys.stderr          # stray prints must not corrupt the result channel
    try:
        while True:
            try:
                job = pickle.load(jobs_in)
            except EOFError:
                break
            if job.get('op') == 'clone':
                result = _clone(jobs_in, results_out, control)
            else:
                result = run_job(job, workroot, jobs_in.fileno())
            if result.get('host_gone'):
                break                # nobody to answer; the step and all it started are gone
            _answer(results_out, result)
    finally:
        shutil.rmtree(workroot, ignore_errors=True)
        for cgroups in _CGROUPS.values():
            cgroups.remove()


def _answer(results_out, message):
    pickle.dump(message, results_out, protocol=pickle.HIGHEST_PROTOCOL)
    results_out.flush()


def _serve_channel(jobs_fd, results_fd, control_fd):
    import socket
    _serve(os.fdopen(jobs_fd, 'rb'), os.fdopen(results_fd, 'wb'), socket.socket(fileno=control_fd))


def _clone(jobs_in, results_out, control):
    """Start a copy of this worker, with everything it has imported, on the channel the
    host sent over `control` (job and result pipes, and a control socket of its own).

    The copy must not be this worker's child (the worker kills all its children
    after each step): a double fork, with this worker not a subreaper meanwhile,
    hands it to the zygote. It leaves this worker's cgroups before we go on.
    """
    import socket
    from .lockdown import set_subreaper
    global LANDLOCK, WORKER_NETNS
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
            for fd in (jobs_in.fileno(), results_out.fileno(), control.fileno(), ready_r):
                os.close(fd)
            if LANDLOCK[0] is not None:
                os.close(LANDLOCK[0])
            LANDLOCK = (None, {'landlock': False, 'landlock_why': 'not prepared'})
            for cgroups in _CGROUPS.values():
                cgroups.move_out()
            _CGROUPS.clear()
            WORKER_NETNS = False           # its steps get a network namespace of their own
            os.write(ready_w, b'1')
            os.close(ready_w)
            _serve_channel(*fds)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    set_subreaper(True)
    for fd in (ready_w, *fds):
        os.close(fd)
    ready, _, _ = select.select([ready_r], [], [], 10)
    ok = bool(ready) and os.read(ready_r, 1) == b'1'
    os.close(ready_r)
    return {'cloned': ok} if ok else {'error': 'the copy did not start'}


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--preload', default='', help='comma-separated modules to import once')
    parser.add_argument('--channels', default='',
                        help='zygote mode: "jobfd:resultfd:controlfd,..." one worker is forked per triple')
    args = parser.parse_args(argv)
    _prepare([m for m in args.preload.split(',') if m])
    if not args.channels:
        _serve(sys.stdin.buffer, sys.stdout.buffer)
        os._exit(0)          # nothing to finalise: tearing down the interpreter costs tens of ms
    # Zygote: the imports above are paid once; each worker is a fork of this process.
    # It also adopts copies of workers (see _clone). Every worker and copy holds the
    # write end of `lifeline` (step processes close it): at its end they are all gone.
    from .lockdown import set_subreaper
    set_subreaper(True)
    lifeline, alive = os.pipe()
    channels = [tuple(int(fd) for fd in triple.split(':')) for triple in args.channels.split(',')]
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
