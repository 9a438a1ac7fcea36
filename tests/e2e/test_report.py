"""The HTML report, loaded from disk by a real headless Chromium with the network off."""
import json
import os
import shutil
import subprocess
import tempfile
from collections import Counter
from html.parser import HTMLParser

import pytest

from helpers import DATA, config_file, gold_predictions, only_run, run_cli

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which('chromium') or shutil.which('chromium-browser')
# The network off for real where we may make a namespace without one (root); the page's CSP
# forbids any load from elsewhere in any case.
OFFLINE = ['unshare', '--net'] if os.geteuid() == 0 and shutil.which('unshare') else []
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason='no chromium on this machine (.ci/run installs it)')

# A program that tries to get markup onto the page through every channel the report shows.
PAYLOAD = ('<script>document.body.setAttribute("data-pwned", "script")</script>'
           '<img src=x onerror="document.body.setAttribute(\'data-pwned\', \'img\')">')


class _Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.elements = []          # (tag, {attr: value})
        self.text = []

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def _dom(report, fragment=''):
    with tempfile.TemporaryDirectory() as profile:
        out = subprocess.run(
            [*OFFLINE, CHROMIUM, '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
             '--disable-background-networking', '--disable-component-update', '--disable-sync',
             f'--user-data-dir={profile}', '--virtual-time-budget=10000', '--dump-dom',
             f'file://{report}{fragment}'],
            capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    dom = _Dom()
    dom.feed(out.stdout)
    return dom


def _screenshot(report, path):
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([*OFFLINE, CHROMIUM, '--headless', '--no-sandbox', '--disable-gpu',
                        '--disable-background-networking',
                        f'--user-data-dir={profile}', '--virtual-time-budget=10000', '--window-size=1400,2000',
                        f'--screenshot={path}', f'file://{report}'], capture_output=True, timeout=120)
    return path


@pytest.fixture(scope='module')
def report_run(tmp_path_factory):
    """A run whose answers pass, fail in several ways, and carry the payload in code and output."""
    from opencompass_scicode.datasets import SciCodeDataset, gold_code
    from opencompass_scicode.evaluation.program import code_prefix
    tmp = tmp_path_factory.mktemp('report')
    ds = SciCodeDataset(path=str(DATA), split='validation', sample_ids=['1', '19', '29'])
    gen = tmp / 'generated'
    gen.mkdir()
    for problem in ds.problems:
        codes = []
        for step in problem.steps:
            code = gold_code(step)
            if step.step_id == '19.2':
                code = f'# {PAYLOAD}\nprint({PAYLOAD!r})\n' + step.function_header + '\n    return undefined_name\n'
            elif step.step_id == '29.2':
                code = step.function_header + '\n    return -1.0\n'
            elif step.step_id == '1.1':              # a value that is markup, in the values compared
                code = step.function_header + f'\n    return {PAYLOAD!r}\n'
            (gen / f'{problem.problem_id}.{step.index}.py').write_text(code_prefix(problem.dependencies, codes, code))
            codes.append(gold_code(step))
    cfg = config_file(tmp, f"[dict(type=GeneratedCodeModel, path={str(gen)!r}, abbr='gen'),"
                           f" dict(type=ReferenceModel, abbr='ref')]")
    work = tmp / 'w'
    proc = run_cli([cfg, '-w', work])
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    run_dir = only_run(work)
    (report,) = (run_dir / 'summary').glob('report_*.html')
    return run_dir, report


def _cells(dom):
    return [attrs for tag, attrs in dom.elements if 'cell' in attrs.get('class', '').split()]


@needs_chromium
def test_the_report_shows_what_the_results_files_hold(report_run, tmp_path):
    run_dir, report = report_run
    dom = _dom(report)
    body = next(attrs for tag, attrs in dom.elements if tag == 'body')
    assert body.get('data-ready') == '1'
    cells = _cells(dom)
    expected = Counter()
    for path in (run_dir / 'results').glob('*/*.json'):
        results = json.loads(path.read_text())
        for problem in results['problems']:
            for step in problem['steps']:
                expected[results['model'], results['dataset'], step['status'], step['category']] += 1
    shown = Counter((c['data-model'], c['data-dataset'], c['data-status'], c['data-category']) for c in cells)
    assert shown == expected and sum(expected.values()) == 2 * 2 * 6
    assert {c['data-category'] for c in cells} >= {'pass', 'name_error', 'wrong_value'}
    assert all({'data-step-id', 'data-sample'} <= set(c) for c in cells)
    # the step shown in detail first (gen's 1.1) shows its code, tests and prompt
    text = ''.join(dom.text)
    assert 'def cg(' in text and 'target' in text and 'NEXT STEP' in text
    # paired differences, as in the summary files: gen vs ref on each dataset, bg vs no bg
    assert 'Paired differences' in text and 'ref - gen' in text and 'gen: w/ bg - w/o bg' in text
    print('screenshot:', _screenshot(report, tmp_path / 'report.png'))
    assert (tmp_path / 'report.png').stat().st_size > 10000


@needs_chromium
def test_filters_change_what_is_shown(report_run):
    _, report = report_run
    dom = _dom(report, '#category=name_error')
    visible = [c for c in _cells(dom) if 'hidden' not in c]
    assert [(c['data-model'], c['data-step-id']) for c in visible] == [('gen', '19.2'), ('gen', '19.2')]
    shown = next(attrs for tag, attrs in dom.elements if attrs.get('id') == 'shown')
    assert shown['data-shown'] == '2'
    dom = _dom(report, '#model=ref&dataset=val_bg')
    assert {(c['data-model'], c['data-dataset']) for c in _cells(dom) if 'hidden' not in c} == {('ref', 'val_bg')}
    # a step's detail: the first one the filter leaves, with its stderr
    dom = _dom(report, '#q=19.2&dataset=val')
    text = ''.join(dom.text)
    assert "NameError: name 'undefined_name' is not defined" in text


@needs_chromium
def test_markup_from_programs_is_shown_as_text_and_never_runs(report_run):
    _, report = report_run
    dom = _dom(report, '#q=19.2&dataset=val')
    body = next(attrs for tag, attrs in dom.elements if tag == 'body')
    assert 'data-pwned' not in body
    images = [attrs for tag, attrs in dom.elements if tag == 'img']
    assert images and all(a.get('src', '').startswith('data:image/png;base64,') for a in images)
    assert not [attrs for tag, attrs in dom.elements if tag == 'script' and 'nonce' not in attrs
                and attrs.get('type') != 'application/octet-stream']
    assert PAYLOAD in ''.join(dom.text)          # there, as text: in the code and its output


@needs_chromium
def test_compare_shows_runs_side_by_side_and_marks_what_differs(report_run, tmp_path):
    run_dir, _ = report_run
    other = run_dir.parent / '20200101_000000'
    shutil.copytree(run_dir, other)
    path = other / 'results' / 'ref' / 'val.json'
    results = json.loads(path.read_text())
    step = results['problems'][0]['steps'][0]
    step.update(status='fail', category='wrong_value', targets_digest='0' * 16)   # other targets, same code
    path.write_text(json.dumps(results))
    cfg = next((run_dir.parent.parent).glob('cfg.py'))
    proc = run_cli([cfg, '-w', run_dir.parent, '-m', 'viz', '-r', run_dir.name, '--compare', other.name])
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = next((run_dir / 'summary').glob('report_*.html'))
    dom = _dom(report)
    cells = _cells(dom)
    assert {c['data-run'] for c in cells} == {run_dir.name, other.name}
    assert len(cells) == 2 * 2 * 2 * 6
    differs = {(c['data-run'], c['data-model'], c['data-dataset'], c['data-step-id'], c.get('data-reason'))
               for c in cells if c['data-differs'] == '1'}
    why = 'targets only (the targets digest differs)'
    assert differs == {(run_dir.name, 'ref', 'val', '1.1', why), (other.name, 'ref', 'val', '1.1', why)}
    views = {(a['data-a'], a['data-b'], a['data-dataset']): a for tag, a in dom.elements
             if 'comparison-view' in a.get('class', '').split()}
    fixed = views[f'run {other.name} · ref', f'run {run_dir.name} · ref', 'val']
    assert (fixed['data-fixed'], fixed['data-broken'], fixed['data-unchanged']) == ('1', '0', '5')
    shown = [c for c in _cells(_dom(report, '#differs=1')) if 'hidden' not in c]
    assert len(shown) == 2
    bad = run_cli([cfg, '-w', run_dir.parent, '-m', 'viz', '-r', run_dir.name, '--compare', 'no_such_run'])
    assert bad.returncode == 2 and 'holds no results' in bad.stderr
    # the command line pairs the two runs' ref explicitly, and says the same
    proc = run_cli(['compare', other.name, run_dir.name, '-w', run_dir.parent, '--model', 'ref', '--dataset', 'val'])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert '1 fixed, 0 broken, 0 changed, 5 unchanged (6 steps paired)' in proc.stdout and why in proc.stdout


@needs_chromium
def test_a_failed_steps_detail_shows_its_assertion_and_the_values_it_compared(report_run):
    run_dir, report = report_run
    results = json.loads((run_dir / 'results' / 'gen' / 'val.json').read_text())
    record = next(s for p in results['problems'] for s in p['steps'] if s['step_id'] == '29.2')
    assert record['failed_test'] == 1 and record['comparison']['sides'][0]['repr'] == '-1.0'
    dom = _dom(report, '#q=29.2&dataset=val&model=gen')
    text = ''.join(dom.text)
    why = next(attrs for tag, attrs in dom.elements if attrs.get('id') == 'why')
    assert why['data-failed-test'] == '1' and why['data-near-miss'] == '0'
    assert 'the failing line of the test' in text and 'assert np.allclose(inner_product(u,v), target)' in text
    assert "inner_product(u,v) (model's value)" in text
    heads = [attrs.get('data-role') for tag, attrs in dom.elements if tag == 'th' and attrs.get('data-role')]
    assert heads == ['value', 'target']
    assert '-1.0' in text and '24' in text and 'largest absolute difference' in text
    roles = {attrs.get('data-role') for tag, attrs in dom.elements if tag == 'td' and attrs.get('data-role')}
    assert roles == {'value', 'target'}
    # the difference is highlighted: the values there, side by side
    assert [attrs for tag, attrs in dom.elements if tag == 'td' and 'hl' in attrs.get('class', '').split()]


@needs_chromium
def test_a_value_holding_markup_shows_as_text(report_run):
    _, report = report_run
    dom = _dom(report, '#q=1.1&dataset=val&model=gen')
    body = next(attrs for tag, attrs in dom.elements if tag == 'body')
    assert 'data-pwned' not in body
    text = ''.join(dom.text)
    assert "the model's value" in text and "'<script>document.body.setAttribute(" in text
    assert not [attrs for tag, attrs in dom.elements if tag == 'script' and 'nonce' not in attrs
                and attrs.get('type') != 'application/octet-stream']


# ------------------------------------------------------------ the second pass of forensics, and comparisons
# Planted bugs in validation problems (as tests/unit/test_origin.py plants them), and a step that hangs in
# a named function. 10.11's gold code takes 10-20 s: both models answer it with a stub.
PLANTED = {'10.2': ('xyz @ latvec', '(xyz + 1) @ latvec'),
           '10.7': ('gweights = gweights_all[mask_weight]', 'gweights = gweights_all[mask_weight] * 1.01'),
           '70.6': ('2.0*cmath.sqrt(h2)', '2.01*cmath.sqrt(h2)')}
# The loop on one line: a loop over two lines stops on either of them when the stack is taken.
HANGS = 'def _settle(v):\n    while True: pass\n\ndef normalize(v):\n    return _settle(v)\n'


def _planted(step, code):
    if step.step_id == '10.11':
        return step.function_header + '\n    return 0.0'
    if step.step_id == '29.1':
        return HANGS
    return code.replace(*PLANTED[step.step_id]) if step.step_id in PLANTED else code


def _stubbed(step, code):
    return step.function_header + '\n    return 0.0' if step.step_id == '10.11' else code


@pytest.fixture(scope='module')
def forensics_report(tmp_path_factory, official_data):
    """A run's results as its eval tasks write them (real evaluations, written here), for two
    models, 'gold' and 'planted'; then its summary and report, as `-m viz` makes them."""
    from opencompass_scicode.datasets import SciCodeDataset
    from opencompass_scicode.evaluation import SciCodeEvaluator
    from opencompass_scicode.evaluation.regenerate import ensure_targets
    from opencompass_scicode.summarizers import SciCodeSummarizer
    from opencompass_scicode.tasks.evaluate import with_answers
    from opencompass_scicode.utils.workdir import RunDir
    ds = SciCodeDataset(path=str(official_data), split='validation', sample_ids=['10', '29', '70'])
    targets = ensure_targets(ds)
    run_dir = RunDir(tmp_path_factory.mktemp('forensics') / 'w', '20260301_000000').create()
    for model, edit in (('gold', _stubbed), ('planted', _planted)):
        evaluator = SciCodeEvaluator(timeout=5, max_workers=2)
        preds = gold_predictions(ds, edit=edit)
        scores = evaluator.evaluate(ds, preds, targets)
        results = {'model': model, 'dataset': 'val', 'split': 'validation', 'with_bg': False,
                   'targets': targets.kind, **{k: v for k, v in scores.items() if k != 'problems'},
                   'evaluator': evaluator.settings(), 'problems': with_answers(scores['problems'], ds, preds)}
        path = run_dir.results_path(model, 'val')
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results))
    cfg = {'models': [{'abbr': 'gold'}, {'abbr': 'planted'}],
           'datasets': [{'abbr': 'val', 'with_bg': False, 'split': 'validation'}]}
    SciCodeSummarizer(plot=False).summarize(cfg, run_dir, echo=False)
    (report,) = (run_dir.root / 'summary').glob('report_*.html')
    return run_dir, report


