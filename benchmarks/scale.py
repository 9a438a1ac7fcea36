"""How the summary and the report scale to a large run, on synthetic results files.

    python benchmarks/scale.py [--models 10] [--samples 5] [--data data/scicode] [--keep DIR]
                               [--no-browser]

Writes a run directory as the pipeline does (results/<model>/<dataset>.json,
predictions/<model>/usage.json, status.json, configs/<ts>.py) for MODELS models x the
`all` split (80 problems, 338 scored steps) x without and with background x
infer_cfg n=SAMPLES, and measures what a user waits for:

- the summary: `run.py CONFIG -m viz -r TS` with `report=False` (tables, CSV/Markdown,
  plot), a process of its own: wall time and peak memory (its max RSS, as
  getrusage(RUSAGE_CHILDREN) gives it, read per child with os.wait4); target: under
  10 s and 1 GB;
- the same with the report (the default summarizer): wall time, peak memory, the HTML's
  size (target: under 50 MB) and the time until it is usable in headless Chromium (target:
  3 s): a fresh browser, driven over its DevTools pipe, opens the file; usable = the grid,
  the filters and the first step's detail are on the page (`data-ready="1"`, read from the
  page every 20 ms), timed from the browser's start; beside it, a blank page the same way.
  (Not `--dump-dom`: serializing tens of MB of embedded data takes longer than the page
  takes to get ready, and would be timed instead of it.)
- the size of the results files with their texts files (target: under 150 MB), and what a
  step record is made of;
- the summary with the report: target under 10 s.

The step records are shaped by the pipeline's own code: prompts built by the official
template from the real problem text and each sample's own earlier code
(prompts/builder.py, datasets/chain.py), code extracted from the response as inference
does, verdicts scored by evaluation/metrics.py's `score` and completed by
tasks/evaluate.py's `with_answers` (answer, tests, gold code). A response is a few
sentences and a fenced block of code: the gold code where the step has it (validation
problems), else another step's gold body under this step's header; each model and sample
renames a variable and adds comments of its own, so no two samples share their code
lines verbatim. The data files are fetched on first use, as the pipeline does.
"""
import argparse
import fcntl
import json
import os
import random
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'benchmarks'))

from opencompass_scicode.datasets import SciCodeDataset  # noqa: E402
from opencompass_scicode.datasets.chain import code_chain  # noqa: E402
from opencompass_scicode.evaluation.evaluator import SciCodeEvaluator  # noqa: E402
from opencompass_scicode.evaluation.metrics import score  # noqa: E402
from opencompass_scicode.inference.extract import extract_code  # noqa: E402
from opencompass_scicode.predictions import record_key  # noqa: E402
from opencompass_scicode.prompts.builder import build_prompt  # noqa: E402
from opencompass_scicode.results import StepRecord  # noqa: E402
from opencompass_scicode.results.schema import ResultsFile, write_results  # noqa: E402
from opencompass_scicode.results.texts import PACK_SUFFIX  # noqa: E402
from opencompass_scicode.tasks.evaluate import with_answers  # noqa: E402
from opencompass_scicode.utils.workdir import RunDir, write_json_atomic  # noqa: E402

TIMESTAMP = '20260101_000000'
TARGETS = {'summary_s': 10.0, 'summary_mb': 1024.0, 'report_mb': 50.0, 'usable_s': 3.0, 'results_mb': 150.0}
# (weight, category): roughly what models score on SciCode's steps
OUTCOMES = [(30, 'pass'), (28, 'wrong_value'), (12, 'exception'), (8, 'name_error'), (4, 'syntax_error'),
            (3, 'import_error'), (5, 'no_code'), (5, 'timeout'), (3, 'truncated'), (2, 'resource_limit')]
STATUS = {'pass': 'pass', 'no_code': 'parse_error', 'timeout': 'timeout'}
IDENT = re.compile(r'\b([a-z_][a-z0-9_]{2,})\s*=')


def _sentences(rng, words, n):
    return ' '.join(' '.join(rng.choice(words) for _ in range(rng.randint(8, 20))).capitalize() + '.'
                    for _ in range(n))


