"""How big and how fast the HTML report is for a large sweep, on synthetic results.

    python benchmarks/report_scale.py [--models 10] [--samples 1]

Writes results files for MODELS models x the whole `all` split (80 problems, 338 scored
steps) x both background settings, as benchmarks/scale.py writes them (realistic prompts,
responses and code, shaped by the pipeline's own code), then builds the report in this
process and loads it in headless Chromium. Prints the file size (target: under 25 MB for 10
models) and the time until the overview is on screen and until every step is rendered
(target for the overview: 2 s). benchmarks/scale.py measures the whole summary as a user runs
it, with infer_cfg n=5 by default.
"""
import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'benchmarks'))

from opencompass_scicode.results.schema import load_results  # noqa: E402
from opencompass_scicode.summarizers.report import build_report  # noqa: E402
from scale import synthetic_run  # noqa: E402


def _browser_seconds(page, chromium, settle_ms=None):
    """Whole headless Chromium process: start, load `page`, then either take a screenshot (what
    is on screen once it has loaded) or, with `settle_ms`, run its scripts that long in virtual
    time and dump the DOM; exit. Returns (seconds, the DOM or '')."""
    with tempfile.TemporaryDirectory() as profile:
        action = ([f'--virtual-time-budget={settle_ms}', '--dump-dom'] if settle_ms
                  else [f'--screenshot={profile}/shot.png', '--window-size=1400,1000'])
        start = time.monotonic()
        out = subprocess.run([chromium, '--headless', '--no-sandbox', '--disable-gpu',
                              '--disable-background-networking', f'--user-data-dir={profile}', *action,
                              f'file://{page}'], capture_output=True, text=True, timeout=600)
        return time.monotonic() - start, out.stdout


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--models', type=int, default=10)
    parser.add_argument('--samples', type=int, default=1)
    parser.add_argument('--data', default=str(ROOT / 'data' / 'scicode'))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix='scicode-report-scale-') as tmp:
        _, run_dir, cfg = synthetic_run(Path(tmp), args.models, args.samples, args.data)
        collected = {(m['abbr'], d['abbr']): load_results(run_dir.results_path(m['abbr'], d['abbr']))
                     for m in cfg['models'] for d in cfg['datasets']}
        start = time.monotonic()
        report = build_report(cfg, run_dir, collected, [])
        built = time.monotonic() - start
        size_mb = report.stat().st_size / 1e6
        steps = sum(r.subproblem_total for r in collected.values())
        print(f'{args.models} models x 2 settings x 338 steps x {args.samples} samples = {steps} step records')
        print(f'report: {size_mb:.1f} MB (target < 25 MB), built in {built:.1f} s')
        chromium = shutil.which('chromium') or shutil.which('chromium-browser')
        if chromium is None:
            print('no chromium here: load times not measured')
            return 0
        blank = Path(tmp) / 'blank.html'
        blank.write_text('<!doctype html><title>blank</title><p>blank</p>')
        base = min(_browser_seconds(blank, chromium)[0] for _ in range(3))
        loaded = min(_browser_seconds(report, chromium)[0] for _ in range(3))
        rendered, dom = _browser_seconds(report, chromium, settle_ms=60000)
        assert 'data-ready="1"' in dom, 'the page did not finish rendering'
        print(f'headless Chromium, whole processes (best of 3): a blank page on screen {base:.2f} s, the '
              f'report\'s overview on screen {loaded:.2f} s, i.e. {loaded - base:.2f} s more (target 2 s); '
              f'every step rendered and the DOM dumped {rendered:.2f} s')
    return 0


if __name__ == '__main__':
    sys.exit(main())
