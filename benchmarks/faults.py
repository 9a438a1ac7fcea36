"""Faults survived: a campaign of kills, double resumes, a full disk, a torn line, a hung model
server and one that dies, each against the loopback OpenAI-compatible server (tests/openai_server.py);
then the two sweeps: the disk full at every point of a run (faults_disk.py) and every kind of the
run's processes killed at seeded moments (faults_kill.py).

    python benchmarks/faults.py            # as root (the full-disk cases mount tmpfs file systems)
    python benchmarks/faults.py --only disk,kill --seeds 5 --step-kib 8

Each case runs `run.py` in real processes, injects its faults with real signals (the whole
process tree stopped, then SIGKILL, as a power cut), a real tmpfs or a real cut file, resumes
with `-r` and compares the end with an uninterrupted run of the same config. Prints one row
per case: the faults injected, the answers requested against the steps needed (the surplus is
what was in flight at each fault), whether the verdicts equal the uninterrupted run's, and the
records lost (saved before a fault, missing or changed after it). tests/e2e/test_faults.py runs
the same cases and asserts on what they return.
"""
import argparse
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / 'tests')]

from helpers import (DATA, KEY, SUBSET, api_config_file, only_run, power_cut, results, run_cli,  # noqa: E402
                     start_cli, statuses, wait_until, wait_until_gone)

DATASETS = ('val', 'val_bg')
WRONG_STEP = '29.2'          # answered without code: the verdicts are not all 'pass'


@dataclass
class Case:
    """What one case did and how it ended."""
    name: str
    faults: list = field(default_factory=list)      # what was injected, in order
    needed: int = 0             # answers the run needs (scored steps x datasets)
    requested: int = 0          # requests the server received over the case
    lost_in_flight: list = field(default_factory=list)   # requests cut off at each fault
    verdicts_equal: bool = False
    records_lost: int = 0
    exit_codes: list = field(default_factory=list)  # of every run.py, in order
    outputs: list = field(default_factory=list)     # (stdout, stderr) of the runs that ended by themselves
    run_dir: Path = None
    extra: dict = field(default_factory=dict)

    def row(self):
        return [self.name, '; '.join(self.faults), f'{self.requested} / {self.needed}',
                'yes' if self.verdicts_equal else 'no', self.records_lost]


# ------------------------------------------------------------ what a run wrote
def prediction_lines(work):
    """The complete lines of every predictions file under `work` ({file name: [line]})."""
    found = {}
    for path in sorted(Path(work).glob('*/predictions/*/*.jsonl')):
        data = path.read_bytes()
        found[path.name] = data[:data.rfind(b'\n') + 1].decode(errors='replace').splitlines()
    return found


def answered(work):
    """Records saved so far over both datasets (lines that parse)."""
    count = 0
    for lines in prediction_lines(work).values():
        for line in lines:
            try:
                json.loads(line)
                count += 1
            except ValueError:
                pass
    return count


def records_lost(before, work):
    """Records saved at a fault (`before`: prediction_lines then) that are not in the files now."""
    now = prediction_lines(work)
    return sum(1 for name, lines in before.items() for line in lines
               if _parses(line) and line not in set(now.get(name, ())))


def _parses(line):
    try:
        json.loads(line)
        return True
    except ValueError:
        return False


def twice_with_other_content(work):
    """Steps recorded more than once with different answers ({file: [step ids]}). A record with
    an error (no answer: the model gave up, an earlier step had no code) is replaced by design."""
    found = {}
    for name, lines in prediction_lines(work).items():
        seen = {}
        for line in filter(_parses, lines):
            rec = json.loads(line)
            if rec.get('error'):
                continue
            key = (rec['step_id'], rec.get('sample', 0))
            seen.setdefault(key, set()).add((rec.get('response'), rec.get('code'), rec.get('error')))
        twice = [step for (step, _), answers in seen.items() if len(answers) > 1]
        if twice:
            found[name] = twice
    return found


def verdicts(run_dir):
    """{dataset: {step: status}} of a finished run."""
    return {ds: statuses(results(run_dir, 'api', ds)) for ds in DATASETS}


def steps_needed(sample_ids):
    from opencompass_scicode.datasets import SciCodeDataset
    dataset = SciCodeDataset(path=str(DATA), split='validation', sample_ids=list(sample_ids))
    return len(DATASETS) * dataset.scored_step_count


