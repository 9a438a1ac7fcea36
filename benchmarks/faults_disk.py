"""The disk fills at every point of a run (benchmarks/faults.py prints the table).

One small run (2 settings x 3 validation problems, the loopback server) is stopped by a full
disk at every point it writes, in two ways:
- its work directory on a real tmpfs whose size is swept from a few KiB up to the run's whole
  size, so that the disk fills wherever the run happens to be;
- on an ordinary folder, with the package's test hook (utils/writes.py) refusing the N-th write
  of the run and every one after it, for N = 1 up to the run's number of writes.

Each point must end by itself within STOP_BOUND_S, exit non-zero with one `error:` line naming a
path and the lack of space (no traceback), and leave no process of the run behind; then, once
there is room, `-r` must end with the verdicts of an uninterrupted run, asking the model only for
the answers the stop lost (requested but not saved), and losing no record saved before it.
"""
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from faults import (answered, mount_tmpfs, out_of, prediction_lines, records_lost, sent, settle, steps_needed,
                    unmount, verdicts)
from helpers import SUBSET, alive, api_config_file, only_run, processes_mentioning, run_cli, start_cli

WRITE_HOOK = 'OPENCOMPASS_SCICODE_FAIL_WRITE'       # utils/writes.FAIL_ENV
RUN_ENV = 'OPENCOMPASS_SCICODE_RUN_PID'             # utils/lifeline.RUN_ENV: every process of the run has it
STOP_BOUND_S = 20.0          # from the disk filling to run.py's end
GONE_BOUND_S = 15.0          # from run.py's end to the last process of the run gone
ROOMY = '64m'                # the tmpfs once room is made

# Where a write went, by the first pattern its path (relative to the work dir) holds: the stage.
STAGES = (('configs/tasks/', 'task files'), ('/configs/', 'planning'), ('.lock', 'planning'),
          ('/status.json', 'status'), ('.progress.json', 'progress'), ('/cache/verdicts/', 'shared verdicts'),
          ('/usage.json', 'usage'), ('/predictions/', 'predictions'), ('/results/', 'results'),
          ('/summary/report_', 'report'), ('/summary/', 'summary'), ('/logs/', 'a task log'))


@dataclass
class DiskPoint:
    """One point of the sweep: how the disk filled, and how the run took it."""
    how: str                    # 'tmpfs 48 KiB' or 'write 17'
    stage: str = ''             # where the run was, from what the failed write (or the error) names
    exit_code: int = None
    stop_s: float = None        # disk full (hook: the failed write; tmpfs: the last write that got
    #                             through) to run.py's end
    clean: bool = False         # one error line naming a path and the lack of space, no traceback
    left: int = 0               # processes of the run still running GONE_BOUND_S after its end
    lost: int = 0               # answers requested and not saved when it stopped
    beyond: int = 0             # answers asked over the point, beyond the steps needed
    resumed: bool = False       # -r ended well, with the uninterrupted run's verdicts
    records_lost: int = 0       # records saved before the stop, missing after the resume
    message: str = ''           # the error line (or what went wrong)
    extra: dict = field(default_factory=dict)

    @property
    def filled(self):
        return self.exit_code != 0

    @property
    def passed(self):
        """Whether the point ended as it must (a run that found room enough must just end well)."""
        stopped_well = (not self.filled) or (self.clean and self.stop_s is not None and self.stop_s <= STOP_BOUND_S)
        return (stopped_well and self.left == 0 and self.resumed and self.records_lost == 0
                and self.beyond == self.lost)


def stage_of(path, stderr=''):
    """The stage a write of `path` belongs to; for a path that is no file of the run (the task's
    log could not take its error), the stage of the task the run says stopped."""
    for pattern, stage in STAGES:
        if pattern in str(path):
            return stage
    for line in stderr.splitlines():
        if 'failed (no space left on device)' in line:
            return {'infer': 'inference', 'eval': 'evaluation'}.get(line.split()[0], line.split()[0])
    return 'unknown (the run directory named)'


