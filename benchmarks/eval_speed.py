"""Evaluation speed on the paths users run, against an official-style runner, side by side.

    python benchmarks/eval_speed.py [--sets stub,gold,real] [--paths default,eval]
                                    [--both-settings] [--repeat N] [--workers 2]

For each step set on the validation split (benchmarks/stepsets.py: `gold`, `stub` which
fails fast, `real` with two long CPU-bound steps among fast and failing ones):
- official-style: every step program as a file run by a new `python`, with the imports
  the official `scicode` modules make, pass = exit code 0, on a pool of `--workers`
  threads, in dataset order (as the official harness does);
- ours, whole processes, start-up included:
  - `default`: `python run.py CONFIG`, a GeneratedCodeModel answering with the set's
    programs: inference, early evaluation, evaluation tasks and the summary;
  - `eval`: `python run.py CONFIG -r -m eval` on those predictions (results cleared first);
  - `off`: the default path with the evaluator's forensics off (no capture of compared values,
    no later tests for information): the cost of forensics is the default path's time over
    this one's, both measured in this run, turn by turn.
Each of our figures is printed beside its bound, max(longest step, sum of step times /
workers), with the step times ours measured. Every verdict must equal the
official-style one (the exit status is 1 otherwise). `--both-settings` scores the
answers without and with background: the official-style runner runs everything twice,
ours each distinct program once. `--repeat N` takes turns N times and reports medians
and the range of the per-run ratios (these machines are shared: runs vary by 20%).
"""
import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.official_like import official_like_runner, step_program  # noqa: E402
from benchmarks.stepsets import add_arguments, predictions, validation  # noqa: E402
from opencompass_scicode.evaluation import SciCodeEvaluator  # noqa: E402
from opencompass_scicode.results.schema import load_results  # noqa: E402


def _verdict(status):
    return status if status in ('pass', 'timeout') else 'fail'


def official_style(dataset, preds, targets, workers, timeout, copies):
    jobs, _ = SciCodeEvaluator(timeout=timeout).jobs(dataset, preds, targets)
    steps = {s.step_id: s for p in dataset.problems for s in p.steps}
    programs = [(sid, step_program(job.program, sid, steps[sid].test_cases))
                for _ in range(copies) for (sid, _), job in jobs.items()]
    runner = official_like_runner(targets.path, timeout)
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(lambda item: (item[0], runner.run(item[1])), programs))
    elapsed = time.monotonic() - start
    verdicts = {sid: 'timeout' if res.timed_out else ('pass' if res.returncode == 0 else 'fail')
                for sid, res in results}
    return elapsed, verdicts


def write_job(root, dataset, preds, targets, copies, timeout, workers, forensics=True):
    """A GeneratedCodeModel directory holding the set's step programs (written once), and a
    config scoring it (with the evaluator's forensics on or off)."""
    gen = root / 'generated'
    if not gen.exists():
        gen.mkdir()
        jobs, _ = SciCodeEvaluator(timeout=timeout).jobs(dataset, preds, targets)
        for problem in dataset.problems:
            for step in problem.scored_steps:
                (gen / f'{problem.problem_id}.{step.index}.py').write_text(jobs[step.step_id, 0].program)
    sides = [(False, '')] + ([(True, '_with_background')] if copies > 1 else [])
    config = root / ('cfg.py' if forensics else 'cfg_forensics_off.py')
    config.write_text(textwrap.dedent(f'''
        models = [dict(type='GeneratedCodeModel', path={str(gen)!r}, abbr='bench')]
        datasets = [dict(abbr='val' + suffix, type='SciCodeDataset', path={str(dataset.data_dir)!r},
                         split='validation', with_bg=bg,
                         eval_cfg=dict(evaluator=dict(type='SciCodeEvaluator', timeout={timeout},
                                                      forensics={forensics!r})))
                    for bg, suffix in {sides!r}]
        runner = dict(type='LocalRunner', max_num_workers={workers})
    '''))
    return config