def answer_wrong(server, step_id=WRONG_STEP):
    """Make `server` answer `step_id` without code, always (so that verdicts differ by step)."""
    header = _header(step_id)
    server.rule = lambda body: {'content': 'I would rather not write this one.'} if _asks(body, header) else None


def settle(server, work, timeout=15.0):
    """After a power cut: until no process of the run is left and no request is in flight."""
    wait_until_gone(str(work), timeout)
    time.sleep(0.3)               # a request sent as the run died may still be reaching the server
    wait_until(lambda: not server.in_flight, timeout, interval=0.05)


def sent(server):
    """Requests the server has received: answered, or still hanging (logged once they end)."""
    return len(server.log) + server.in_flight


def note_lost(case, server, work):
    """After a fault: the requests it cut off (sent, their answer not saved), beyond earlier faults'."""
    surplus = sent(server) - case.extra['log_start'] - answered(work)
    case.lost_in_flight.append(surplus - sum(case.lost_in_flight))


def out_of(items, holds):
    """'k/n': how many of `items` `holds` is true of."""
    return f'{sum(1 for item in items if holds(item))}/{len(items)}'


def uninterrupted(server, tmp, cfg):
    """The verdicts of the same config run once without faults (its requests are not counted)."""
    delay, server.delay = server.delay, 0.0
    try:
        work = Path(tmp) / 'uninterrupted'
        done = run_cli([cfg, '-w', work])
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        return verdicts(only_run(work))
    finally:
        server.delay = delay


def _case(server, tmp, name, sample_ids, **model):
    """(config, verdicts of its uninterrupted run, the Case, its work dir) of a case whose model
    has these options; requests are counted from here."""
    answer_wrong(server)
    cfg = api_config_file(Path(tmp), server, model=model, sample_ids=list(sample_ids))
    reference = uninterrupted(server, tmp, cfg)
    case = Case(name, needed=steps_needed(sample_ids), extra={'log_start': sent(server)})
    return cfg, reference, case, Path(tmp) / 'w'


def _kill_when(server, work, args, until, case, what, timeout=120):
    """Start run.py ARGS; once `until()` holds, cut the power to its whole tree. Whether it did."""
    proc = start_cli(args, output=subprocess.DEVNULL)
    hit = wait_until(lambda: proc.poll() is not None or until(), timeout, interval=0.02)
    if proc.poll() is not None or not hit:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        case.exit_codes.append(proc.returncode)
        return False
    before = prediction_lines(work)
    power_cut(proc)
    case.exit_codes.append(proc.returncode)
    settle(server, work)
    case.faults.append(what)
    note_lost(case, server, work)
    case.extra.setdefault('snapshots', []).append(before)
    return True


def _finish(server, case, cfg, work, reference):
    """A last `-r` to the end; the case's totals."""
    server.delay = 0.0
    done = run_cli([cfg, '-w', work, '-r'])
    case.exit_codes.append(done.returncode)
    case.outputs.append((done.stdout, done.stderr))
    case.requested = sent(server) - case.extra['log_start']
    if done.returncode == 0:
        case.run_dir = only_run(work)
        case.verdicts_equal = verdicts(case.run_dir) == reference
    case.records_lost = sum(records_lost(snap, work) for snap in case.extra.get('snapshots', ()))
    case.extra['twice'] = twice_with_other_content(work)
    return case


# ------------------------------------------------------------ case 1: repeated kills
def scoring_started(work):
    """An evaluation is under way: a step program is claimed in the verdict cache, or an
    evaluation task has started and not all results are written."""
    runs = list(Path(work).glob('*/'))
    if not runs:
        return False
    run_dir = runs[0]
    if next(run_dir.glob('cache/verdicts/*.claim'), None):
        return True
    started = list(run_dir.glob('logs/eval/*/*.out'))
    written = list(run_dir.glob('results/api/*.json'))
    return bool(started) and len(written) < len(DATASETS)


def repeated_kills(server, tmp, sample_ids=SUBSET, fractions=(0.2, 0.5, 0.8), delay=0.25):
    """Kill the run at `fractions` of its answers, at its last answer and during scoring,
    resuming with -r after each; then a last -r to the end."""
    cfg, reference, case, work = _case(server, tmp, 'repeated kills', sample_ids, max_concurrency=2)
    server.delay = delay
    args = [cfg, '-w', work]
    for fraction in fractions:
        mark = max(1, math.ceil(fraction * case.needed))
        if _kill_when(server, work, args, lambda: answered(work) >= mark, case,
                      f'SIGKILL at {mark}/{case.needed} answers'):
            args = [cfg, '-w', work, '-r']
    if _kill_when(server, work, args, lambda: answered(work) >= case.needed, case,
                  f'SIGKILL at the last answer'):
        args = [cfg, '-w', work, '-r']
    _kill_when(server, work, args, lambda: scoring_started(work), case, 'SIGKILL during scoring')
    return _finish(server, case, cfg, work, reference)


