"""Evaluation speed: an official-style runner against ours, side by side, in one run.

    python benchmarks/eval_speed.py [--workers 2] [--sets gold,stub] [--both-settings] [--repeat N]

For each step set on the validation split (`gold`: the gold code; `stub`: the
gold code with every function body replaced by `return 0`, which fails fast):
- official-style: every step program as a file run by a new `python`, with the
  imports the official `scicode` modules make, pass = exit code 0, on a pool of
  `--workers` threads, in dataset order (as the official harness does);
- ours: SciCodeEvaluator with the default fork-server executor and sandbox,
  the same number of workers, worker start-up included in the time.
It checks that both give the same verdict for every step, prints the wall
times and their ratio, and exits non-zero if any verdict differs.
`--both-settings` scores the same answers twice (without and with background):
the official-style runner runs everything twice, ours runs each distinct
program once. `--repeat N` measures each set N times, the two runners taking
turns, and reports the median times, their ratio and the range of the
per-run ratios (these machines are shared: single runs vary by 20% or more).
"""
import statistics
import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.official_like import official_like_runner  # noqa: E402
from benchmarks.stepsets import predictions  # noqa: E402
from opencompass_scicode.datasets import SciCodeDataset  # noqa: E402
from opencompass_scicode.evaluation import SciCodeEvaluator  # noqa: E402
from opencompass_scicode.evaluation.evaluator import STEP_TIMEOUT_S  # noqa: E402
from opencompass_scicode.evaluation.program import step_program  # noqa: E402
from opencompass_scicode.evaluation.sharing import (LocalVerdicts, SharedVerdicts, StepDurations,  # noqa: E402
                                                    durations_path)
from opencompass_scicode.evaluation.regenerate import ensure_targets  # noqa: E402


def official_style(dataset, preds, targets, workers, timeout, copies):
    evaluator = SciCodeEvaluator(timeout=timeout)
    jobs, _ = evaluator.jobs(dataset, preds, targets)
    steps = {s.step_id: s for p in dataset.problems for s in p.steps}
    programs = [(sid, step_program(job.program, sid, steps[sid].test_cases))
                for _ in range(copies) for sid, job in jobs.items()]
    runner = official_like_runner(targets.path, timeout)
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(lambda item: (item[0], runner.run(item[1])), programs))
    elapsed = time.monotonic() - start
    verdicts = {}
    for sid, res in results:
        verdicts[sid] = 'timeout' if res.timed_out else ('pass' if res.returncode == 0 else 'fail')
    return elapsed, verdicts


def ours(dataset, preds, targets, workers, timeout, copies, use_durations):
    evaluator = SciCodeEvaluator(timeout=timeout, max_workers=workers)
    durations = StepDurations(durations_path(dataset.data_dir) if use_durations else None)
    with tempfile.TemporaryDirectory() as shared_dir:
        start = time.monotonic()
        for _ in range(copies):
            jobs, _ = evaluator.jobs(dataset, preds, targets)
            shared = SharedVerdicts(shared_dir) if copies > 1 else LocalVerdicts()
            records = evaluator.run_jobs(jobs, targets.path, shared=shared, durations=durations)
        elapsed = time.monotonic() - start
    verdicts = {sid: ('pass' if r.status == 'pass' else 'timeout' if r.status == 'timeout'
                      else 'fail') for sid, r in records.items()}
    return elapsed, verdicts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--workers', type=int, default=os.cpu_count() or 2)
    parser.add_argument('--sets', default='stub,gold')
    parser.add_argument('--both-settings', action='store_true')
    parser.add_argument('--repeat', type=int, default=1, help='measure each set this many times')
    parser.add_argument('--timeout', type=float, default=STEP_TIMEOUT_S)
    parser.add_argument('--no-duration-cache', action='store_true',
                        help='do not use step durations remembered from earlier runs')
    parser.add_argument('--data', default=str(ROOT / 'data' / 'scicode'))
    args = parser.parse_args(argv)

    dataset = SciCodeDataset(path=args.data, split='validation')
    targets = ensure_targets(dataset)
    copies = 2 if args.both_settings else 1
    rows, same_everywhere = [], True
    for kind in args.sets.split(','):
        preds = predictions(dataset, kind)
        times_official, times_ours, differ = [], [], set()
        for run in range(args.repeat):
            t_official, v_official = official_style(dataset, preds, targets, args.workers, args.timeout, copies)
            t_ours, v_ours = ours(dataset, preds, targets, args.workers, args.timeout, copies,
                                  not args.no_duration_cache)
            wrong = sorted(s for s in v_official if v_official[s] != v_ours.get(s))
            differ.update(wrong)
            times_official.append(t_official)
            times_ours.append(t_ours)
            print(f'{kind}: official-style {t_official:.2f}s, ours {t_ours:.2f}s, '
                  f'ratio {t_official / t_ours:.1f}x, verdicts {"identical" if not wrong else "DIFFER: " + ", ".join(wrong)}',
                  flush=True)
        same_everywhere &= not differ
        passes = sum(v == 'pass' for v in v_ours.values())
        ratios = [o / u for o, u in zip(times_official, times_ours)]
        rows.append((kind, len(v_ours) * copies, passes, statistics.median(times_official),
                     statistics.median(times_ours), min(ratios), max(ratios), sorted(differ)))
    print()
    print(f'validation split, {args.workers} workers, targets: {targets.kind}'
          + (', both background settings' if copies > 1 else '')
          + (f', median of {args.repeat} runs each' if args.repeat > 1 else ''))
    print(f'{"set":6} {"programs":>8} {"passed":>6} {"official-style":>15} {"ours":>8} {"ratio":>7}'
          + ('  per-run ratios' if args.repeat > 1 else '') + '  verdicts')
    for kind, n, passes, t_o, t_u, low, high, differ in rows:
        spread = f'  {low:5.1f}x-{high:.1f}x   ' if args.repeat > 1 else ''
        print(f'{kind:6} {n:>8} {passes:>6} {t_o:>14.2f}s {t_u:>7.2f}s {t_o / t_u:>6.1f}x{spread}  '
              f'{"identical" if not differ else "differ: " + ", ".join(differ)}')
    return 0 if same_everywhere else 1


if __name__ == '__main__':
    sys.exit(main())
