"""One self-contained HTML report per run: overview, problem x step grid, per-step detail.

It reads the results files only (each step record there carries its answer and
tests) and works offline from disk: CSS, scripts, plots and data are inline.
Everything that comes from models and programs (responses, code, stdout,
stderr, messages) travels as data: gzip-compressed JSON that the page's script
puts on the page with `textContent`, never as markup, so a response holding
`<script>` or `onerror=` shows as text and never runs. The overview and the
model comparison are plain HTML, escaped by Jinja2, usable before any script
runs. Every element that shows one step carries data-model, data-dataset,
data-step-id, data-sample, data-status and data-category.
"""
import base64
import gzip
import json
import secrets
from datetime import datetime, timezone
from pathlib import Path

from ..results import CATEGORIES

TEMPLATE_DIR = Path(__file__).with_name('templates')
RECORD_FIELDS = ('status', 'category', 'error_type', 'message', 'duration_s', 'returncode', 'stdout',
                 'stderr', 'violation', 'shared', 'failed_test', 'tests_total', 'tests_passed', 'tests_not_run',
                 'tests_note', 'assertion', 'raised_at', 'comparison')


def _payload(cfg, runs):
    """What the page's script renders: per run, model and dataset its step records; per dataset
    its steps. `runs` is [(label, collected results)], this run first."""
    steps, records = {}, []
    for run, collected in runs:
        _add_records(cfg, run, collected, steps, records)
    _mark_differences(records)
    # The same step of every model side by side: their prompts share most of their text, and
    # gzip only finds repeats within 32 kB.
    order = {d['abbr']: i for i, d in enumerate(cfg['datasets'])}
    records.sort(key=lambda r: (order[r['dataset']], _step_key(r['step_id']), r['sample']))
    return {'models': [m['abbr'] for m in cfg['models']],
            'datasets': [{'abbr': d['abbr'], 'with_bg': bool(d.get('with_bg')), 'split': d.get('split')}
                         for d in cfg['datasets']],
            'runs': [label for label, _ in runs],
            'categories': list(CATEGORIES), 'steps': steps, 'records': records}


def _mark_differences(records):
    """A step whose verdict is not the same in every compared run gets `differs`."""
    verdicts = {}
    for r in records:
        verdicts.setdefault((r['model'], r['dataset'], r['step_id'], r['sample']), set()).add(r['status'])
    for r in records:
        if len(verdicts[r['model'], r['dataset'], r['step_id'], r['sample']]) > 1:
            r['differs'] = True


def _add_records(cfg, run, collected, steps, records):
    for m in cfg['models']:
        for ds in cfg['datasets']:
            results = collected.get((m['abbr'], ds['abbr']))
            if not isinstance(results, dict):
                continue
            known = steps.setdefault(ds['abbr'], {})
            for problem in results['problems']:
                for step in problem.get('steps', ()):
                    known.setdefault(step['step_id'], {
                        'problem_id': problem['problem_id'], 'tests': step.get('tests') or [],
                        'gold_code': step.get('gold_code')})
                    answer = step.get('answer') or {}
                    usage = answer.get('usage') or {}
                    records.append({
                        'run': run, 'model': m['abbr'], 'dataset': ds['abbr'],
                        'problem_id': problem['problem_id'],
                        'step_id': step['step_id'], 'sample': step.get('sample', 0),
                        **{k: step.get(k) for k in RECORD_FIELDS if step.get(k) not in (None, '')},
                        'category': step.get('category') or step['status'],
                        'prompt': answer.get('prompt'), 'response': answer.get('response'),
                        'code': answer.get('program') or answer.get('code'),
                        'reasoning': answer.get('reasoning'), 'error': answer.get('error'),
                        'tokens': [usage.get('prompt_tokens'), usage.get('completion_tokens')]})


def _step_key(step_id):
    problem, _, index = step_id.partition('.')
    return (int(problem), int(index)) if problem.isdigit() and index.isdigit() else (0, 0)


def _packed(payload):
    """gzip + base64: model text repeats a lot (prompts embed earlier code), so this is small."""
    blob = json.dumps(payload, ensure_ascii=False, separators=(',', ':')).encode('utf-8')
    return base64.b64encode(gzip.compress(blob, compresslevel=6, mtime=0)).decode('ascii')


def _overview(cfg, collected, usage_rows):
    usage = {row[0]: row[1:] for row in usage_rows}
    rows = []
    for m in cfg['models']:
        for ds in cfg['datasets']:
            results = collected.get((m['abbr'], ds['abbr']))
            row = {'model': m['abbr'], 'dataset': ds['abbr'], 'with_bg': bool(ds.get('with_bg')),
                   'results': results if isinstance(results, dict) else None,
                   'state': results if isinstance(results, str) else None,
                   'usage': usage.get(m['abbr'])}
            if row['results']:
                counts = row['results'].get('categories') or {}
                total = sum(counts.values()) or 1
                row['bars'] = [(c, counts[c], 100.0 * counts[c] / total) for c in CATEGORIES if c in counts]
            rows.append(row)
    return rows


def _who_solves(cfg, collected):
    """{dataset: [(problem id, [solved? per model])]} for the model-vs-model table."""
    out = {}
    for ds in cfg['datasets']:
        by_model = {}
        for m in cfg['models']:
            results = collected.get((m['abbr'], ds['abbr']))
            if isinstance(results, dict):
                by_model[m['abbr']] = {p['problem_id']: p['problem_correct'] for p in results['problems']}
        if by_model:
            ids = list(dict.fromkeys(pid for solved in by_model.values() for pid in solved))
            out[ds['abbr']] = [(pid, [by_model.get(m['abbr'], {}).get(pid) for m in cfg['models']])
                               for pid in ids]
    return out


def build_report(cfg, run_dir, collected, usage_rows, plots=(), compare=(), tables=None, known_defects=True):
    """Write summary/report_<timestamp>.html; return its path. `compare`: [(label, collected
    results)] of other runs, shown beside this one, steps whose verdict differs marked; `tables`:
    the summary's tables by name (the report shows its paired differences and pass@k);
    `known_defects`: show the scores without known-defective steps."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape
    env = Environment(loader=FileSystemLoader(str(TEMPLATE_DIR)), autoescape=select_autoescape(['html', 'j2']))
    page = env.get_template('report.html.j2').render(
        title=f'SciCode report: run {run_dir.timestamp}', nonce=secrets.token_urlsafe(16),
        created=datetime.now(timezone.utc).isoformat(timespec='seconds'),
        models=[m['abbr'] for m in cfg['models']], datasets=[d['abbr'] for d in cfg['datasets']],
        categories=CATEGORIES, overview=_overview(cfg, collected, usage_rows),
        who_solves=_who_solves(cfg, collected),
        plots=[base64.b64encode(Path(p).read_bytes()).decode('ascii') for p in plots],
        compared=[label for label, _ in compare], known_defects=known_defects,
        extra_tables=[(heading, *(tables or {}).get(name, ([], [])))
                      for name, heading in (('comparisons', 'Paired differences (percentage points, 95% '
                                                             'interval over the problems both scored)'),
                                            ('pass_at_k', 'pass@k over samples (%)'))
                      if (tables or {}).get(name, ([], []))[1]],
        payload=_packed(_payload(cfg, [(run_dir.timestamp, collected), *compare])))
    path = run_dir.summary_path('html').with_name(f'report_{run_dir.timestamp}.html')
    path.write_text(page, encoding='utf-8')
    return path