# ------------------------------------------------------------ case 2: two resumes at once
def double_resume(server, tmp, sample_ids=SUBSET, delay=0.3):
    """A run killed at a third of its answers; two `-r` started together; the one that works is
    killed by SIGKILL too; a later `-r` finishes."""
    cfg, reference, case, work = _case(server, tmp, 'two resumes at once', sample_ids, max_concurrency=1)
    server.delay = delay
    third = math.ceil(case.needed / 3)
    _kill_when(server, work, [cfg, '-w', work], lambda: answered(work) >= third, case,
               f'SIGKILL at {third}/{case.needed} answers')
    both = [start_cli([cfg, '-w', work, '-r']) for _ in range(2)]
    first = wait_until(lambda: next((p for p in both if p.poll() is not None), None), 120, interval=0.02)
    holder = next(p for p in both if p is not first)
    out, err = first.communicate()
    case.exit_codes.append(first.returncode)
    case.outputs.append((out, err))
    case.extra.update(refused=first, holder=holder, holder_running=holder.poll() is None)
    case.faults.append('2 x -r at once')
    # the one that works dies by SIGKILL once it has saved an answer of its own
    start = answered(work)
    if wait_until(lambda: answered(work) > start or holder.poll() is not None, 120, interval=0.02) \
            and holder.poll() is None:
        before = prediction_lines(work)
        power_cut(holder)
        settle(server, work)
        case.faults.append('SIGKILL of the working one')
        note_lost(case, server, work)
        case.extra['snapshots'] = [before]
    holder.communicate()
    case.exit_codes.append(holder.returncode)
    return _finish(server, case, cfg, work, reference)


# ------------------------------------------------------------ case 3: a full disk
def mount_tmpfs(folder, size):
    """Mount a tmpfs of `size` (e.g. '4m') on `folder`; why not, or None."""
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(['mount', '-t', 'tmpfs', '-o', f'size={size}', 'tmpfs', str(folder)],
                          capture_output=True, text=True)
    return None if done.returncode == 0 else (done.stderr.strip() or f'mount exited with {done.returncode}')


def unmount(folder):
    subprocess.run(['umount', '-l', str(folder)], capture_output=True)


def fill(folder, name='filler'):
    """Write a file into `folder` until its file system is full; its path."""
    path = Path(folder) / name
    chunk = b'\0' * 65536
    try:
        with open(path, 'wb') as fh:
            while True:
                fh.write(chunk)
                fh.flush()
    except OSError:
        pass
    # the last pages, smaller than a chunk
    try:
        with open(path, 'ab', buffering=0) as fh:
            while fh.write(b'\0' * 512):
                pass
    except OSError:
        pass
    return path


def full_disk(server, tmp, work, sample_ids=SUBSET, delay=0.3, at=0.4):
    """The work dir `work` (a small tmpfs, mounted by the caller) fills up once `at` of the
    answers are saved; the run must stop clearly; room is made and -r finishes."""
    tmp = Path(tmp)
    cfg, reference, case, _ = _case(server, tmp, 'full disk', sample_ids, max_concurrency=1)
    server.delay = delay
    mark = max(1, math.ceil(at * case.needed))
    proc = start_cli([cfg, '-w', work])
    filler = None
    if wait_until(lambda: proc.poll() is not None or answered(work) >= mark, 120, interval=0.02) \
            and proc.poll() is None:
        filler = fill(work)
        case.faults.append(f'disk full at {answered(work)}/{case.needed} answers')
        case.extra['snapshots'] = [prediction_lines(work)]
    out, err = proc.communicate(timeout=300)
    case.exit_codes.append(proc.returncode)
    case.outputs.append((out, err))
    settle(server, work)
    note_lost(case, server, work)
    case.extra['records_at_stop'] = answered(work)
    if filler:
        filler.unlink()
    return _finish(server, case, cfg, work, reference)