def _step(run_dir, model, step_id):
    results = json.loads(run_dir.results_path(model, 'val').read_text())
    return next(s for p in results['problems'] for s in p['steps'] if s['step_id'] == step_id)


def _fragment(run_dir, model, step_id):
    from urllib.parse import quote
    return '#step=' + quote(f'{run_dir.timestamp}|{model}|val|{step_id}|0')


def _detail(dom):
    return next(attrs for tag, attrs in dom.elements if attrs.get('id') == 'detail-head')


@needs_chromium
def test_a_hung_step_shows_its_stack_and_an_inherited_failure_its_origin(forensics_report):
    run_dir, report = forensics_report
    hung = _step(run_dir, 'planted', '29.1')
    assert hung['status'] == 'timeout' and hung['timeout_stack']['frames'][-1]['function'] == '_settle'
    assert _step(run_dir, 'planted', '29.3')['origin'] == {'kind': 'inherited', 'from_step': '29.1'}
    dom = _dom(report, _fragment(run_dir, 'planted', '29.1'))       # a step's anchor opens its detail
    assert (_detail(dom)['data-step-id'], _detail(dom)['data-model']) == ('29.1', 'planted')
    text = ''.join(dom.text)
    assert 'where it was when its time ran out' in text
    assert 'in _settle: while True:' in text and 'in normalize: return _settle(v)' in text
    assert text.index('in normalize: return _settle(v)') < text.index('in _settle: while True:')   # innermost last
    dom = _dom(report, _fragment(run_dir, 'planted', '29.3'))
    text = ''.join(dom.text)
    assert _detail(dom)['data-step-id'] == '29.3'
    assert 'inherited from step 29.1: it passes on the gold code of the earlier steps' in text


