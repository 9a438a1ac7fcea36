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

A large run (10 models x 338 steps x 2 settings x 5 samples) has hundreds of MB
of step text, mostly repeated: a step's prompt holds the problem's text and the
sample's earlier code, its code is part of its response. So the page carries
two kinds of data. The index, decoded at load: every step's verdict and short
facts, enough for the grid and the filters. The texts, one chunk per dataset and
problem (every model, sample and compared run of it), each kept once per
paragraph: a text is a list of runs of paragraph numbers. A chunk is decoded
when one of its steps is shown, or all of them when the search looks into code.
The records are gathered file by file while the summary reads the results
files (`Records`), so no more than one file's step records are held at a time.
"""
import base64
import gzip
import secrets
from datetime import datetime, timezone
from pathlib import Path

from pydantic_core import to_json

from ..results import CATEGORIES
from .results_files import is_results
from ..utils.writes import write_whole

TEMPLATE_DIR = Path(__file__).with_name('templates')
RECORD_FIELDS = ('status', 'category', 'error_type', 'message', 'duration_s', 'returncode', 'stdout',
                 'stderr', 'violation', 'shared', 'failed_test', 'tests_total', 'tests_passed', 'tests_not_run',
                 'tests_note', 'assertion', 'raised_at', 'comparison')
# Fields of a step's record that stay out of the index: shown in the step's detail only.
DETAIL_FIELDS = ('stdout', 'stderr', 'comparison', 'prompt', 'response', 'code', 'reasoning', 'error')
INDEX_FIELDS = tuple(k for k in RECORD_FIELDS if k not in DETAIL_FIELDS)
PARAGRAPH = '\n\n'


class _Chunk:
    """The texts of one dataset and problem: paragraphs kept once, texts as runs over them."""

    def __init__(self, dataset, problem_id):
        self.dataset, self.problem_id = dataset, problem_id
        self.paragraphs = {}        # text -> number, in the order first seen
        self.records = []
        self.steps = {}

    def runs(self, text):
        """[first, count, first, count, ...]: the text is those paragraphs joined by a blank line."""
        out = []
        known = self.paragraphs
        end = -1                    # the number that would continue the last run
        for paragraph in text.split(PARAGRAPH):
            number = known.setdefault(paragraph, len(known))
            if number == end:
                out[-1] += 1
            else:
                out += (number, 1)
            end = number + 1
        return out

    def add(self, details):
        """Position of one record's detail ({field: value}) in this chunk."""
        texts = {k: self.runs(v) for k, v in details.items() if isinstance(v, str)}
        other = {k: v for k, v in details.items() if not isinstance(v, str)}
        self.records.append({'t': texts, **({'o': other} if other else {})})
        return len(self.records) - 1

    def packed(self):
        return _packed({'dataset': self.dataset, 'problem_id': self.problem_id, 'steps': self.steps,
                        'paragraphs': list(self.paragraphs), 'records': self.records})


class Records:
    """The step records a report shows, gathered one results file at a time: `reader(run)` is a
    callback for results_files.collect."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.runs = []
        self.index = []
        self.chunks = {}        # (dataset, problem id) -> _Chunk

    def reader(self, run):
        self.runs.append(run)
        return lambda model, dataset, results: self.add(run, model, dataset, results)

    def add(self, run, model, dataset, results) -> None:
        """Take the step records of one results file (a ResultsFile) of `run`."""
        for problem in results.problems:
            key = (dataset, problem.problem_id)
            chunk = self.chunks.get(key)
            if chunk is None:
                chunk = self.chunks[key] = _Chunk(dataset, problem.problem_id)
            for step in problem.steps:
                chunk.steps.setdefault(step.step_id, {
                    'problem_id': problem.problem_id, 'tests': step.tests, 'gold_code': step.gold_code})
                answer = step.answer
                usage = answer.usage or {}
                details = {k: getattr(step, k) for k in ('stdout', 'stderr', 'comparison')
                           if getattr(step, k) not in (None, '')}
                details.update({'prompt': answer.prompt, 'response': answer.response,
                                'code': answer.program or answer.code,
                                'reasoning': answer.reasoning, 'error': answer.error})
                self.index.append({
                    'run': run, 'model': model, 'dataset': dataset, 'problem_id': problem.problem_id,
                    'step_id': step.step_id, 'sample': step.sample or 0,
                    **{k: v for k in INDEX_FIELDS if _says(v := getattr(step, k))},
                    'category': step.category or step.status,
                    'tokens': [usage.get('prompt_tokens'), usage.get('completion_tokens')],
                    'chunk': key, 'at': chunk.add({k: v for k, v in details.items() if v is not None})})

    def payload(self):
        """(the index, [packed chunks]) for the page."""
        numbers = {key: i for i, key in enumerate(self.chunks)}
        records = [dict(r, chunk=numbers[r['chunk']]) for r in self.index]
        _mark_differences(records)
        order = {d['abbr']: i for i, d in enumerate(self.cfg['datasets'])}
        records.sort(key=lambda r: (order[r['dataset']], _step_key(r['step_id']), r['sample']))
        index = {'models': [m['abbr'] for m in self.cfg['models']],
                 'datasets': [{'abbr': d['abbr'], 'with_bg': bool(d.get('with_bg')), 'split': d.get('split')}
                              for d in self.cfg['datasets']],
                 'runs': list(self.runs), 'categories': list(CATEGORIES), 'steps': {}, 'records': records}
        return index, [chunk.packed() for chunk in self.chunks.values()]


def _says(value) -> bool:
    """Whether a record's field says something (a results file leaves None, False and '' out)."""
    return value is not None and value is not False and value != ''


