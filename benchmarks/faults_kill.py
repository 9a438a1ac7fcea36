"""Every kind of process of a run dies at a seeded random moment (benchmarks/faults.py prints
the table).

The kinds: run.py, the warm launcher, an inference task, an evaluation task, the step pool's
server, a pool worker, a step's child (the process a step runs in) and a `server=` model
server. Each case starts the run of benchmarks/faults_disk.py (2 settings x 3 problems), waits
until a seeded random moment of it (after the m-th answer, in evaluation, in the summary, or as
the k-th process of a kind that comes and goes appears), then until a process of the kind
lives, and SIGKILLs that one process (nothing else). The run must then either finish with the verdicts of an
uninterrupted run, or end by itself with a clear message (no traceback); nothing of the run may
be left running; `-r` (when needed) must end with the same verdicts; and the model must be
asked, over the case, only for the steps needed plus what was in flight when the process died.
"""
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from faults import (DATASETS, SERVE, _asks, _header, answer_wrong, answered, out_of, prediction_lines,
                    records_lost, sent, settle, steps_needed, verdicts)
from faults_disk import error_lines, wait_gone
from helpers import SUBSET, api_config_file, only_run, run_cli, start_cli

KINDS = ('run.py', 'warm launcher', 'infer task', 'eval task', 'step pool server', 'pool worker',
         "step's child", 'model server')
END_BOUND_S = 60.0           # from the kill to the end of a run.py that stops for it
HANG_S = 600.0               # a run.py still running this long after the kill has hung
DELAY_S = 0.1                # the loopback server's answers take this long: inference lasts a while
SLOW_STEP, SLOW_S = '1.1', 1.0   # its answer sleeps this long before the gold code: a step's child to catch


@dataclass
class Kill:
    """One case: what was killed when, and how the run took it."""
    kind: str
    seed: int
    stage: str = ''             # where the run was when the process died
    killed: bool = False        # a process of the kind lived after the chosen moment
    finished: bool = False      # the run went on to end well, with the uninterrupted verdicts
    exit_code: int = None
    end_s: float = None         # kill to run.py's end
    clear: bool = False         # ended well, or with a message and no traceback
    left: int = 0
    lost: int = 0               # requests in flight when it died (sent, their answers never saved)
    beyond: int = 0             # answers asked over the case beyond the steps needed
    resumed: bool = False       # the case ends (after -r if needed) with the uninterrupted verdicts
    records_lost: int = 0
    message: str = ''
    extra: dict = field(default_factory=dict)

    @property
    def in_time(self):
        """A run that goes on ends when it is done; one that stops for the kill, within END_BOUND_S."""
        return self.finished or (self.end_s is not None and self.end_s <= END_BOUND_S)

    @property
    def passed(self):
        return (not self.killed) or (self.clear and self.in_time and self.left == 0 and self.resumed
                                     and self.records_lost == 0 and self.beyond == self.lost)


# ------------------------------------------------------------ the run's processes, by kind
def _table():
    """{pid: (parent, comm, cmdline)} of every live process (the command line of Python ones only:
    the run's processes all are, or bear a task's name)."""
    table = {}
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open(f'/proc/{entry}/stat', 'rb') as fh:
                stat = fh.read()
            fields = stat[stat.rfind(b')') + 2:].split()
            comm = stat[stat.find(b'(') + 1:stat.rfind(b')')].decode(errors='replace')
            cmdline = ''
            if comm.startswith('python') or ':' in comm:
                with open(f'/proc/{entry}/cmdline', 'rb') as fh:
                    cmdline = fh.read().replace(b'\0', b' ').decode(errors='replace')
        except OSError:
            continue
        if fields[0] != b'Z':
            table[int(entry)] = (int(fields[1]), comm, cmdline)
    return table


def _below(table, root):
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, (parent, _, _) in table.items() if parent in frontier} - found
        found |= frontier
    return found


def processes(run_pid, work):
    """{kind: [pid]} of the run under run.py `run_pid` in the work dir `work`, as the process table
    shows it now (the step pool outlives the task that started it: it names the run's folder)."""
    table = _table()
    below = _below(table, run_pid) | {pid for pid, (_, _, cmdline) in table.items()
                                      if 'opencompass_scicode.pool.server' in cmdline and str(work) in cmdline}
    kinds = {kind: [] for kind in KINDS}
    kinds['run.py'] = [run_pid] if run_pid in table else []

    def task(pid, stage):
        parent, comm, cmdline = table[pid]
        return comm.startswith(f'{stage}:') or ('opencompass_scicode.tasks' in cmdline and f'{stage}_' in cmdline)

    servers = []
    for pid in below:
        parent, comm, cmdline = table[pid]
        if 'runners.warm_launcher' in cmdline and parent == run_pid:
            kinds['warm launcher'].append(pid)
        elif task(pid, 'infer'):
            kinds['infer task'].append(pid)
        elif task(pid, 'eval'):
            kinds['eval task'].append(pid)
        elif 'opencompass_scicode.pool.server' in cmdline:
            servers.append(pid)
        elif 'serve_openai.py' in cmdline and 'server_guard' not in cmdline:    # not its guard
            kinds['model server'].append(pid)
    kinds['step pool server'] = servers
    # The pool's server runs workers: a zygote's forks (the zygote has --channels and the server as
    # parent) or standalone ones (the server's children without --channels); a step runs in a
    # worker's child.
    for server in servers:
        children = [pid for pid, (parent, _, cmdline) in table.items()
                    if parent == server and 'sandbox.worker' in cmdline]
        zygotes = [pid for pid in children if '--channels' in table[pid][2]]
        workers = [pid for pid, (parent, _, _) in table.items() if parent in zygotes]
        workers += [pid for pid in children if pid not in zygotes]
        kinds['pool worker'] += workers
        kinds["step's child"] += [pid for pid, (parent, _, _) in table.items() if parent in workers]
    return kinds


