"""A sweep of 8 API models through LocalRunner and through Slurm, against a loopback server.

    python benchmarks/sweep_scale.py [--models 8] [--delay 1.0] [--concurrency 16]
                                     [--runners local,slurm] [--modes infer,all] [-p debug] [--repeat N]

8 OpenAIChatModel entries (abbrs m0..m7, each with its own model name, so every request
says whose it is) x the validation split without and with background, against
tests/openai_server.py's FakeOpenAI in this process (a thread; it answers with the gold
code after `--delay` seconds and logs every request with its arrival time), each model with
max_concurrency=16 (`--concurrency`; 30 asks all of a model's 2 x 15 problem chains at once).
The config names no runner: the default one (LocalRunner with its 2 slots; SlurmRunner with
--slurm). One inference task per model; inference tasks of API models hold no slot, so all 8
start at once.
Whole `run.py` processes are timed:
- `infer`: `run.py CONFIG -m infer` (inference alone: the wall-time target);
- `all`: `run.py CONFIG` (inference with early evaluation, the evaluation tasks, the
  summary; the gold answers pass, and identical programs are scored once per run).
Each is printed beside the machine's bound, the longest problem chain (the most generated
steps in one problem x the delay: steps of a problem are sequential), with start-up (process
start to the first request), the inference span (first request to the last answer) and what
follows the last answer. Target: wall <= 1.3 x bound + start-up.
A whole run (`all`) is bound by its scoring too: the longest problem's answers plus its
longest step, or the distinct steps' time over the CPUs, from the least stretched runner's
figures (the issue's bound); beside it the same with release times (no step starts before
its problem's answers are in), each runner's ratio against its own steps, and where its
time went (start-up, scoring, the tail after the last verdict, its own CPU).

Issue 38's figures close the output, for whole runs: each run's wall time against its own
bound (the most, over problems, of the problem's chain of answers plus its longest step; the
step time of the distinct programs over the CPUs), their ratio (target <= 1.15x), and when
each inference task started after run.py did (its progress file's start: model and datasets
built; target: all within 2 s of the first).

For Slurm (`--slurm -p PARTITION`), the overhead of each inference job from submission to
its first request: `sbatch` is called through a shim that logs the time of the call, the
job id and the job name; the job's allocation and launch come from the controller's and
slurmd's logs (millisecond timestamps; /var/log/slurm/, where readable); the first request
from the server's log. Printed: median and max over the sweep's inference jobs, and where it
goes: the sbatch call, queued (waiting for a free CPU, then the
scheduler's own latency), launch, the task's start-up. Also printed: how many one-CPU jobs
the partition can run at once (CPUs, OverSubscribe, memory per CPU), and how many did. The
target (<= 2 s on an idle cluster) is measured on one inference job alone, `--repeat` times.
`--repeat N` takes turns N times and reports medians (these machines are shared and noisy).
"""
import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'tests'))

from openai_server import FakeOpenAI, all_steps  # noqa: E402
from opencompass_scicode.datasets import SciCodeDataset  # noqa: E402

KEY = 'sweep-bench-key'
SLURM_LOGS = {'ctld': Path('/var/log/slurm/slurmctld.log'), 'slurmd': Path('/var/log/slurm/slurmd.log')}
SHIM = '''#!/bin/bash
# sbatch, timed: "called returned rc job-id job-name" per call, then the real sbatch's answer.
t0=${EPOCHREALTIME:-$(date +%s.%N)}
name=
for a in "$@"; do case $a in --job-name=*) name=${a#--job-name=} ;; esac; done
out=$(REAL_SBATCH "$@"); rc=$?
t1=${EPOCHREALTIME:-$(date +%s.%N)}
printf '%s %s %s %s %s\\n' "$t0" "$t1" "$rc" "${out%%;*}" "$name" >> SHIM_LOG
[ -n "$out" ] && printf '%s\\n' "$out"
exit $rc
'''


