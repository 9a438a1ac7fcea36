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

Comparisons (compare.py, as `opencompass-scicode compare` prints them): each run shown beside
this one against it (A: the other run, B: this one) and each model against the first (A: the
first), per dataset: counts of fixed, broken and changed steps, the paired difference, and each
step that changed with its one-line reason and links to both records. A step's link is
`#step=<run>|<model>|<dataset>|<step id>|<sample>`: the page opens that step's detail.
"""
import base64
import gzip
import secrets
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote

from pydantic_core import to_json
from typing import Any, Callable

from ..results import CATEGORIES
from ..utils.writes import write_whole
from .compare import compare as compare_steps, counts_line, rates_table, step_sides
from .results_files import is_results

TEMPLATE_DIR = Path(__file__).with_name('templates')
RECORD_FIELDS = ('status', 'category', 'error_type', 'message', 'duration_s', 'returncode', 'stdout',
                 'stderr', 'violation', 'shared', 'failed_test', 'tests_total', 'tests_passed', 'tests_not_run',
                 'tests_note', 'assertion', 'raised_at', 'comparison', 'timeout_stack', 'origin')
# Fields of a step's record that stay out of the index: shown in the step's detail only.
DETAIL_FIELDS = ('stdout', 'stderr', 'comparison', 'timeout_stack', 'prompt', 'response', 'code', 'reasoning',
                 'error')
INDEX_FIELDS = tuple(k for k in RECORD_FIELDS if k not in DETAIL_FIELDS)
PARAGRAPH = '\n\n'


class _Chunk:
    """The texts of one dataset and problem: paragraphs kept once, texts as runs over them."""

    def __init__(self, dataset, problem_id):
        self.dataset, self.problem_id = dataset, problem_id
        self.paragraphs = {}        # text -> number, in the order first seen
        self.records = []
        self.steps = {}

    def runs(self, text) -> list[int]:
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

    def add(self, details) -> int:
        """Position of one record's detail ({field: value}) in this chunk."""
        texts = {k: self.runs(v) for k, v in details.items() if isinstance(v, str)}
        other = {k: v for k, v in details.items() if not isinstance(v, str)}
        self.records.append({'t': texts, **({'o': other} if other else {})})
        return len(self.records) - 1

    def packed(self) -> str:
        """This chunk packed for the page (gzip + base64 of its JSON)."""
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
        self.sides = {}         # (run, model, dataset) -> its steps as comparisons see them
        self.rates = {}         # (run, model, dataset) -> its results without step records

    def reader(self, run) -> Callable[[str, str, Any], None]:
        """The `each` callback of collect for run `run`: adds each results file's records to this
        set."""
        self.runs.append(run)
        return lambda model, dataset, results: self.add(run, model, dataset, results)

    def add(self, run, model, dataset, results) -> None:
        """Take the step records of one results file (a ResultsFile) of `run`, and what a
        comparison needs of it (its steps as compared; the file itself, whose step records the
        summary lets go once read)."""
        self.sides[run, model, dataset] = step_sides(results)
        self.rates[run, model, dataset] = results
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
                details = {k: getattr(step, k) for k in ('stdout', 'stderr', 'comparison', 'timeout_stack')
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

    def comparisons(self) -> tuple[list[dict[str, Any]], dict[tuple, tuple[str, str]]]:
        """The comparison views, and {(run, model, dataset, problem, step, sample): (change, reason)}
        of the runs compared with this one, for their grid cells."""
        models = [m['abbr'] for m in self.cfg['models']]
        datasets = [d['abbr'] for d in self.cfg['datasets']]
        this, views, marks = self.runs[0] if self.runs else None, [], {}
        pairs = [((other, m, d), (this, m, d), True) for other in self.runs[1:] for m in models for d in datasets]
        pairs += [((this, models[0], d), (this, m, d), False) for m in models[1:] for d in datasets]
        for a, b, across_runs in pairs:
            if a not in self.sides or b not in self.sides:
                continue
            found = compare_steps(self.sides[a], self.sides[b], self.rates[a], self.rates[b])
            head, rates = rates_table(found)
            views.append({'a': _label(a, across_runs), 'b': _label(b, across_runs), 'across_runs': across_runs,
                          'counts': found['counts'], 'counts_line': counts_line(found), 'rates_head': head,
                          'rates': rates, 'dataset': b[2],
                          'steps': [dict(s, link_a=_anchor(a, s), link_b=_anchor(b, s)) for s in found['steps']]})
            if across_runs:
                for step in found['steps']:
                    for side in (a, b):
                        marks.setdefault((*side, step['problem_id'], step['step_id'], step['sample']),
                                         (step['change'], step['reason']))
        return views, marks

    def payload(self, marks=None) -> tuple[dict[str, Any], list[str]]:
        """(the index, [packed chunks]) for the page; `marks`: comparisons' verdicts on cells."""
        numbers = {key: i for i, key in enumerate(self.chunks)}
        records = [dict(r, chunk=numbers[r['chunk']]) for r in self.index]
        for r in records:
            mark = (marks or {}).get((r['run'], r['model'], r['dataset'], str(r['problem_id']), r['step_id'],
                                      r['sample'] or 0))
            if mark:
                r['differs'], r['change'], r['reason'] = True, *mark
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


def _label(side, across_runs):
    run, model, dataset = side
    return f'run {run} · {model}' if across_runs else model


def _anchor(side, step):
    """The fragment of one step's record on the page (the script opens it)."""
    run, model, dataset = side
    return f'step={quote("|".join(map(str, (run, model, dataset, step["step_id"], step["sample"]))), safe="|")}'


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
                 records=None) -> Path:
    """Write summary/report_<timestamp>.html; return its path. `compare`: [(label, collected
    results)] of other runs, shown beside this one, steps whose verdict differs marked; `tables`:
    the summary's tables by name (the report shows its paired differences and pass@k);
    `known_defects`: show the scores without known-defective steps; `records`: the step records
    of this run and the compared ones, gathered while their files were read (`Records`); without
    it, they are taken from `collected` and `compare`, which then hold them."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape
    if records is None:
        records = _records_of(cfg, [(run_dir.timestamp, collected), *compare])
    views, marks = records.comparisons()
    index, chunks = records.payload(marks)
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
        comparisons=views, payload=_packed(index), chunks=chunks)
    path = run_dir.summary_path('html').with_name(f'report_{run_dir.timestamp}.html')
    write_whole(path, page)
    return path