def _records_of(cfg, runs):
    """Records of `runs`, [(label, collected results with their step records)], this run first."""
    records = Records(cfg)
    for run, collected in runs:
        add = records.reader(run)
        for m in cfg['models']:
            for ds in cfg['datasets']:
                results = collected.get((m['abbr'], ds['abbr']))
                if is_results(results):
                    add(m['abbr'], ds['abbr'], results)
    return records


def _mark_differences(records):
    """A step whose verdict is not the same in every compared run gets `differs`."""
    verdicts = {}
    for r in records:
        verdicts.setdefault((r['model'], r['dataset'], r['step_id'], r['sample']), set()).add(r['status'])
    for r in records:
        if len(verdicts[r['model'], r['dataset'], r['step_id'], r['sample']]) > 1:
            r['differs'] = True


def _step_key(step_id):
    problem, _, index = step_id.partition('.')
    return (int(problem), int(index)) if problem.isdigit() and index.isdigit() else (0, 0)


def _packed(payload):
    """gzip + base64 of the JSON text. For a large run's report (benchmarks/scale.py), pydantic's
    JSON writer takes a quarter of json's time, and gzip's level 1 a third of level 6's for a
    third more bytes (38 MB instead of 29 for 10 models, 2 settings and 5 samples)."""
    return base64.b64encode(gzip.compress(to_json(payload), compresslevel=1, mtime=0)).decode('ascii')


def _overview(cfg, collected, usage_rows):
    usage = {row[0]: row[1:] for row in usage_rows}
    rows = []
    for m in cfg['models']:
        for ds in cfg['datasets']:
            results = collected.get((m['abbr'], ds['abbr']))
            row = {'model': m['abbr'], 'dataset': ds['abbr'], 'with_bg': bool(ds.get('with_bg')),
                   'results': results if is_results(results) else None,
                   'state': results if isinstance(results, str) else None,
                   'usage': usage.get(m['abbr'])}
            if row['results']:
                counts = row['results'].categories
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
            if is_results(results):
                by_model[m['abbr']] = {p.problem_id: p.problem_correct for p in results.problems}
        if by_model:
            ids = list(dict.fromkeys(pid for solved in by_model.values() for pid in solved))
            out[ds['abbr']] = [(pid, [by_model.get(m['abbr'], {}).get(pid) for m in cfg['models']])
                               for pid in ids]
    return out


def build_report(cfg, run_dir, collected, usage_rows, plots=(), compare=(), tables=None, known_defects=True,
                 records=None):
    """Write summary/report_<timestamp>.html; return its path. `compare`: [(label, collected
    results)] of other runs, shown beside this one, steps whose verdict differs marked; `tables`:
    the summary's tables by name (the report shows its paired differences and pass@k);
    `known_defects`: show the scores without known-defective steps; `records`: the step records
    of this run and the compared ones, gathered while their files were read (`Records`); without
    it, they are taken from `collected` and `compare`, which then hold them."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape
    if records is None:
        records = _records_of(cfg, [(run_dir.timestamp, collected), *compare])
    index, chunks = records.payload()
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
                      for name, heading in (('protocols', 'Protocols: how each number was made (name, '
                                                           'fingerprint of every knob, libraries, targets)'),
                                            ('environments', 'Steps whose verdicts differ between scoring '
                                                             'environments'),
                                            ('comparisons', 'Paired differences (percentage points, 95% '
                                                             'interval over the problems both scored)'),
                                            ('pass_at_k', 'pass@k over samples (%)'))
                      if (tables or {}).get(name, ([], []))[1]],
        payload=_packed(index), chunks=chunks)
    path = run_dir.summary_path('html').with_name(f'report_{run_dir.timestamp}.html')
    write_whole(path, page)
    return path