def write_config(root, data, base_url, models, concurrency):
    root.mkdir(exist_ok=True)
    config = root / 'sweep.py'
    config.write_text(textwrap.dedent(f'''
        models = [dict(type='OpenAIChatModel', abbr=f'm{{i}}', path=f'sweep-bench-m{{i}}',
                       base_url={base_url!r}, key={KEY!r}, max_concurrency={concurrency},
                       retries=2, timeout=120)
                  for i in range({models})]
        datasets = [dict(abbr='scicode_validation' + suffix, type='SciCodeDataset', path={str(data)!r},
                         split='validation', with_bg=bg)
                    for bg, suffix in ((False, ''), (True, '_with_background'))]
        # no runner named: the default one (inference of API models holds no slot of it)
    '''))
    return config


def make_shim(root):
    real = shutil.which('sbatch')
    if real is None:
        return None, None
    bindir = root / 'bin'
    bindir.mkdir()
    log = root / 'sbatch.log'
    shim = bindir / 'sbatch'
    shim.write_text(SHIM.replace('REAL_SBATCH', real).replace('SHIM_LOG', str(log)))
    shim.chmod(0o755)
    return bindir, log


# ------------------------------------------------------------ Slurm: what the partition allows
def _scontrol(*what):
    out = subprocess.run(['scontrol', '-o', 'show', *what], capture_output=True, text=True)
    return dict(item.split('=', 1) for item in out.stdout.split() if '=' in item) if out.returncode == 0 else {}


def _mb(text):
    m = re.match(r'(\d+)([MGT]?)', text or '')
    return int(m.group(1)) * {'': 1, 'M': 1, 'G': 1024, 'T': 1024 ** 2}[m.group(2)] if m else None


def slurm_capacity(partition):
    """(one-CPU jobs the partition can run at once, a sentence saying why)."""
    part = _scontrol('partition', partition)
    if not part:
        return None, f'no partition {partition!r} (scontrol)'
    conf = {}
    out = subprocess.run(['scontrol', 'show', 'config'], capture_output=True, text=True)
    for line in out.stdout.splitlines():
        key, _, value = line.partition('=')
        conf[key.strip()] = value.strip()
    node = _scontrol('node', part.get('Nodes', ''))
    cpus = int(node.get('CPUTot', part.get('TotalCPUs', '1')))
    memory = _mb(node.get('RealMemory'))
    oversub = part.get('OverSubscribe', 'NO')
    m = re.match(r'(FORCE|YES)(?::(\d+))?', oversub)
    # FORCE shares every job's CPUs; YES those of jobs submitted with --oversubscribe, which the
    # runner does for inference jobs of API models, each asking SlurmRunner.shared_mem
    share = int(m.group(2) or 4) if m else 1
    per_cpu = _mb(part.get('DefMemPerCPU') if part.get('DefMemPerCPU', 'UNLIMITED') != 'UNLIMITED'
                  else conf.get('DefMemPerCPU'))
    if m and m.group(1) == 'YES':
        import inspect
        from opencompass_scicode.runners.slurm import SlurmRunner
        per_cpu = _mb(inspect.signature(SlurmRunner).parameters['shared_mem'].default)
    by_cpu = cpus * share
    by_mem = memory // per_cpu if memory and per_cpu and 'MEMORY' in conf.get('SelectTypeParameters', '') else None
    slots = min(by_cpu, by_mem) if by_mem else by_cpu
    why = (f'{cpus} CPUs, OverSubscribe={oversub}, {conf.get("SelectTypeParameters", "?")}'
           + (f', DefMemPerCPU={per_cpu}M of {memory}M' if per_cpu else '')
           + f': at most {slots} one-CPU jobs at once'
           + (' (memory is never oversubscribed)' if by_mem is not None and by_mem < by_cpu else ''))
    return slots, why


# ------------------------------------------------------------ Slurm: what happened
_STAMP = re.compile(r'^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)\] (.*)$')


def log_offsets():
    return {k: (p.stat().st_size if os.access(p, os.R_OK) else None) for k, p in SLURM_LOGS.items()}