@needs_chromium
def test_array_and_nested_differences_show_counts_indices_and_paths(forensics_report):
    run_dir, report = forensics_report
    dom = _dom(report, _fragment(run_dir, 'planted', '10.7'))
    text = ''.join(dom.text)
    rows = {attrs.get('data-row') for tag, attrs in dom.elements if tag == 'tr'}
    assert {'path', 'differing', 'first_differences', 'max_abs_diff', 'where'} <= rows
    assert 'first element that differs, at' in text and '[1]' in text and '13/13' in text
    assert 'own bug: it fails on the gold code of the earlier steps too' in text
    record = _step(run_dir, 'planted', '10.2')
    assert record['message'].split('; compared ', 1)[1].startswith('81/81 elements outside the tolerance, first at [0, 0]')


@needs_chromium
def test_two_models_compare_step_by_step_with_a_reason_and_a_link_for_each(forensics_report):
    run_dir, report = forensics_report
    dom = _dom(report)
    (view,) = [attrs for tag, attrs in dom.elements if 'comparison-view' in attrs.get('class', '').split()]
    assert (view['data-a'], view['data-b']) == ('gold', 'planted')
    gold = json.loads(run_dir.results_path('gold', 'val').read_text())
    planted = json.loads(run_dir.results_path('planted', 'val').read_text())
    broken = planted['subproblem_total'] - planted['subproblem_correct'] - \
        (gold['subproblem_total'] - gold['subproblem_correct'])
    assert int(view['data-broken']) == broken and view['data-fixed'] == '0'
    rows = {attrs['data-step-id']: attrs['data-reason'] for tag, attrs in dom.elements
            if tag == 'tr' and 'data-reason' in attrs}
    assert rows['10.2'] == 'different code'
    assert rows['10.4'] == 'same code, different earlier steps (B: inherited from step 10.2)'
    assert rows['29.1'] == 'different code' and '29.2' not in rows        # 29.2 does not call 29.1: unchanged
    assert rows['29.3'] == 'same code, different earlier steps (B: inherited from step 29.1)'
    links = [attrs['href'] for tag, attrs in dom.elements if tag == 'a' and 'step-link' in attrs.get('class', '')]
    assert _fragment(run_dir, 'planted', '10.4').replace('%7C', '|') in links
    text = ''.join(dom.text)
    assert 'B - A [95% interval, by problem]' in text and 'broken' in text
    # the same comparison on the command line, from the run's files
    proc = run_cli(['compare', str(run_dir.root), '--models', 'gold', 'planted'])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f'0 fixed, {broken} broken' in proc.stdout
    assert 'same code, different earlier steps (B: inherited from step 10.2)' in proc.stdout