def run_processes(work, run_pid):
    """Live processes of the run: started under run.py `run_pid` (they carry its pid in their
    environment), or naming the work dir on their command line."""
    found = set(processes_mentioning(str(work)))
    mark = f'{RUN_ENV}={run_pid}'.encode()
    for entry in os.listdir('/proc'):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f'/proc/{entry}/environ', 'rb') as fh:
                    if mark in fh.read().split(b'\0'):
                        found.add(int(entry))
            except OSError:
                continue
    return alive(found)


def wait_gone(work, run_pid):
    """Processes of the run left GONE_BOUND_S after it ended (killed then, so that the next point
    starts clean)."""
    deadline = time.monotonic() + GONE_BOUND_S
    while (left := run_processes(work, run_pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in left:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    return len(left)


def error_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith('error:')]


def _stop(server, cfg, work, point, env=None, timeout=120):
    """Run until the disk stops it (or it ends well); fills `point` with how it ended."""
    start = sent(server)
    proc = start_cli([cfg, '-w', work], env=env)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
        err += f'\n(hung: still running after {timeout} s)'
    ended = time.time()
    point.exit_code = proc.returncode
    point.left = wait_gone(work, proc.pid)
    settle(server, work)
    point.lost = sent(server) - start - answered(work)
    said = error_lines(err)
    point.message = said[0] if said else (err.strip().splitlines() or [''])[-1]
    point.clean = (proc.returncode != 0 and len(said) == 1 and 'no space left on device' in said[0]
                   and str(work) in said[0] and 'Traceback' not in out + err)
    point.extra.update(ended=ended, start=start, stderr=err, stdout=out)
    return ended


def _resume(server, cfg, work, point, reference, needed):
    """After room is made: -r to the end; what it asked and whether it ends as the reference."""
    snapshot = prediction_lines(work)
    done = run_cli([cfg, '-w', work, '-r'], timeout=300)
    point.beyond = sent(server) - point.extra['start'] - needed
    point.resumed = done.returncode == 0 and verdicts(only_run(work)) == reference
    if done.returncode != 0:
        point.message += f' | resume exited {done.returncode}: {(error_lines(done.stderr) or [""])[0]}'
    point.records_lost = records_lost(snapshot, work)


# ------------------------------------------------------------ a tmpfs of every size
def tmpfs_point(server, tmp, cfg, size_kib, reference, needed):
    """The run on a tmpfs of `size_kib` KiB; room made by remounting it larger, then -r."""
    disk = Path(tmp) / f'tmpfs-{size_kib}k'
    why = mount_tmpfs(disk, f'{size_kib}k')
    if why:
        raise OSError(f'cannot mount a tmpfs ({why}): run as root')
    point = DiskPoint(f'tmpfs {size_kib} KiB')
    try:
        ended = _stop(server, cfg, disk, point)
        files = [p for p in disk.rglob('*') if p.is_file()]
        last = max((p.stat().st_mtime for p in files), default=ended)
        point.stop_s = max(0.0, ended - last)
        named = point.message.split('no space left on device: ', 1)[-1].split(' could not', 1)[0]
        point.stage = stage_of(named, point.extra['stderr']) if point.filled else 'none (room enough)'
        subprocess.run(['mount', '-o', f'remount,size={ROOMY}', str(disk)], check=True, capture_output=True)
        _resume(server, cfg, disk, point, reference, needed)
    finally:
        unmount(disk)
    return point


# ------------------------------------------------------------ the N-th write refused
def count_writes(server, tmp, cfg):
    """[(number, path)] of the writes of an uninterrupted run (the hook counting, refusing none)."""
    work, counter = Path(tmp) / 'counted', Path(tmp) / 'counted.writes'
    done = run_cli([cfg, '-w', work], env={WRITE_HOOK: f'0:{counter}:{work}'})
    assert done.returncode == 0, done.stderr[-2000:]
    return _writes(counter)


def _writes(counter):
    rows = []
    for line in Path(f'{counter}.paths').read_text().splitlines():
        number, at, path = line.split(' ', 2)
        rows.append((int(number), float(at), path))
    return rows


def write_point(server, tmp, cfg, n, reference, needed, containing=''):
    """The run with its N-th write (of a path holding `containing`, if given) refused, and every
    write after it; room made by lifting the hook."""
    name = f'{n}-{_folder(containing)}' if containing else str(n)
    work, counter = Path(tmp) / f'write-{name}', Path(tmp) / f'write-{name}.writes'
    point = DiskPoint(f'write {n}' + (f' of {containing}' if containing else ''))
    ended = _stop(server, cfg, work, point, env={WRITE_HOOK: f'{n}:{counter}:{work}:{containing}'})
    failed = [(at, path) for number, at, path in _writes(counter) if number == n] if counter.exists() else []
    if failed and point.filled:
        at, path = failed[0]
        point.stop_s = max(0.0, ended - at)
        point.stage = stage_of(path)
        point.extra['path'] = path
    else:
        point.stage = 'none (room enough)'
    _resume(server, cfg, work, point, reference, needed)
    return point


# ------------------------------------------------------------ the sweep
def setup(server, tmp, sample_ids=SUBSET):
    """(config, reference verdicts, steps needed) for the sweep's run."""
    from faults import answer_wrong, uninterrupted
    answer_wrong(server)
    cfg = api_config_file(Path(tmp), server, model=dict(max_concurrency=2), sample_ids=list(sample_ids))
    return cfg, uninterrupted(server, tmp, cfg), steps_needed(sample_ids)


def run_size_kib(tmp, cfg, server):
    """KiB the uninterrupted run takes on a tmpfs (its whole size)."""
    disk = Path(tmp) / 'measure'
    why = mount_tmpfs(disk, ROOMY)
    if why:
        raise OSError(f'cannot mount a tmpfs ({why}): run as root')
    try:
        done = run_cli([cfg, '-w', disk])
        assert done.returncode == 0, done.stderr[-2000:]
        stat = os.statvfs(disk)
        return (stat.f_blocks - stat.f_bfree) * stat.f_frsize // 1024
    finally:
        unmount(disk)


def _folder(text):
    return ''.join(c if c.isalnum() else '_' for c in text).strip('_')


def first_of_each(stages):
    """Writes for sweep's `writes`: the first one of each of these stages (STAGES' names)."""
    return [(1, next(pattern for pattern, name in STAGES if name == stage)) for stage in stages]


def sweep(server, tmp, sizes=None, writes=None, step_kib=8, report=lambda point: None):
    """The DiskPoints of the sweep: tmpfs sizes `sizes` in KiB (None: every `step_kib` from 4 up
    to the run's whole size, and one above it), then the refused writes `writes` (None: every
    write of the run, 1 to the last; (n, text): the n-th write to a path holding text).
    `report(point)` is called as each point ends."""
    cfg, reference, needed = setup(server, tmp)
    points = []
    if sizes is None:
        whole = run_size_kib(tmp, cfg, server)
        sizes = list(range(4, whole, step_kib)) + [whole + 16]
    for size in sizes:
        points.append(tmpfs_point(server, tmp, cfg, size, reference, needed))
        report(points[-1])
    if writes is None:
        writes = range(1, len(count_writes(server, tmp, cfg)) + 1)
    for which in writes:
        n, containing = which if isinstance(which, tuple) else (which, '')
        points.append(write_point(server, tmp, cfg, n, reference, needed, containing))
        report(points[-1])
    return points


def table(points):
    """Rows by (way, stage): points, exits within the bound, clean messages, resumes to the same
    verdicts, answers asked beyond the steps needed (against those the stops lost), processes left."""
    groups = {}
    for p in points:
        way = p.how.split()[0]
        groups.setdefault((way, p.stage), []).append(p)
    rows = []
    for (way, stage), group in groups.items():
        filled = [p for p in group if p.filled]
        where = ', '.join(p.how.split(None, 1)[1] for p in group)
        rows.append([f'{way}: {stage}', f'{len(group)} ({where})',
                     out_of(filled, lambda p: p.stop_s is not None and p.stop_s <= STOP_BOUND_S),
                     out_of(filled, lambda p: p.clean), out_of(group, lambda p: p.resumed),
                     f'{sum(p.beyond for p in group)} ({sum(p.lost for p in group)} lost)',
                     sum(p.left for p in group), sum(p.records_lost for p in group)])
    return rows


HEADERS = ['disk full at', 'points', f'ended within {STOP_BOUND_S:g} s', 'one clean line',
           'resumed to the same verdicts', 'answers asked beyond needed (lost at the stop)', 'processes left',
           'records lost']