def slurm_events(offsets):
    """{job id: {'submit', 'allocate', 'launch', 'complete': epoch seconds}} from the logs since `offsets`."""
    events = {}
    patterns = [('ctld', 'submit', r'_slurm_rpc_submit_batch_job: JobId=(\d+)'),
                ('ctld', 'allocate', r'(?:sched: Allocate|Started) JobId=(\d+)'),
                ('ctld', 'complete', r'_job_complete: JobId=(\d+) done'),
                ('slurmd', 'launch', r'Launching batch job (\d+)')]
    for which, path in SLURM_LOGS.items():
        if offsets.get(which) is None:
            continue
        with open(path, errors='replace') as fh:
            fh.seek(offsets[which])
            for line in fh:
                m = _STAMP.match(line.strip())
                if not m:
                    continue
                for source, event, pattern in patterns:
                    found = re.search(pattern, m.group(2)) if source == which else None
                    if found:
                        at = datetime.strptime(m.group(1), '%Y-%m-%dT%H:%M:%S.%f').timestamp()
                        events.setdefault(found.group(1), {}).setdefault(event, at)
    return events


def read_shim(log):
    calls = []
    if log and log.exists():
        for line in log.read_text().splitlines():
            t0, t1, rc, job, *name = line.split(' ', 4)
            calls.append({'called': float(t0), 'returned': float(t1), 'rc': int(rc), 'job': job,
                          'name': name[0] if name else ''})
    return calls


def job_overheads(calls, events, first_request, ready):
    """One row per inference job: submission to first request, and where it went."""
    rows = []
    completions = sorted(e['complete'] for e in events.values() if 'complete' in e)
    for call in calls:
        model = call['name'].split('/')[1] if call['name'].startswith('infer/') else None
        if model is None or model not in first_request:
            continue
        ev = events.get(call['job'], {})
        row = {'model': model, 'job': call['job'], 'total': first_request[model] - call['called'],
               'sbatch': call['returned'] - call['called']}
        if 'allocate' in ev and 'launch' in ev:
            # A CPU freed by a job of this run after submission: the wait before it is queueing
            # behind other jobs, the rest the scheduler's own latency.
            freed = [c for c in completions if call['returned'] <= c <= ev['allocate']]
            free_at = max([call['returned']] + freed)
            row.update(waited=free_at - call['returned'], scheduled=ev['allocate'] - free_at,
                       launch=ev['launch'] - ev['allocate'], startup=first_request[model] - ev['launch'],
                       first_wave=not freed)
            if model in ready:
                row.update(to_ready=ready[model] - ev['launch'], to_first=first_request[model] - ready[model])
        rows.append(row)
    return rows


def most_at_once(events, job_ids):
    spans = [(e['allocate'], e.get('complete', float('inf'))) for j, e in events.items()
             if j in job_ids and 'allocate' in e]
    return max((sum(a <= t < b for a, b in spans) for t, _ in spans), default=0)