def stage_now(kinds, work):
    if kinds['infer task']:
        return 'inference'
    results = list(Path(work).glob('*/results/*/*.json'))
    if len(results) >= len(DATASETS):
        return 'summary'
    return 'evaluation' if kinds['eval task'] or results else 'planning'


# ------------------------------------------------------------ one case
# When each kind may die: after the m-th answer is saved (m drawn from 1 to the answers needed
# less one), once evaluation has started, or once every results file is written (the summary);
# a kind that comes and goes (an eval task, a step's child) dies as its k-th one appears.
WHEN = {'run.py': ('answers', 'evaluation', 'summary'), 'warm launcher': ('answers', 'evaluation'),
        'infer task': ('answers',), 'step pool server': ('answers',), 'pool worker': ('answers',),
        'model server': ('answers',),
        'eval task': ('occurrence',), "step's child": ('occurrence',)}
OCCURRENCES = {'eval task': 2, "step's child": 4}       # k drawn among the first of these
LASTING_S = 0.3             # ... or a process of the kind that has lived this long


def moment(kind, seed, rng, needed):
    """A seeded moment for `kind`: ('answers', m), ('evaluation', None), ('summary', None) or
    ('occurrence', k). Seeds take the kind's stages in turn (seed 0: its first); m and k are
    drawn by `rng`."""
    when = WHEN[kind][seed % len(WHEN[kind])]
    if when == 'answers':
        return when, rng.randint(1, needed - 1)
    if when == 'occurrence':
        return when, rng.randrange(OCCURRENCES[kind])
    return when, None


def _reached(when, work, kinds):
    what, value = when
    if what == 'answers':
        return answered(work) >= value
    results = list(Path(work).glob('*/results/*/*.json'))
    if what == 'evaluation':
        return bool(kinds['eval task']) or bool(results)
    return len(results) >= len(DATASETS)


