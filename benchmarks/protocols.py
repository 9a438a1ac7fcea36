"""One run re-graded under every protocol, and what a second scoring environment costs.

    python benchmarks/protocols.py [--run RUN_DIR] [--problems 1,19,...] [--skip-environments]

Without --run, first runs the default job's reference model (the gold code, answered as a model's
response) on the validation split without background, into a temporary work dir. Then:
- `run.py regrade RUN --protocol P --scoring-only` for every protocol: its sub-step and main rates,
  and each step whose verdict differs from the run's own (official) one, with why (the status
  pair: a time-out, an environment whose verdict differs, the code that ran, another cause);
- `run.py regrade RUN --environments current` and `--environments 2024,current`, each timed as a
  whole process: the ratio of their wall times is what grading in a second environment costs.
Every re-grade runs its programs afresh (a re-grade has verdicts of its own). Wall times on
these shared machines vary by 20% or more from one run to the next.
"""
import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from opencompass_scicode.protocols import PROTOCOLS  # noqa: E402


def cli(*args):
    started = time.monotonic()
    proc = subprocess.run([sys.executable, str(ROOT / 'run.py'), *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True)
    if proc.returncode not in (0, 1):
        sys.exit(f'run.py {" ".join(map(str, args))} failed ({proc.returncode}):\n{proc.stderr[-3000:]}')
    return time.monotonic() - started


def steps_of(results_file):
    results = json.loads(Path(results_file).read_text())
    return results, {s['step_id']: s for p in results['problems'] for s in p['steps']}


def why(before, after):
    """Why a step's verdict changed between two results (the status pair and its cause)."""
    pair = f'{before["status"]} -> {after["status"]}'
    if 'timeout' in (before['status'], after['status']):
        return f'{pair}: time-out'
    verdicts = after.get('environment_verdicts') or {}
    if len({v['status'] for v in verdicts.values()}) > 1:
        each = ', '.join(f'{k} {v["status"]}' for k, v in verdicts.items())
        return f'{pair}: environment ({each})'
    if (before.get('answer') or {}).get('code') != (after.get('answer') or {}).get('code'):
        return f'{pair}: extraction (other code ran)'
    if after['status'] == 'skipped' or before['status'] == 'skipped' or after.get('category') == 'no_code':
        return f'{pair}: prefilled step counted differently'
    return f'{pair}: {(after.get("message") or before.get("message") or "")[:80]}'


def the_run(work, problems):
    config = Path(work) / 'cfg.py'
    ids = repr(problems) if problems else 'None'
    config.write_text(textwrap.dedent(f'''
        _base_ = [{str(ROOT / 'configs' / 'eval_scicode.py')!r}]
        datasets = [dict(_base_.datasets[0], path={str(ROOT / 'data' / 'scicode')!r}, sample_ids={ids})]
    '''))
    seconds = cli(config, '-w', Path(work) / 'w')
    (run,) = [p for p in (Path(work) / 'w').iterdir() if p.is_dir()]
    print(f'the run: {run} ({seconds:.0f} s)')
    return run


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--run', help='a finished run directory (default: a new reference-model run)')
    p.add_argument('--problems', help='validation problem ids, comma-separated (default: all 15)')
    p.add_argument('--skip-environments', action='store_true', help='leave out the two-environment timing')
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix='scicode-protocols-')
    run = Path(args.run) if args.run else the_run(work, args.problems.split(',') if args.problems else None)
    (results_file,) = run.glob('results/*/*.json')
    own, before = steps_of(results_file)
    print(f'\nthe run: {own["protocol"]["name"]}: main {own["main_problem_resolve_rate"]:.1f} '
          f'({own["main_problem_resolved"]}/{own["main_problem_total"]}), sub-steps {own["subproblem"]:.1f} '
          f'({own["subproblem_correct"]}/{own["subproblem_total"]})\n')
    print('| protocol | re-graded as | main | sub-steps | steps flipped vs the run (why) | wall |')
    print('|---|---|---|---|---|---|')
    for name in PROTOCOLS:
        seconds = cli('regrade', run, '--protocol', name, '--scoring-only')
        results, after = steps_of(run / 'regrades' / name / 'results' / results_file.parent.name /
                                  results_file.name)
        flips = [f'{sid} {why(before[sid], after[sid])}' for sid in after
                 if sid in before and before[sid]['status'] != after[sid]['status']]
        print(f'| {name} | {results["protocol"]["name"]} | {results["main_problem_resolve_rate"]:.1f} '
              f'({results["main_problem_resolved"]}/{results["main_problem_total"]}) | '
              f'{results["subproblem"]:.1f} ({results["subproblem_correct"]}/{results["subproblem_total"]}) | '
              f'{"; ".join(flips) or "none"} | {seconds:.0f} s |')
    if args.skip_environments:
        return
    one = cli('regrade', run, '--environments', 'current')
    two = cli('regrade', run, '--environments', '2024,current')
    print(f'\nre-grade wall time, environments current: {one:.1f} s; 2024,current: {two:.1f} s; '
          f'ratio {two / one:.2f}x')


if __name__ == '__main__':
    main()
