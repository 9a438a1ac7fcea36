"""How big and how fast the HTML report is for a large sweep, on synthetic results.

    python benchmarks/report_scale.py [--models 10] [--answer-kb 3]

Writes results files for MODELS models x the whole `all` split (80 problems, 338 scored
steps) x both background settings, every step with a prompt, a response and code of about
ANSWER-KB kB each built from the real problem text (so they compress as real ones do), then
builds the report and loads it in headless Chromium. Prints the file size (target: under
25 MB for 10 models) and the time until the overview is on screen and until every step is
rendered (target for the overview: 2 s).
"""
import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from opencompass_scicode.datasets import SciCodeDataset  # noqa: E402
from opencompass_scicode.evaluation.metrics import score  # noqa: E402
from opencompass_scicode.results import StepRecord  # noqa: E402
from opencompass_scicode.summarizers.report import build_report  # noqa: E402
from opencompass_scicode.utils.workdir import RunDir, write_json_atomic  # noqa: E402

OUTCOMES = [('pass', 'pass'), ('fail', 'wrong_value'), ('fail', 'name_error'), ('fail', 'exception'),
            ('parse_error', 'no_code'), ('timeout', 'timeout')]


def _text(rng, words, kb):
    out, size = [], 0
    while size < kb * 1024:
        word = rng.choice(words)
        out.append(word)
        size += len(word) + 1
    return ' '.join(out)


def synthetic_run(root, n_models, answer_kb, data):
    """Prompts share a step's text across models (the official template and problem) and differ
    in the earlier steps' code; responses are each model's own; code is part of its response."""
    rng = random.Random(0)
    run_dir = RunDir(root, '20260101_000000').create()
    datasets = [dict(abbr=f'scicode_all{sfx}', split='all', with_bg=bg, path=data)
                for bg, sfx in ((False, ''), (True, '_with_background'))]
    models = [dict(abbr=f'model-{i:02d}') for i in range(n_models)]
    dataset = SciCodeDataset(path=data, split='all')
    words = ' '.join(s.description + ' ' + (s.ground_truth_code or s.function_header)
                     for p in dataset.problems for s in p.steps).split()
    for model in models:
        for ds in datasets:
            records = {}
            for problem in dataset.problems:
                for step in problem.scored_steps:
                    status, category = rng.choice(OUTCOMES)
                    records[step.step_id, 0] = StepRecord(step.step_id, status, 1, rng.random() * 3,
                                                       _text(rng, words, 0.3), _text(rng, words, 0.5),
                                                       f'{category}: synthetic', category=category)
            results = dict(model=model['abbr'], dataset=ds['abbr'], split='all', with_bg=ds['with_bg'],
                           targets='official', **score(dataset.problems, records))
            for problem in results['problems']:
                for step in problem['steps']:
                    shared = _text(random.Random(step['step_id']), words, answer_kb * 2 / 3)
                    response = _text(rng, words, answer_kb)
                    step['answer'] = {'prompt': shared + _text(rng, words, answer_kb / 3),
                                      'response': response, 'code': response[:len(response) // 2]}
                    step['tests'] = ['assert np.allclose(f(x), target)'] * 3
            write_json_atomic(run_dir.results_path(model['abbr'], ds['abbr']), results, indent=None)
    return {'models': models, 'datasets': datasets}, run_dir


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
    parser.add_argument('--answer-kb', type=float, default=3.0)
    parser.add_argument('--data', default=str(ROOT / 'data' / 'scicode'))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix='scicode-report-scale-') as tmp:
        cfg, run_dir = synthetic_run(Path(tmp), args.models, args.answer_kb, args.data)
        collected = {(m['abbr'], d['abbr']): json.loads(
            run_dir.results_path(m['abbr'], d['abbr']).read_text())
            for m in cfg['models'] for d in cfg['datasets']}
        start = time.monotonic()
        report = build_report(cfg, run_dir, collected, [])
        built = time.monotonic() - start
        size_mb = report.stat().st_size / 1e6
        steps = sum(r['subproblem_total'] for r in collected.values())
        print(f'{args.models} models x 2 settings x 338 steps = {steps} step records, '
              f'about {args.answer_kb:.0f} kB per prompt and response')
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