def _run_py(*args):
    start = time.monotonic()
    proc = subprocess.run([sys.executable, str(ROOT / 'run.py'), *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True)
    elapsed = time.monotonic() - start
    if proc.returncode not in (0, 1):       # 1: some steps failed, which the sets intend
        raise SystemExit(f'run.py {" ".join(map(str, args))} failed:\n{proc.stderr[-3000:]}')
    return elapsed


def _read_results(run_dir, workers):
    """(verdicts of the first dataset, bound from the step times ours measured)."""
    verdicts, seconds = {}, {}
    for path in sorted((run_dir / 'results' / 'bench').glob('*.json')):
        for step in load_results(path, texts=False).steps():
            verdicts.setdefault(step.step_id, _verdict(step.status))
            seconds.setdefault(step.step_id, step.duration_s or 0.0)
    times = list(seconds.values())
    return verdicts, max(max(times), sum(times) / workers)


def ours_default(config, work, workers):
    elapsed = _run_py(config, '-w', work)
    (run_dir,) = [p for p in work.iterdir() if p.is_dir()]
    verdicts, bound = _read_results(run_dir, workers)
    shutil.rmtree(work)
    return elapsed, verdicts, bound


def ours_eval(config, work, workers):
    """Inference once (not timed), then a timed `-r -m eval` on cleared results."""
    if not work.exists():
        _run_py(config, '-w', work, '-m', 'infer')
    (run_dir,) = [p for p in work.iterdir() if p.is_dir()]
    for stale in (run_dir / 'results', run_dir / 'cache'):
        shutil.rmtree(stale, ignore_errors=True)
    elapsed = _run_py(config, '-w', work, '-r', '-m', 'eval')
    verdicts, bound = _read_results(run_dir, workers)
    return elapsed, verdicts, bound


PATHS = {'default': ours_default, 'eval': ours_eval, 'off': ours_default}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser, 'stub,gold,real')
    parser.add_argument('--paths', default='default,eval,off',
                        help="'off': the default path with forensics off, for their cost")
    parser.add_argument('--both-settings', action='store_true')
    parser.add_argument('--repeat', type=int, default=1, help='measure each set this many times')
    args = parser.parse_args(argv)

    dataset, targets = validation(args)
    copies = 2 if args.both_settings else 1
    paths = args.paths.split(',')
    rows, same_everywhere, forensics_costs = [], True, []
    for kind in args.sets.split(','):
        preds = predictions(dataset, kind)
        official, ours, bounds, differ = [], {p: [] for p in paths}, {p: [] for p in paths}, set()
        with tempfile.TemporaryDirectory(prefix='scicode-bench-') as tmp:
            root = Path(tmp)
            configs = {path: write_job(root, dataset, preds, targets, copies, args.timeout, args.workers,
                                       forensics=path != 'off') for path in paths}
            for run in range(args.repeat):
                t_official, v_official = official_style(dataset, preds, targets, args.workers,
                                                        args.timeout, copies)
                official.append(t_official)
                line = f'{kind} run {run + 1}: official-style {t_official:.2f}s'
                for path in paths:
                    t_ours, v_ours, bound = PATHS[path](configs[path], root / f'work-{path}', args.workers)
                    wrong = sorted(s for s in v_official if v_official[s] != v_ours.get(s))
                    differ.update(wrong)
                    ours[path].append(t_ours)
                    bounds[path].append(bound)
                    line += (f', {path} {t_ours:.2f}s ({t_official / t_ours:.1f}x, bound {bound:.2f}s)'
                             + (f' DIFFER: {", ".join(wrong)}' if wrong else ''))
                print(line, flush=True)
        same_everywhere &= not differ
        passes = sum(v == 'pass' for v in v_official.values())
        if 'default' in paths and 'off' in paths:
            costs = [on / off for on, off in zip(ours['default'], ours['off'])]
            # Each run over its own bound (from the verdicts' durations, which leave out the later
            # tests): what other work on the machine does to the longest step cancels out.
            relative = [(on / b_on) / (off / b_off) for on, b_on, off, b_off
                        in zip(ours['default'], bounds['default'], ours['off'], bounds['off'])]
            forensics_costs.append((kind, statistics.median(costs), min(costs), max(costs),
                                    statistics.median(relative)))
        for path in paths:
            ratios = [o / u for o, u in zip(official, ours[path])]
            rows.append((kind, path, len(v_official) * copies, passes * copies,
                         statistics.median(official), statistics.median(ours[path]),
                         statistics.median(bounds[path]), min(ratios), max(ratios), sorted(differ)))
    print()
    print(f'validation split, {args.workers} workers'
          + (', both background settings' if copies > 1 else '')
          + (f', median of {args.repeat} runs each' if args.repeat > 1 else '')
          + '; ours = whole run.py processes')
    print(f'{"set":5} {"path":8} {"programs":>8} {"passed":>6} {"official-style":>15} {"ours":>8} '
          f'{"ratio":>6} {"bound":>8} {"ours/bound":>10}' + ('  per-run ratios' if args.repeat > 1 else '')
          + '  verdicts')
    for kind, path, n, passes, t_o, t_u, bound, low, high, differ in rows:
        spread = f'  {low:5.1f}x-{high:.1f}x    ' if args.repeat > 1 else ''
        print(f'{kind:5} {path:8} {n:>8} {passes:>6} {t_o:>14.2f}s {t_u:>7.2f}s {t_o / t_u:>5.1f}x '
              f'{bound:>7.2f}s {t_u / bound:>9.2f}x{spread}  '
              f'{"identical" if not differ else "differ: " + ", ".join(differ)}')
    if forensics_costs:
        print()
        print('cost of forensics, default path, forensics on / off in the same run, turn by turn'
              + (' (medians of the per-run ratios, their range)' if args.repeat > 1 else ''))
        print(f'{"set":5} {"wall":>8} {"range":>15} {"wall/bound":>11}')
        for kind, ratio, low, high, relative in forensics_costs:
            spread = f'{low:.3f}-{high:.3f}x' if args.repeat > 1 else ''
            print(f'{kind:5} {ratio:7.3f}x {spread:>15} {relative:10.3f}x  ({100 * (ratio - 1):+.1f}% wall time)')
    return 0 if same_everywhere else 1


if __name__ == '__main__':
    sys.exit(main())