def _code(step, donors, rng, tag, words):
    """This model's and sample's code for `step`: the gold code, or a donor's body under the
    step's header; one variable renamed and comment lines of its own."""
    if step.ground_truth_code:
        code = step.ground_truth_code
    else:
        donor = rng.choice(donors)
        body = donor.split('\n', donor.count('\n') and 1)[-1]
        code = step.function_header.rstrip() + '\n' + body
    names = sorted(set(IDENT.findall(code)))
    if names:
        name = rng.choice(names)
        code = re.sub(rf'\b{name}\b', f'{name}_{tag}', code)
    out = []
    for line in code.split('\n'):
        out.append(line)
        if line.strip() and rng.random() < 0.15:
            indent = line[:len(line) - len(line.lstrip())]
            out.append(f'{indent}# {" ".join(rng.choice(words) for _ in range(rng.randint(3, 9)))}')
    return '\n'.join(out)


def _response(problem, code, rng, words, category):
    prose = _sentences(rng, words, rng.randint(1, 4))
    if category == 'no_code':
        return prose + '\n\n' + _sentences(rng, words, rng.randint(2, 6))
    fence = f'```python\n{problem.dependencies}\n\n{code}\n```'
    if category == 'truncated':
        return prose + '\n\n' + fence[:len(fence) // 2]
    return prose + '\n\n' + fence + '\n\n' + _sentences(rng, words, rng.randint(0, 2))


def _traceback(rng, step, error):
    frames = ''.join(f'  File "program.py", line {rng.randint(5, 200)}, in {step.step_id.replace(".", "_")}_{i}\n'
                     f'    value = compute(x[{i}], y)\n' for i in range(rng.randint(1, 4)))
    return f'Traceback (most recent call last):\n{frames}{error}\n'


def _record(step, category, sample, rng):
    """A verdict as evaluation writes it, with what forensics adds for a failed test."""
    n_tests = max(1, len(step.test_cases))
    status = STATUS.get(category, 'fail')
    kwargs = dict(returncode=0, duration_s=round(rng.uniform(0.05, 6.0), 3), category=category, sample=sample,
                  tests_total=n_tests)
    if category == 'pass':
        return StepRecord(step.step_id, status, message=f'all {n_tests} test cases ran to the end',
                          tests_passed=n_tests, **kwargs)
    if category == 'no_code':
        return StepRecord(step.step_id, status, message='no code could be extracted from the response',
                          category=category, sample=sample)
    if category == 'truncated':
        return StepRecord(step.step_id, status, message='the response was cut off by the token limit '
                                                         '(finish_reason=length)', category=category, sample=sample)
    if category == 'timeout':
        return StepRecord(step.step_id, status, message='timed out after 1800 s', returncode=-9,
                          duration_s=1800.0, category=category, sample=sample, tests_total=n_tests)
    failed = rng.randint(1, n_tests)
    kwargs.update(returncode=1, failed_test=failed, tests_passed=failed - 1, tests_not_run=n_tests - failed,
                  assertion=f'test_case_{failed}, line 3: assert np.allclose(f(*args), target)')
    if category == 'wrong_value':
        value, target = rng.uniform(-10, 10), rng.uniform(-10, 10)
        comparison = {
            'form': 'allclose', 'expr': 'np.allclose(f(*args), target)', 'tolerance': {'rtol': 1e-05, 'atol': 1e-08},
            'near_miss': abs(value - target) < 1e-3,
            'sides': [{'role': 'value', 'expr': 'f(*args)', 'type': 'ndarray', 'shape': [3], 'dtype': 'float64',
                       'repr': f'array([{value:.6f}, {value / 2:.6f}, {value / 3:.6f}])'},
                      {'role': 'target', 'expr': 'target', 'type': 'ndarray', 'shape': [3], 'dtype': 'float64',
                       'repr': f'array([{target:.6f}, {target / 2:.6f}, {target / 3:.6f}])'}],
            'difference': {'elements': 3, 'outside_tolerance': 3, 'max_abs_diff': abs(value - target),
                           'max_rel_diff': abs(value - target) / max(abs(target), 1e-9), 'where': [0],
                           'values_at': [value, target]}}
        return StepRecord(step.step_id, status, message=f'test case {failed} of {n_tests} failed: AssertionError',
                          stderr=_traceback(rng, step, 'AssertionError'), error_type='AssertionError',
                          comparison=comparison, **kwargs)
    error = {'exception': 'ValueError: operands could not be broadcast together with shapes (3,) (4,)',
             'name_error': "NameError: name 'scipy_special' is not defined",
             'syntax_error': 'SyntaxError: invalid syntax', 'import_error': "ModuleNotFoundError: No module named 'qutip'",
             'resource_limit': 'MemoryError'}[category]
    return StepRecord(step.step_id, status, message=f'test case {failed} of {n_tests} failed: {error}',
                      stdout='iteration 1\n' * rng.randint(0, 5), stderr=_traceback(rng, step, error),
                      error_type=error.split(':')[0], raised_at='program.py, line 42, in f: value = compute(x, y)',
                      **kwargs)


def synthetic_run(work_dir, n_models, samples, data, sample_ids=None):
    """Write the run; return (config file, RunDir, config dict). `sample_ids`: only these problems
    (a quick run for tests)."""
    run_dir = RunDir(work_dir, TIMESTAMP).create()
    datasets = [dict(abbr=f'scicode_all{sfx}', split='all', with_bg=bg, path=str(data),
                     infer_cfg=dict(n=samples), **({'sample_ids': list(sample_ids)} if sample_ids else {}))
                for bg, sfx in ((False, ''), (True, '_with_background'))]
    models = [dict(abbr=f'model-{i:02d}') for i in range(n_models)]
    settings = SciCodeEvaluator().settings()
    weights, categories = zip(*((w, c) for w, c in OUTCOMES))
    status = {}
    for ds_cfg in datasets:
        dataset = SciCodeDataset(path=str(data), split='all', with_bg=ds_cfg['with_bg'], sample_ids=sample_ids)
        steps = [s for p in dataset.problems for s in p.steps]
        donors = [s.ground_truth_code for p in SciCodeDataset(path=str(data), split='validation').problems
                  for s in p.steps if s.ground_truth_code and '\n' in s.ground_truth_code]
        words = ' '.join(s.description for s in steps).split()
        for m, model in enumerate(models):
            rng = random.Random(f'{m}/{ds_cfg["abbr"]}')
            records, predictions = {}, {}
            for problem in dataset.problems:
                for sample in range(samples):
                    codes = {}
                    for step in problem.scored_steps:
                        category = rng.choices(categories, weights)[0]
                        code = _code(step, donors, rng, f'm{m}s{sample}', words)
                        prior = code_chain(problem, step.index, codes, dataset.prefilled_file, 'official')
                        prompt = build_prompt(dataset.template, problem, step.index, [c or '' for c in prior],
                                              dataset.with_bg)
                        response = _response(problem, code, rng, words, category)
                        codes[step.step_id] = extract_code(response)
                        predictions[record_key(step.step_id, sample)] = {
                            'step_id': step.step_id, 'sample': sample, 'prompt': prompt, 'response': response, 'code': codes[step.step_id],
                            'finish_reason': 'length' if category == 'truncated' else 'stop',
                            'usage': {'prompt_tokens': len(prompt) // 4, 'completion_tokens': len(response) // 4}}
                        records[step.step_id, sample] = _record(step, category, sample if samples > 1 else None,
                                                                rng)
            scores = score(dataset.problems, records, n=samples)
            results = ResultsFile.model_validate({
                'model': model['abbr'], 'dataset': ds_cfg['abbr'], 'split': 'all', 'with_bg': ds_cfg['with_bg'],
                'targets': 'official', **{k: v for k, v in scores.items() if k != 'problems'},
                'targets_file': str(Path(data) / 'test_data.h5'), 'evaluator': settings,
                'protections': {'own_process': True, 'network': 'isolated'},
                'predictions_digest': f'{rng.getrandbits(64):016x}', 'duration_s': 600.0,
                'created_at': '2026-01-01T00:00:00+00:00',
                'problems': with_answers(scores['problems'], dataset, predictions)})
            write_results(run_dir.results_path(model['abbr'], ds_cfg['abbr']), results)
            usage_path = run_dir.usage_path(model['abbr'])
            usage = json.loads(usage_path.read_text()) if usage_path.is_file() else {}
            usage[ds_cfg['abbr']] = {
                'steps answered': len(predictions), 'requests': len(predictions),
                'prompt tokens': sum(p['usage']['prompt_tokens'] for p in predictions.values()),
                'completion tokens': sum(p['usage']['completion_tokens'] for p in predictions.values()),
                'errors': 0, 'model time (s)': round(3.0 * len(predictions), 3)}
            write_json_atomic(usage_path, usage)
            name = f'eval/{model["abbr"]}/{ds_cfg["abbr"]}'
            status[name] = {'state': 'done', 'duration_s': 600.0, 'log': str(run_dir.log_path(name)), 'note': '',
                            'model': model['abbr'], 'dataset': ds_cfg['abbr'], 'stage': 'eval'}
    for model in models:
        name = f'infer/{model["abbr"]}'
        status[name] = {'state': 'done', 'duration_s': 3600.0, 'log': str(run_dir.log_path(name)), 'note': '',
                        'model': model['abbr'], 'datasets': [d['abbr'] for d in datasets], 'stage': 'infer'}
    run_dir.save_status(status)
    config = Path(work_dir) / 'scale_config.py'
    config.write_text(
        'from opencompass_scicode.datasets import SciCodeDataset\n'
        'from opencompass_scicode.models import DummyModel\n'
        'from opencompass_scicode.summarizers import SciCodeSummarizer\n\n'
        f'datasets = [dict(type=SciCodeDataset, **d) for d in {datasets!r}]\n'
        f'models = [dict(type=DummyModel, **m) for m in {models!r}]\n'
        'summarizer = dict(type=SciCodeSummarizer)\n')
    shutil.copy(config, run_dir.config_path)
    return config, run_dir, {'models': models, 'datasets': datasets}


def measured(cmd, env=None):
    """Run `cmd`; (wall seconds, CPU seconds, its peak RSS in MB, return code, output). The peak
    is the child's own ru_maxrss (what getrusage(RUSAGE_CHILDREN) reports once that child is
    waited for); the CPU time (user + system) does not grow when others load the machine."""
    with tempfile.TemporaryFile() as out:
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        return (seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode,
                out.read().decode('utf-8', 'replace'))


class DevTools:
    """A headless Chromium driven over its DevTools pipe (fds 3 and 4, messages ending in NUL),
    so that a page's readiness is read from the page itself, with no DOM dump to wait for."""

    def __init__(self, chromium, profile):
        to_chromium, self._to = _high(os.pipe())
        self._from, from_chromium = _high(os.pipe())

        def as_3_and_4():
            os.dup2(to_chromium, 3)
            os.dup2(from_chromium, 4)

        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [chromium, '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
             '--disable-background-networking', '--disable-component-update', '--remote-debugging-pipe',
             f'--user-data-dir={profile}', 'about:blank'],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=False, preexec_fn=as_3_and_4)
        os.close(to_chromium)
        os.close(from_chromium)
        self._buffer, self._id = b'', 0
        page = next(t for t in self.call('Target.getTargets')['targetInfos'] if t['type'] == 'page')
        self.session = self.call('Target.attachToTarget', targetId=page['targetId'], flatten=True)['sessionId']

    def call(self, method, session=None, timeout=120, **params):
        self._id += 1
        message = {'id': self._id, 'method': method, 'params': params, **({'sessionId': session} if session else {})}
        os.write(self._to, json.dumps(message).encode() + b'\0')
        deadline = time.monotonic() + timeout
        while True:
            while b'\0' in self._buffer:
                raw, self._buffer = self._buffer.split(b'\0', 1)
                reply = json.loads(raw)
                if reply.get('id') == self._id:
                    if 'error' in reply:
                        raise RuntimeError(f'{method}: {reply["error"]}')
                    return reply['result']
            if not select.select([self._from], [], [], max(0.0, deadline - time.monotonic()))[0]:
                raise TimeoutError(method)
            data = os.read(self._from, 1 << 20)
            if not data:
                raise RuntimeError('chromium closed its DevTools pipe')
            self._buffer += data

    def value(self, expression):
        return self.call('Runtime.evaluate', session=self.session, expression=expression,
                         returnByValue=True)['result'].get('value')

    def open(self, url, ready, timeout=120):
        """Navigate to `url`; seconds from navigation and from the browser's start until the
        expression `ready` is true (polled every 20 ms)."""
        navigated = time.monotonic()
        self.call('Page.navigate', session=self.session, url=url)
        while not self.value(ready):
            if time.monotonic() - navigated > timeout:
                raise TimeoutError(f'{url}: not ready after {timeout} s')
            time.sleep(0.02)
        now = time.monotonic()
        return now - navigated, now - self.started

    def close(self):
        try:
            self.call('Browser.close', timeout=10)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to)
        os.close(self._from)


def _high(fds):
    """The pipe's ends moved above 4, so that making them the child's 3 and 4 overwrites neither."""
    moved = tuple(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds)
    for fd in fds:
        os.close(fd)
    return moved


READY = "document.body && ['1', 'error'].includes(document.body.dataset.ready)"


def usable(page, chromium):
    """(seconds from the browser's start until the report is usable, from its navigation, what the
    page shows then): a fresh headless Chromium opens the file; usable = the grid, the filters
    and the first step's detail are on the page (`data-ready="1"`)."""
    with tempfile.TemporaryDirectory() as profile:
        browser = DevTools(chromium, profile)
        try:
            from_navigation, from_start = browser.open(f'file://{page}', READY)
            shown = browser.value("JSON.stringify({ready: document.body.dataset.ready, "
                                  "cells: document.querySelectorAll('.cell').length, "
                                  "detail: document.getElementById('detail').textContent.length, "
                                  "overview: Number(document.body.dataset.tOverview)})")
            return from_start, from_navigation, json.loads(shown)
        finally:
            browser.close()


def blank_page(chromium, work):
    """Seconds from a fresh browser's start until a blank page has loaded: the browser's own part."""
    blank = Path(work) / 'blank.html'
    blank.write_text('<!doctype html><title>blank</title><body data-ready="1">blank</body>')
    with tempfile.TemporaryDirectory() as profile:
        browser = DevTools(chromium, profile)
        try:
            return browser.open(f'file://{blank}', READY)[1]
        finally:
            browser.close()


def record_parts(path):
    """{part of a step record: bytes} over one results file as written (JSON text, without
    indentation; the texts it names by hash are in its texts file)."""
    parts = {}
    results = json.loads(Path(path).read_text())
    for problem in results['problems']:
        for step in problem['steps']:
            for key, value in step.items():
                items = value.items() if key == 'answer' else [(key, value)]
                for name, v in items:
                    name = f'answer.{name}' if key == 'answer' else name
                    parts[name] = parts.get(name, 0) + len(json.dumps(v, ensure_ascii=False).encode('utf-8'))
    return parts


def _verdict(value, target, unit):
    return f'{value:.2f} {unit} (target < {target:g} {unit}: {"met" if value < target else "MISSED"})'


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--models', type=int, default=10)
    parser.add_argument('--samples', type=int, default=5)
    parser.add_argument('--data', default=str(ROOT / 'data' / 'scicode'))
    parser.add_argument('--keep', metavar='DIR', help='write the run under DIR and keep it; a run that DIR '
                                                      'already holds is measured again, not written again')
    parser.add_argument('--no-browser', action='store_true', help='leave out the Chromium measurements')
    args = parser.parse_args(argv)
    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix='scicode-scale-')
    work = Path(args.keep or tmp.name) / 'work'
    try:
        start = time.monotonic()
        config = work / 'scale_config.py'
        if config.is_file():
            run_dir = RunDir(work, TIMESTAMP)
        else:
            config, run_dir, _ = synthetic_run(work, args.models, args.samples, args.data)
        files = sorted((run_dir.root / 'results').glob('*/*.json'))
        packs = sorted((run_dir.root / 'results').glob(f'*/*{PACK_SUFFIX}'))
        in_files = sum(f.stat().st_size for f in files)
        in_packs = sum(f.stat().st_size for f in packs)
        total = in_files + in_packs
        first = json.loads(files[0].read_text())
        steps, samples = first['subproblem_total'] * len(files), first.get('samples', 1)
        del first
        models = len({f.parent.name for f in files})
        print(f'{models} models x 2 settings x {samples} samples: {steps} scored step records '
              f'(written in {time.monotonic() - start:.0f} s under {run_dir.root})')
        print(f'results files: {len(files)} and {len(packs)} texts files, '
              f'{_verdict(total / 1e6, TARGETS["results_mb"], "MB")} in all ({in_files / 1e6:.0f} MB results '
              f'files, {in_packs / 1e6:.0f} MB texts files), {total / len(files) / 1e6:.1f} MB per model and '
              f'dataset, {total / steps / 1e3:.1f} kB per step record')
        parts = record_parts(files[0])
        whole = sum(parts.values())
        print('  a step record is: ' + ', '.join(f'{k} {100 * v / whole:.0f}%' for k, v in
                                                sorted(parts.items(), key=lambda kv: -kv[1])[:8]))
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get('PYTHONPATH', ''))
        base = [sys.executable, str(ROOT / 'run.py'), str(config), '-w', str(work), '-m', 'viz', '-r', TIMESTAMP]
        no_report = config.with_name('scale_config_no_report.py')
        no_report.write_text(config.read_text().replace('dict(type=SciCodeSummarizer)',
                                                        'dict(type=SciCodeSummarizer, report=False)'))
        print(f'load average before measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs')
        seconds, cpu, peak, rc, out = measured([*base[:2], str(no_report), *base[3:]], env)
        assert rc == 0, out[-3000:]
        print(f'summary (run.py -m viz, report=False: tables, CSV/Markdown, plot): '
              f'{_verdict(seconds, TARGETS["summary_s"], "s")} wall, {cpu:.2f} s CPU; '
              f'peak memory {_verdict(peak, TARGETS["summary_mb"], "MB")}')
        seconds, cpu, peak, rc, out = measured(base, env)
        assert rc == 0, out[-3000:]
        report = next((run_dir.root / 'summary').glob('report_*.html'))
        size = report.stat().st_size / 1e6
        print(f'summary with the report (run.py -m viz): {_verdict(seconds, TARGETS["summary_s"], "s")} wall, '
              f'{cpu:.2f} s CPU; peak memory {peak:.0f} MB')
        print(f'report: {_verdict(size, TARGETS["report_mb"], "MB")}')
        chromium = shutil.which('chromium') or shutil.which('chromium-browser')
        if args.no_browser or chromium is None:
            print('load times not measured' + ('' if args.no_browser else ': no chromium here'))
            return 0
        baseline = min(blank_page(chromium, work) for _ in range(3))
        runs = [usable(report, chromium) for _ in range(3)]
        from_start, from_navigation, shown = min(runs, key=lambda r: r[0])
        if shown['ready'] != '1':
            print(f'the report did not get ready: {shown}')
            return 1
        print(f'report usable in headless Chromium (a fresh browser opens the file; usable = the grid of '
              f'{shown["cells"]} steps, the filters and the first step\'s detail on the page; best of 3): '
              f'{_verdict(from_start, TARGETS["usable_s"], "s")} from the browser\'s start, '
              f'{from_navigation:.2f} s from the navigation (overview parsed at {shown["overview"] / 1000:.2f} s); '
              f'a blank page the same way {baseline:.2f} s')
        return 0
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == '__main__':
    sys.exit(main())