# ------------------------------------------------------------ one run
def run_once(config, work, runner, mode, server, partition, shim_dir, shim_log, paths):
    args = [sys.executable, str(ROOT / 'run.py'), str(config), '-w', str(work)]
    if mode == 'infer':
        args += ['-m', 'infer']
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get('PYTHONPATH', ''))
    if runner == 'slurm':
        args += ['--slurm', '-p', partition]
        env['PATH'] = f'{shim_dir}{os.pathsep}{env["PATH"]}'
        if shim_log.exists():
            shim_log.unlink()
    offsets = log_offsets() if runner == 'slurm' else {}
    seen = len(server.log)
    clock = time.time() - time.monotonic()       # server times are monotonic; Slurm's are epoch
    start = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f'{runner} {mode}: run.py exited {proc.returncode}:\n{proc.stdout[-2000:]}\n'
                         f'{proc.stderr[-3000:]}')
    log = server.log[seen:]
    bad = [e['status'] for e in log if e['status'] != 200]
    if bad:
        raise SystemExit(f'{runner} {mode}: {len(bad)} requests failed ({bad[:5]})')
    first = {}
    for entry in log:
        model = entry['body'].get('model', '')
        first[model] = min(first.get(model, entry['time']), entry['time'])
    times = [e['time'] for e in log]
    # CPU of run.py and the tasks it waited for; the step pool (a session of its own) and its
    # steps are not counted
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    out = {'wall': wall, 'cpu': cpu, 'requests': len(log), 'startup': min(times) - start,
           'span': max(times) + server.delay - min(times), 'after': start + wall - max(times) - server.delay}
    spans = []
    for model in paths:
        mine = [e['time'] for e in log if e['body'].get('model') == model]
        spans.append(max(mine) + server.delay - min(mine))
    out['model_span'] = statistics.median(spans)
    out['chain'] = longest_chains(log, server, paths)
    if mode == 'all':
        out['passed'] = check_results(work, paths)
        # when the last step ended (its verdict written): what follows is the run's own tail
        out['steps_end'] = out['passed'].pop('last_verdict') - clock - start
    # An inference task writes its progress file once it has built its model and datasets.
    (run_dir,) = [p for p in work.iterdir() if p.is_dir()]
    ready = {}
    for model, abbr in paths.items():
        progress = run_dir / 'logs' / 'infer' / f'{abbr}.progress.json'
        if progress.exists() and model in first:
            ready[abbr] = json.loads(progress.read_text())['started'] - clock
    out['ready'] = statistics.median(t - start for t in ready.values())
    out['ready_to_first'] = statistics.median(first[m] - ready[a] for m, a in paths.items() if a in ready)
    out['ready_by_model'] = {a: t + clock for a, t in ready.items()}
    out['task_starts'] = {a: t - start for a, t in sorted(ready.items())}
    # After the last answer: tasks end (their logs' last write), run.py has every status, exit.
    last_answer = max(times) + server.delay
    ends = {stage: [f.stat().st_mtime - clock for f in (run_dir / 'logs' / stage).rglob('*.out')]
            for stage in ('infer', 'eval')}
    out['infer_end'] = max(ends['infer']) - last_answer
    out['eval_end'] = max(ends['eval']) - last_answer if ends['eval'] else None
    out['statuses'] = (run_dir / 'status.json').stat().st_mtime - clock - last_answer
    if runner == 'slurm':
        time.sleep(0.5)          # let the daemons write their last lines
        calls = read_shim(shim_log)
        events = slurm_events(offsets)
        by_model = {paths[m]: t + clock for m, t in first.items() if m in paths}
        out['jobs'] = job_overheads(calls, events, by_model, out['ready_by_model'])
        infer_ids = {c['job'] for c in calls if c['name'].startswith('infer/')}
        out['jobs_at_once'] = most_at_once(events, infer_ids)
        out['submitted'] = len(calls)
        out['slurm_logs'] = bool(events)
    shutil.rmtree(work, ignore_errors=True)
    return out


def longest_chains(log, server, paths):
    """The longest problem's chains (a model x background setting each): how long after the model's
    first request each started, and the time between an answer and the chain's next request."""
    longest = max(server.chains, key=lambda pid: len(server.chains[pid]))
    headers = {s.function_header: s.step_id for s in server.chains[longest]}
    starts, gaps = [], []
    for model in paths:
        mine = [e for e in log if e['body'].get('model') == model]
        chains = {}
        for entry in mine:
            text = '\n'.join(m.get('content') or '' for m in entry['body']['messages'] if m['role'] == 'user')
            next_step = text.split('NEXT STEP', 1)[-1]
            if any(h and h in next_step for h in headers):
                # the official template for prompts with background says so
                chains.setdefault('along with background knowledge' in text, []).append(entry['time'])
        for times in chains.values():
            starts.append(times[0] - min(e['time'] for e in mine))
            gaps += [b - a - server.delay for a, b in zip(times, times[1:])]
    return {'start': statistics.median(starts), 'gap': statistics.median(gaps), 'max_start': max(starts)}


def check_results(work, paths):
    """Every model x dataset result at 100% (the gold answers), as a check of the whole run."""
    (run_dir,) = [p for p in work.iterdir() if p.is_dir()]
    files = list((run_dir / 'results').glob('*/*.json'))
    full = sum(json.loads(f.read_text())['main_problem_resolve_rate'] == 100 for f in files)
    if len(files) != 2 * len(paths) or full != len(files):
        raise SystemExit(f'results: {full} of {len(files)} files at 100% (expected {2 * len(paths)})')
    # One verdict per distinct program of the run, each with the time its step took.
    files = [f for f in (run_dir / 'cache' / 'verdicts').glob('*.json') if not f.name.startswith('_')]
    verdicts = [json.loads(f.read_text()) for f in files]
    times = [(v.get('duration_s') or 0.0, v.get('step_id')) for v in verdicts]
    longest, step_id = max(times, default=(0.0, None))
    return {'programs': len(times), 'step_seconds': sum(t for t, _ in times), 'longest_step': longest,
            'longest_step_id': step_id, 'steps': [[sid, t] for t, sid in times],
            'last_verdict': max((f.stat().st_mtime for f in files), default=0.0)}


