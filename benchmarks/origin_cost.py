"""What telling inherited failures from own bugs costs: the evaluation with `inherited_check` on
(the default on the validation split) against off, on the project's step sets.

    python benchmarks/origin_cost.py [--sets real,stub] [--repeat 3] [--workers 2]

For each step set of benchmarks/stepsets.py on the validation split (`real`: some steps right,
many failing fast, two long correct ones; `stub`: every function returns 0, so every step fails
fast and nearly every later step has a wrong earlier one), the evaluator scores the set's
answers in this process, with the check off and on, taking turns (on first in odd turns), and
prints per set: the failed steps, how many of them needed a rerun (one extra step run each; a
failed step whose earlier code is the gold code already needs none), what the reruns found
(inherited, own), the reruns' own step seconds, and the wall time off and on with their ratio
(median and range over the turns). The verdicts must be the same either way (exit status 1
otherwise). These machines are shared: say so beside the figures.
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.stepsets import add_arguments, predictions, validation  # noqa: E402
from opencompass_scicode.evaluation import SciCodeEvaluator  # noqa: E402
from tabulate import tabulate  # noqa: E402


def _scored(dataset, preds, targets, workers, timeout, check):
    start = time.monotonic()
    result = SciCodeEvaluator(timeout=timeout, max_workers=workers, inherited_check=check).evaluate(
        dataset, preds, targets)
    elapsed = time.monotonic() - start
    verdicts = {s['step_id']: s['status'] for p in result['problems'] for s in p['steps']}
    return elapsed, verdicts, result.get('origins')


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser, 'real,stub')
    parser.add_argument('--repeat', type=int, default=3)
    args = parser.parse_args(argv)
    dataset, targets = validation(args)
    rows, same = [], True
    for kind in args.sets.split(','):
        preds = predictions(dataset, kind)
        times = {False: [], True: []}
        found = None
        for turn in range(args.repeat):
            verdicts = {}
            for check in ((True, False) if turn % 2 == 0 else (False, True)):
                elapsed, verdicts[check], origins = _scored(dataset, preds, targets, args.workers, args.timeout,
                                                            None if check else False)
                times[check].append(elapsed)
                found = origins if check else found
            differ = sorted(s for s in verdicts[False] if verdicts[False][s] != verdicts[True][s])
            same &= not differ
            print(f'{kind} turn {turn + 1}: off {times[False][-1]:.1f}s, on {times[True][-1]:.1f}s'
                  + (f' DIFFER: {", ".join(differ)}' if differ else ''), flush=True)
        failed = sum(v != 'pass' for v in verdicts[False].values())
        ratios = [on / off for on, off in zip(times[True], times[False])]
        rows.append([kind, len(verdicts[False]), failed, found['reruns'], found['inherited'], found['own'],
                     f'{found["rerun_s"]:.1f}', f'{statistics.median(times[False]):.1f}',
                     f'{statistics.median(times[True]):.1f}',
                     f'{statistics.median(ratios):.2f}x [{min(ratios):.2f}-{max(ratios):.2f}]'])
    print()
    print(tabulate(rows, headers=['set', 'steps', 'failed', 'reruns', 'inherited', 'own', 'rerun step s',
                                  'wall off (s)', 'wall on (s)', 'on / off'], disable_numparse=True))
    print(f'\nworkers {args.workers}, {args.repeat} turns per set; verdicts the same either way: '
          f'{"yes" if same else "NO"}')
    return 0 if same else 1


if __name__ == '__main__':
    sys.exit(main())