def kill_case(kind, seed, cfg, work, reference, needed, counter):
    """Run `cfg` in `work` and SIGKILL one process of `kind` at the moment `seed` draws (see
    moment): the one alive then, or the next to appear. Finish with -r if needed. `counter()`:
    answers the model was asked so far."""
    rng = random.Random(f'{kind}/{seed}')
    case = Kill(kind, seed)
    when = moment(kind, seed, rng, needed)
    case.extra['moment'] = when
    start = counter()
    began = time.monotonic()
    proc = start_cli([cfg, '-w', work])
    appeared, victim = {}, None           # pid -> when first seen, in order
    while proc.poll() is None:
        kinds, now = processes(proc.pid, work), time.monotonic()
        appeared.update({pid: now for pid in sorted(kinds[kind]) if pid not in appeared})
        if when[0] == 'occurrence':
            # the k-th to appear, or one alive for a while already (the slow step's: a run may
            # have fewer steps to run than k, sharing verdicts)
            order = list(appeared)
            lasting = [pid for pid in kinds[kind] if now - appeared[pid] >= LASTING_S]
            ready = len(order) > when[1] or bool(lasting)
            chosen = order[when[1]] if len(order) > when[1] else (lasting or [None])[0]
            victim = chosen if chosen in kinds[kind] else (sorted(kinds[kind]) or [None])[0]
        else:
            ready = _reached(when, work, kinds)
            victim = (sorted(kinds[kind]) or [None])[0]
        if ready and victim is not None:
            case.stage = stage_now(kinds, work)
            try:
                os.kill(victim, signal.SIGKILL)
                case.killed = True
            except ProcessLookupError:
                continue
            break
        time.sleep(0.01)
    killed_at = time.monotonic()
    try:
        out, err = proc.communicate(timeout=HANG_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        err += '\n(hung)'
    case.end_s = time.monotonic() - killed_at
    case.exit_code = proc.returncode
    case.extra.update(victim=victim, at_s=round(killed_at - began, 2), stderr=err)
    case.left = wait_gone(work, proc.pid)
    case.finished = proc.returncode == 0 and verdicts(only_run(work)) == reference
    said = error_lines(err)
    case.message = said[0] if said else next((line.strip() for line in (out + err).splitlines()
                                              if any(w in line for w in ('killed by', 'failed', 'interrupted'))), '')
    # run.py's own death says nothing (it is the one killed); any other ends well or tells why
    case.clear = 'Traceback' not in out + err and (case.finished or kind == 'run.py' or bool(case.message))
    settle_requests = counter()
    case.lost = settle_requests - start - answered(work)
    snapshot = prediction_lines(work)
    if case.finished:
        case.resumed = True
    else:
        done = run_cli([cfg, '-w', work, '-r'], timeout=300)
        case.resumed = done.returncode == 0 and verdicts(only_run(work)) == reference
        if done.returncode != 0:
            case.message += f' | resume exited {done.returncode}: {done.stderr[-500:]}'
    case.beyond = counter() - start - needed
    case.records_lost = records_lost(snapshot, work)
    return case


# ------------------------------------------------------------ the sweep
def sweep(server, tmp, kinds=KINDS, seeds=range(3), report=lambda case: None):
    """Every kind x seed; the Kill cases. `server`: the loopback server (FakeOpenAI) the API
    model asks; the model-server kind runs tests/serve_openai.py as the model's `server=`.
    `report(case)` is called as each case ends."""
    from faults import uninterrupted
    tmp = Path(tmp)
    answer_wrong(server)
    slow_down(server)
    cfg = api_config_file(tmp, server, model=dict(max_concurrency=2), sample_ids=list(SUBSET))
    reference, needed = uninterrupted(server, tmp, cfg), steps_needed(SUBSET)
    server.delay = DELAY_S
    cases = []
    for kind in kinds:
        if kind == 'model server':
            continue
        for seed in seeds:
            work = tmp / f'{_folder(kind)}-{seed}'
            settle(server, work)
            cases.append(kill_case(kind, seed, cfg, work, reference, needed, lambda: sent(server)))
            report(cases[-1])
    server.delay = 0.0
    if 'model server' in kinds:
        cases += _model_server_cases(tmp, seeds, report)
    return cases


def slow_down(server, step_id=SLOW_STEP, seconds=SLOW_S):
    """Make `server` answer `step_id` with its gold code after a sleep of `seconds` (same verdict;
    its step's process lives that long), beside the rules it has."""
    header, earlier = _header(step_id), server.rule
    # (extraction drops import lines, as the official one does: the module is reached without one)
    code = f'__import__("time").sleep({seconds})\n' + server.gold_for(f'NEXT STEP\n{header}')

    def rule(body):
        if _asks(body, header):
            return {'content': f'Here it is.\n```python\n{code}\n```\n'}
        return earlier(body) if earlier else None
    server.rule = rule


def _folder(kind):
    return ''.join(c if c.isalnum() else '_' for c in kind)


def _model_server_cases(tmp, seeds, report):
    """The model's own `server=` process killed: requests are counted as they reach it, over
    every start of it (tests/serve_openai.py --received)."""
    received = tmp / 'served-requests'
    command = SERVE + ['--delay', str(DELAY_S), '--received', str(received)]
    cfg = api_config_file(tmp, SimpleNamespace(base_url=None), name='served.py', sample_ids=list(SUBSET),
                          model=dict(server=dict(command=command, ready_timeout=60), max_concurrency=2))
    reference_run = run_cli([cfg, '-w', tmp / 'served-reference'])
    assert reference_run.returncode == 0, reference_run.stderr[-2000:]
    reference = verdicts(only_run(tmp / 'served-reference'))
    cases = []
    for seed in seeds:
        work = tmp / f'model_server-{seed}'

        def counter():
            return len(received.read_text().splitlines()) if received.exists() else 0
        cases.append(kill_case('model server', seed, cfg, work, reference, steps_needed(SUBSET), counter))
        report(cases[-1])
    return cases


def table(cases):
    """Rows by (kind, stage): cases, ended within the bound, finished or told clearly, resumed to
    the same verdicts, answers beyond needed (against those in flight), processes left, records lost."""
    groups = {}
    for case in cases:
        groups.setdefault((case.kind, case.stage if case.killed else 'not reached'), []).append(case)
    rows = []
    for (kind, stage), group in sorted(groups.items(), key=lambda g: (KINDS.index(g[0][0]), g[0][1])):
        killed = [c for c in group if c.killed]
        rows.append([kind, stage, f'{len(group)} (seeds {", ".join(str(c.seed) for c in group)})',
                     *(out_of(killed, lambda c, flag=flag: getattr(c, flag))
                       for flag in ('in_time', 'finished', 'clear', 'resumed')),
                     f'{sum(c.beyond for c in killed)} ({sum(c.lost for c in killed)} in flight)',
                     sum(c.left for c in killed), sum(c.records_lost for c in killed)])
    return rows


HEADERS = ['SIGKILL of', 'stage', 'cases', f'ended (if stopped: within {END_BOUND_S:g} s)', 'run finished anyway',
           'clear end', 'resumed to the same verdicts', 'answers asked beyond needed (in flight)',
           'processes left', 'records lost']

if __name__ == '__main__':
    sys.exit('run benchmarks/faults.py')