def release_bound(steps, answered, cpus):
    """A lower bound on the end of scoring that counts when each step can start at the earliest:
    once its problem's answers are in (`answered[problem id]` seconds after the first request,
    the chain of its steps). Steps released at r or later need at least r + their time / cpus
    (the bound of scheduling jobs with release times on identical machines); one step needs
    its release plus its own time."""
    jobs = sorted((answered[str(sid).split('.')[0]], t) for sid, t in steps)
    later = sum(t for _, t in jobs)
    best = max((r + t for r, t in jobs), default=0.0)
    for r, t in jobs:
        best = max(best, r + later / cpus)
        later -= t
    return best


def issue_bound(steps, chains, cpus):
    """Issue 38's bound of a whole run, from its own records: the most, over problems, of the
    problem's chain of answers (`chains[problem id]`, seconds) plus its longest step, and the
    step time of the distinct programs (`steps`: [[step id, seconds]]) over the CPUs."""
    longest = {}
    for sid, seconds in steps:
        pid = str(sid).split('.')[0]
        longest[pid] = max(longest.get(pid, 0.0), seconds)
    return max(max(chains[pid] + longest.get(pid, 0.0) for pid in chains),
               sum(seconds for _, seconds in steps) / cpus)


def _ms(values):
    return f'{statistics.median(values):.2f}s' if values else '-'


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--models', type=int, default=8)
    parser.add_argument('--delay', type=float, default=1.0, help='seconds the server takes per answer')
    parser.add_argument('--concurrency', type=int, default=16, help='max_concurrency of each model')
    parser.add_argument('--runners', default='local,slurm')
    parser.add_argument('--modes', default='infer,all', help='infer: -m infer; all: the whole run')
    parser.add_argument('-p', '--partition', default='debug')
    parser.add_argument('--repeat', type=int, default=1)
    parser.add_argument('--data', default=str(ROOT / 'data' / 'scicode'))
    args = parser.parse_args(argv)
    runners, modes = args.runners.split(','), args.modes.split(',')

    datasets = [SciCodeDataset(path=args.data, split='validation', with_bg=bg) for bg in (False, True)]
    problems = datasets[0].problems
    longest = max(len(p.scored_steps) for p in problems)
    bound = longest * args.delay
    steps = sum(d.scored_step_count for d in datasets)
    concurrency = args.concurrency
    print(f'validation split: {len(problems)} problems x 2 background settings = {steps} steps per model, '
          f'{args.models} models (m0..m{args.models - 1}), max_concurrency {concurrency} each; '
          f'server delay {args.delay:.1f}s per answer, in this process')
    print(f"machine's bound: the longest problem chain, {longest} steps x {args.delay:.1f}s = {bound:.1f}s; "
          f'target wall <= 1.3 x {bound:.1f}s = {1.3 * bound:.1f}s plus start-up')
    slots = None
    if 'slurm' in runners:
        slots, why = slurm_capacity(args.partition)
        print(f'slurm partition {args.partition}: {why}')
        if slots:
            waves = -(-args.models // slots)
            print(f'  -> {args.models} inference jobs run in {waves} wave(s): the cluster\'s bound is '
                  f'{waves} x {bound:.1f}s = {waves * bound:.1f}s before any start-up or scheduling')
        if not all(os.access(p, os.R_OK) for p in SLURM_LOGS.values()):
            print('  (Slurm logs not readable here: the overhead is shown without its breakdown)')

    results = {(r, m): [] for r in runners for m in modes}
    with FakeOpenAI(all_steps(args.data), key=KEY, delay=args.delay) as server, \
            tempfile.TemporaryDirectory(prefix='scicode-sweep-bench-') as tmp:
        # Like a real server's (uvicorn: 2048); http.server's default of 5 drops SYNs when 30
        # chains connect at once, and a dropped SYN costs a 1 s retransmission.
        server.httpd.socket.listen(1024)
        server.chains = {p.problem_id: p.scored_steps for p in problems}
        root = Path(tmp)
        config = write_config(root, args.data, server.base_url, args.models, concurrency)
        shim_dir, shim_log = make_shim(root) if 'slurm' in runners else (None, None)
        paths = {f'sweep-bench-m{i}': f'm{i}' for i in range(args.models)}
        for run in range(args.repeat):
            line = []
            for mode in modes:
                for runner in runners:
                    out = run_once(config, root / f'work-{runner}-{mode}', runner, mode, server,
                                   args.partition, shim_dir, shim_log, paths)
                    results[runner, mode].append(out)
                    extra = ''
                    if out.get('jobs'):
                        totals = [j['total'] for j in out['jobs']]
                        extra = (f', overhead median {statistics.median(totals):.2f}s max {max(totals):.2f}s, '
                                 f'{out["jobs_at_once"]} jobs at once')
                    line.append(f'{runner} {mode} {out["wall"]:.1f}s (start-up {out["startup"]:.1f}s, '
                                f'{out["requests"]} requests{extra})')
            print(f'run {run + 1}: ' + '; '.join(line), flush=True)
        idle = []
        if 'slurm' in runners:
            # The overhead on an idle cluster: one inference job alone, nothing else on the node.
            one = write_config(root / 'one', args.data, server.base_url, 1, concurrency)
            for run in range(args.repeat):
                out = run_once(one, root / 'work-idle', 'slurm', 'infer', server, args.partition,
                               shim_dir, shim_log, {'sweep-bench-m0': 'm0'})
                idle += out['jobs']

    med = statistics.median
    print()
    print(f'whole run.py processes, {"median of %d runs" % args.repeat if args.repeat > 1 else "one run"}; '
          f'bound {bound:.1f}s (longest chain); start-up: process start to the first request; inference: '
          f'first request to last answer; after: last answer to exit')
    header = (f'{"runner":7} {"mode":6} {"wall":>7} {"start-up":>8} {"inference":>9} {"per model":>9} '
              f'{"after":>7} {"wall/bound":>10} {"(wall-start-up)/bound":>21}  target')
    print(header)
    for (runner, mode), outs in results.items():
        wall, startup = med([o['wall'] for o in outs]), med([o['startup'] for o in outs])
        ratio = (wall - startup) / bound
        print(f'{runner:7} {mode:6} {wall:>6.1f}s {startup:>7.1f}s {med([o["span"] for o in outs]):>8.1f}s '
              f'{med([o["model_span"] for o in outs]):>8.1f}s {med([o["after"] for o in outs]):>6.1f}s '
              f'{wall / bound:>9.2f}x {ratio:>20.2f}x  '
              # a whole run is evaluation-bound: its own bound is printed below
              + (f'{"met" if ratio <= 1.3 else "missed"} (<= 1.3x)' if mode == 'infer' else '(see below)'))
    print('after the last answer, medians: the last inference task ends (its log\'s last write), the last '
          'evaluation task ends, run.py has every status (status.json), the process exits (summary)')
    for (runner, mode), outs in results.items():
        evals = [o['eval_end'] for o in outs if o['eval_end'] is not None]
        print(f'  {runner:7} {mode:6} infer tasks +{med([o["infer_end"] for o in outs]):.2f}s'
              + (f', eval tasks +{med(evals):.2f}s' if evals else '')
              + f', statuses +{med([o["statuses"] for o in outs]):.2f}s, exit +{med([o["after"] for o in outs]):.2f}s')
    print('inference tasks, medians: ready (model and datasets built, progress file written) after the '
          'process start, and from ready to the first request')
    for (runner, mode), outs in results.items():
        print(f'  {runner:7} {mode:6} ready +{med([o["ready"] for o in outs]):.2f}s, first request '
              f'{med([o["ready_to_first"] for o in outs]):.2f}s later')
    print('the longest problem\'s chains (model x background setting), medians: when they start after the '
          'model\'s first request (which goes alone), and the time from an answer to the chain\'s next request')
    for (runner, mode), outs in results.items():
        print(f'  {runner:7} {mode:6} start +{med([o["chain"]["start"] for o in outs]):.2f}s (max '
              f'+{med([o["chain"]["max_start"] for o in outs]):.2f}s), '
              f'{1000 * med([o["chain"]["gap"] for o in outs]):.0f} ms between steps')
    for runner in runners:
        if (runner, 'infer') in results and (runner, 'all') in results:
            w_all = med([o['wall'] for o in results[runner, 'all']])
            w_inf = med([o['wall'] for o in results[runner, 'infer']])
            print(f'{runner}: evaluation (early evaluation, eval tasks, summary) adds {w_all - w_inf:.1f}s to '
                  f'-m infer, {(w_all - w_inf) / w_all:.0%} of the whole run\'s {w_all:.1f}s; '
                  f'every result at 100%')
    alls = {runner: results[runner, 'all'] for runner in runners if (runner, 'all') in results}
    if alls:
        # Step times are wall-clock times of the step processes: where more evaluation workers run
        # than there are CPUs (LocalRunner: one early evaluator per inference task, 8 at once),
        # they stretch. The least stretched run estimates the work.
        cpus = os.cpu_count() or 1
        figures = {runner: (med([o['passed']['step_seconds'] for o in outs]),
                            med([o['passed']['longest_step'] for o in outs]), outs[0]['passed'])
                   for runner, outs in alls.items()}
        print('evaluation work in the whole runs (one verdict per distinct program), medians: '
              + '; '.join(f'{runner}: {w["programs"]} programs, {sec:.1f}s of step time, longest '
                          f'{w["longest_step_id"]} {lng:.1f}s' for runner, (sec, lng, w) in figures.items()))
        print('CPU time of run.py and its tasks (not the steps, nor the step pool), medians: '
              + '; '.join(f'{runner}: {med([o["cpu"] for o in outs]):.1f}s' for runner, outs in alls.items()))
        sec, lng, w = min(figures.values(), key=lambda f: f[0])
        pid = str(w['longest_step_id']).split('.')[0]
        before = sum(len(p.scored_steps) for p in problems if p.problem_id == pid) * args.delay
        whole = max(bound, before + lng, sec / cpus)
        print(f'  bound of a whole run (least stretched figures): max({bound:.1f}s chain, {before:.0f}s of '
              f'answers to problem {pid} + its {lng:.1f}s step, {sec:.1f}s / {cpus} CPUs) = {whole:.1f}s; '
              + ', '.join(f'{runner} wall {med([o["wall"] for o in outs]):.1f}s = '
                          f'{med([o["wall"] for o in outs]) / whole:.2f}x' for runner, outs in alls.items()))
        # The same work, counting that a step cannot start before its problem's answers are in,
        # against the least stretched figures and against each runner's own (its steps as they ran).
        answered = {p.problem_id: len(p.scored_steps) * args.delay for p in problems}
        own = {runner: med([max(bound, release_bound(o['passed']['steps'], answered, cpus)) for o in outs])
               for runner, outs in alls.items()}
        least = min(own.values())
        print(f'  with release times (no step before its problem\'s answers): {least:.1f}s; '
              + ', '.join(f'{runner} {med([o["wall"] for o in outs]) / least:.2f}x (against its own steps '
                          f'{own[runner]:.1f}s: {med([o["wall"] for o in outs]) / own[runner]:.2f}x)'
                          for runner, outs in alls.items()))
        print('  where a whole run\'s time goes, medians: start-up (to the first request), scoring (to the last '
              'verdict), the tail (eval tasks, summary, exit), and the CPU the run itself spent beside the steps')
        for runner, outs in alls.items():
            ends, cpu = med([o['steps_end'] for o in outs]), med([o['cpu'] for o in outs])
            print(f'    {runner:7} start-up {med([o["startup"] for o in outs]):.1f}s, last verdict at {ends:.1f}s, '
                  f'tail {med([o["wall"] - o["steps_end"] for o in outs]):.1f}s; run.py and tasks '
                  f'{cpu:.1f}s of CPU ({cpu / cpus:.1f}s of {cpus} CPUs)')

    if idle:
        totals = [j['total'] for j in idle]
        print()
        print(f'slurm, one inference job alone on the idle cluster: submission (sbatch called) to its first '
              f'request {med(totals):.2f}s (median of {len(totals)}, max {max(totals):.2f}s); target <= 2 s: '
              f'{"met" if med(totals) <= 2 else "missed"}')
        detailed = [j for j in idle if 'launch' in j]
        if detailed:
            print(f'  = sbatch {_ms([j["sbatch"] for j in detailed])} + scheduler '
                  f'{_ms([j["scheduled"] for j in detailed])} + launch {_ms([j["launch"] for j in detailed])}'
                  f' + task start-up {_ms([j["startup"] for j in detailed])} (medians)')
    for mode in modes:
        outs = results.get(('slurm', mode))
        if not outs or not outs[0].get('jobs'):
            continue
        jobs = [j for o in outs for j in o['jobs']]
        per_run_med = [med([j['total'] for j in o['jobs']]) for o in outs]
        per_run_max = [max(j['total'] for j in o['jobs']) for o in outs]
        print()
        print(f'slurm {mode}: submission (sbatch called) to the first request, over the {len(outs[0]["jobs"])} '
              f'inference jobs: median {med(per_run_med):.2f}s, max {med(per_run_max):.2f}s'
              + (f' (medians over {len(outs)} runs)' if len(outs) > 1 else '') + '; 8 jobs at once, not an idle cluster')
        print(f'  at most {med([o["jobs_at_once"] for o in outs]):.0f} inference jobs ran at once'
              + (f' (the partition allows {slots})' if slots else ''))
        detailed = [j for j in jobs if 'launch' in j]
        if detailed:
            for label, chosen in (('all jobs', detailed),
                                  ('first wave (a free CPU at submission)', [j for j in detailed if j['first_wave']]),
                                  ('later waves', [j for j in detailed if not j['first_wave']])):
                if not chosen:
                    continue
                print(f'  {label} ({len(chosen)}): total {_ms([j["total"] for j in chosen])} = sbatch '
                      f'{_ms([j["sbatch"] for j in chosen])} + waiting for a CPU {_ms([j["waited"] for j in chosen])}'
                      f' + scheduler {_ms([j["scheduled"] for j in chosen])} + launch '
                      f'{_ms([j["launch"] for j in chosen])} + task start-up {_ms([j["startup"] for j in chosen])}'
                      f' (medians; start-up = {_ms([j["to_ready"] for j in chosen if "to_ready" in j])} to ready + '
                      f'{_ms([j["to_first"] for j in chosen if "to_first" in j])} to the first request)')
    if alls:
        chains = {p.problem_id: len(p.scored_steps) * args.delay for p in problems}
        issue_figures(alls, chains, os.cpu_count() or 1)
    return 0


def issue_figures(alls, chains, cpus):
    """Issue 38's figures of the whole runs: wall, bound, ratio, when each inference task started."""
    med = statistics.median
    print()
    print('issue 38, whole runs: wall against the run\'s own bound (max over problems of its answers + its longest '
          f'step; step time / {cpus} CPUs); inference tasks started (progress file written) after run.py started')
    for runner, outs in alls.items():
        ratios, spreads = [], []
        for k, out in enumerate(outs, 1):
            bound = issue_bound(out['passed']['steps'], chains, cpus)
            starts = out['task_starts']
            spread = max(starts.values()) - min(starts.values())
            ratios.append((out['wall'], bound, out['wall'] / bound))
            spreads.append(spread)
            print(f'  {runner} run {k}: wall {out["wall"]:.1f}s, bound {bound:.1f}s '
                  f'({out["passed"]["step_seconds"]:.1f}s of steps), {out["wall"] / bound:.2f}x; tasks started at '
                  + ' '.join(f'{abbr} +{t:.2f}s' for abbr, t in starts.items()) + f' (within {spread:.2f}s)')
        wall, bound, ratio = (med(r[i] for r in ratios) for i in range(3))
        print(f'  {runner}: median wall {wall:.1f}s, bound {bound:.1f}s, ratio {ratio:.2f}x (target <= 1.15x: '
              f'{"met" if ratio <= 1.15 else "missed"}); every task within {max(spreads):.2f}s of the first '
              f'(target <= 2 s: {"met" if max(spreads) <= 2 else "missed"})')


if __name__ == '__main__':
    sys.exit(main())