# ------------------------------------------------------------ case 4: a torn line
def torn_line(server, tmp, sample_ids=SUBSET):
    """A run's predictions file whose last record is cut in its middle (a crash between write and
    flush); -r must ignore it with a note and ask that step again."""
    tmp = Path(tmp)
    cfg, reference, case, work = _case(server, tmp, 'torn last line', sample_ids)
    first = run_cli([cfg, '-w', work, '-m', 'infer'])
    case.exit_codes.append(first.returncode)
    path = only_run(work) / 'predictions' / 'api' / 'val.jsonl'
    data = path.read_bytes()
    last = data.rstrip(b'\n').rfind(b'\n') + 1
    path.write_bytes(data[:last + (len(data) - last) // 2])     # the last record cut in half
    case.extra['torn_step'] = json.loads(data[last:])['step_id']
    case.faults.append('last record cut in half')
    case.lost_in_flight.append(1)       # the cut record was paid for and is asked again
    case.extra['snapshots'] = [prediction_lines(work)]
    return _finish(server, case, cfg, work, reference)


# ------------------------------------------------------------ case 5: a hung model server
def hung_server(server, tmp, hang_step='19.1', timeout=1.0, retries=1, sample_ids=SUBSET):
    """Every request for `hang_step` hangs for good: the model gives up after its timeout and
    retries, the run ends (exit 1, that step without code, the problem's later steps not asked);
    then the server answers again and -r asks only for what has no code."""
    tmp = Path(tmp)
    cfg, reference, case, work = _case(server, tmp, 'hung requests', sample_ids, timeout=timeout,
                                       retries=retries, max_retry_wait=5)
    wrong, header = server.rule, _header(hang_step)
    server.rule = lambda body: {'hang': 3600} if _asks(body, header) else wrong(body)
    first = run_cli([cfg, '-w', work], timeout=300)
    case.exit_codes.append(first.returncode)
    case.outputs.append((first.stdout, first.stderr))
    case.faults.append(f'requests for {hang_step} never answer (timeout={timeout:g} s, retries={retries})')
    case.extra['hanging'] = server.in_flight          # still hanging, their clients long gone
    case.lost_in_flight.append(server.in_flight)
    case.extra['snapshots'] = [prediction_lines(work)]
    server.rule = wrong
    return _finish(server, case, cfg, work, reference)


# ------------------------------------------------------------ case 5: a model server that dies
SERVE = [sys.executable, str(ROOT / 'tests' / 'serve_openai.py'), '--port', '{port}', '--data', str(DATA)]


def dying_server(server, tmp, sample_ids=SUBSET, die_after=3, delay=0.3):
    """The model's own `server=` process exits after `die_after` answers, once: the task starts
    it again on its port and the run goes on, the requests it cut off asked again. Requests are
    the answers the server gave, read from its output over both of its starts (a request it was
    answering when it died got none; the attempts refused while it restarted reached no model;
    both are in `extra`). `server`, the in-process one, is unused."""
    tmp = Path(tmp)

    def config(name, *extra):
        command = SERVE + ['--delay', str(delay), *extra]
        return api_config_file(tmp, SimpleNamespace(base_url=None), name=name, sample_ids=list(sample_ids),
                               model=dict(server=dict(command=command, ready_timeout=60), max_concurrency=2))
    reference = run_cli([config('reference.py'), '-w', tmp / 'uninterrupted'])
    assert reference.returncode == 0, reference.stdout[-2000:] + reference.stderr[-2000:]
    case = Case('dying model server', needed=steps_needed(sample_ids))
    cfg, work = config('cfg.py', '--die-after', str(die_after), '--die-once', str(tmp / 'died')), tmp / 'w'
    done = run_cli([cfg, '-w', work])
    case.exit_codes.append(done.returncode)
    case.outputs.append((done.stdout, done.stderr))
    case.faults.append(f'server= process exits after {die_after} answers')
    if done.returncode == 0:
        case.run_dir = only_run(work)
        case.verdicts_equal = verdicts(case.run_dir) == verdicts(only_run(tmp / 'uninterrupted'))
        logs = case.run_dir / 'logs' / 'infer'
        case.requested = (logs / 'api.server.log').read_text().count('request 200')
        case.lost_in_flight.append(0)       # nothing it answered was lost, so nothing paid twice
        usage = json.loads((case.run_dir / 'predictions' / 'api' / 'usage.json').read_text())
        case.extra['attempts'] = sum(part['requests'] for part in usage.values())
        case.extra['restarts'] = (logs / 'api.out').read_text().count('starting it again')
    case.extra['twice'] = twice_with_other_content(work)
    return case


def _header(step_id):
    from opencompass_scicode.datasets import SciCodeDataset
    return next(s.function_header for p in SciCodeDataset(path=str(DATA), split='validation').problems
                for s in p.steps if s.step_id == step_id)


def _asks(body, header):
    """Whether a request's last user message asks for the step with this function header."""
    users = [m['content'] for m in body.get('messages', []) if m['role'] == 'user']
    return bool(users) and header in users[-1].split('NEXT STEP', 1)[-1]


# ------------------------------------------------------------ the campaign
def campaign(tmp, tmpfs_size='1m'):
    """Every case in turn (each with a loopback server of its own); the Cases."""
    from openai_server import FakeOpenAI, all_steps
    steps = all_steps(str(DATA))
    cases = []
    for name, run in (('kills', repeated_kills), ('double', double_resume), ('disk', None),
                      ('torn', torn_line), ('hung', hung_server), ('dying', dying_server)):
        folder = Path(tmp) / name
        folder.mkdir()
        with FakeOpenAI(steps, key=KEY) as server:
            if run:
                cases.append(run(server, folder))
                continue
            disk = folder / 'disk'
            why = mount_tmpfs(disk, tmpfs_size)
            if why:
                print(f'full disk: skipped ({why}); run as root', file=sys.stderr)
                continue
            try:
                cases.append(full_disk(server, folder, disk))
            finally:
                unmount(disk)
    return cases


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--only', default='campaign,disk,kill', help='which of campaign, disk, kill to run')
    parser.add_argument('--step-kib', type=int, default=8, help='disk sweep: tmpfs sizes this far apart')
    parser.add_argument('--seeds', type=int, default=3, help='kill sweep: moments per kind of process')
    parser.add_argument('--detail', action='store_true', help='also one line per point and per kill')
    args = parser.parse_args(argv)
    chosen = set(args.only.split(','))
    bad = []
    with tempfile.TemporaryDirectory(prefix='scicode-faults-') as tmp:
        if 'campaign' in chosen:
            bad += _campaign_table(Path(tmp) / 'campaign')
        if 'disk' in chosen:
            bad += _sweep_table('disk', Path(tmp) / 'disk', args)
        if 'kill' in chosen:
            bad += _sweep_table('kill', Path(tmp) / 'kill', args)
    if bad:
        print(f'FAILED: {", ".join(bad)}', file=sys.stderr)
        return 1
    return 0


def _campaign_table(tmp):
    from tabulate import tabulate
    start = time.monotonic()
    tmp.mkdir()
    cases = campaign(tmp)
    print(tabulate([c.row() for c in cases],
                   headers=['case', 'faults injected', 'answers requested / steps needed',
                            'verdicts = uninterrupted', 'records lost'], disable_numparse=True,
                   tablefmt='github'))
    print(f'\n{len(SUBSET)} validation problems ({steps_needed(SUBSET)} answers: without and with background); '
          f'{time.monotonic() - start:.0f} s in all; exit codes: '
          + '; '.join(f'{c.name} {" ".join(map(str, c.exit_codes))}' for c in cases) + '\n')
    return [c.name for c in cases if not c.verdicts_equal or c.records_lost or c.extra.get('twice')]


def _name(point):
    return point.how if hasattr(point, 'how') else f'{point.kind} seed {point.seed}'


def _sweep_table(which, tmp, args):
    """Run the disk or the kill sweep and print its table; the names of the points that failed."""
    from tabulate import tabulate
    from openai_server import FakeOpenAI, all_steps
    import faults_disk
    import faults_kill
    start = time.monotonic()
    tmp.mkdir()
    def report(point):          # as each point ends: a sweep takes a while
        if args.detail:
            print(f'  {_name(point)}: {"ok" if point.passed else "FAILED"} at {point.stage}: '
                  f'{point.message[:160]}', flush=True)
    with FakeOpenAI(all_steps(str(DATA)), key=KEY) as server:
        if which == 'disk':
            module, points = faults_disk, faults_disk.sweep(server, tmp, step_kib=args.step_kib, report=report)
        else:
            module, points = faults_kill, faults_kill.sweep(server, tmp, seeds=range(args.seeds), report=report)
    names = [_name(point) for point in points]
    print(tabulate(module.table(points), headers=module.HEADERS, disable_numparse=True, tablefmt='github'))
    print(f'\n{which} sweep: {len(points)} points, {time.monotonic() - start:.0f} s in all\n')
    return [name for name, point in zip(names, points) if not point.passed]


if __name__ == '__main__':
    sys.exit(main())
