"""reference/results-file.md: the fields of a results file (`results/<model>/<dataset>.json`).

A placeholder until the typed, versioned results model lands (then this page shows its JSON
Schema). Until then it is read from what writes the file today:
- the file's top-level keys: the dict literal that `EvalTask.run` (tasks/evaluate.py) writes,
  read from its source, with the metrics it spreads in (`**scores`) computed by
  `evaluation.metrics.score` on a small made-up problem (so their JSON types are real); the
  types of the keys it takes from its settings are in `SETTINGS_TYPES`;
- a problem's entry and its step records: the same computation; a step record's fields are
  `results.record.StepRecord`'s (type and the comment on the field's line), plus what
  `tasks.evaluate.with_answers` adds (`answer` with `ANSWER_FIELDS`, `tests`, `gold_code`);
- the statuses and categories: `results.record.STATUSES` and `CATEGORIES`.
Every top-level key must be described in guide/results.md: one that is not stops the build.
"""
import ast
import dataclasses
import inspect
import io
import tokenize
import typing
from pathlib import Path

from .fields import type_text
from .markdown import cell, code, generated_note, table

GUIDE = Path(__file__).resolve().parents[2] / 'docs' / 'guide' / 'results.md'
# The JSON types of the keys EvalTask.run takes from its settings rather than from the metrics, which
# the generator cannot compute without a run. A key written there and missing here (or the
# reverse) stops the build.
SETTINGS_TYPES = {
    'model': 'string', 'dataset': 'string', 'split': 'string', 'with_bg': 'boolean', 'targets': 'string',
    'targets_file': 'string', 'evaluator': 'object', 'protections': 'object', 'predictions_digest': 'string',
    'duration_s': 'number', 'created_at': 'string (ISO 8601, UTC)', 'problems': 'array',
    'protocol': 'object', 'scored_with': 'object', 'targets_sha256': 'string or null',
    'environment_differences': 'array',
}


def _json_type(value):
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return 'boolean'
    if isinstance(value, int):
        return 'integer'
    if isinstance(value, float):
        return 'number'
    if isinstance(value, str):
        return 'string'
    if isinstance(value, (list, tuple)):
        return 'array'
    return 'object'


def _made_up_scores(n):
    """The metrics part of a results file for one problem of two scored steps (one passes) and a
    prefilled step, `n` samples each."""
    from opencompass_scicode.datasets.scicode import Problem, Step
    from opencompass_scicode.evaluation.metrics import score
    from opencompass_scicode.results.record import StepRecord

    def step(step_id, index):
        return Step(step_id, index, 'description', '', 'def f():', 'return 0', ('assert f() == 0',))
    problem = Problem('13', 'made up', 'import numpy as np',
                      (step('13.5', 1), step('13.6', 2), step('13.7', 3)))
    records = {}
    for sample in range(n):
        records['13.5', sample] = StepRecord('13.5', 'pass', returncode=0, category='pass')
        records['13.7', sample] = StepRecord('13.7', 'fail', returncode=1, category='wrong_value',
                                             error_type='AssertionError', failed_test=1, tests_total=1,
                                             tests_passed=0)
    return score([problem], records, n=n, ks=())


def evaluate_task_keys():
    """[(key, spread)] of the dict `EvalTask.run` writes, in order: spread=True for `**...`."""
    from opencompass_scicode.tasks import evaluate
    tree = ast.parse(inspect.getsource(evaluate))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
                and any(isinstance(t, ast.Name) and t.id == 'results' for t in node.targets)):
            return [(None, True) if key is None else (key.value, False) for key in node.value.keys]
    raise LookupError('tasks/evaluate.py no longer builds `results = {...}`; point '
                      'tools/docs_reference/results_file.py at what writes results files now')


def top_level():
    """[(key, JSON type, only with n > 1)] in the order of a results file."""
    one, several = _made_up_scores(1), _made_up_scores(2)
    written = [key for key, spread in evaluate_task_keys() if not spread]
    if set(written) != set(SETTINGS_TYPES):
        raise LookupError(f'EvalTask.run writes {sorted(written)}; SETTINGS_TYPES in '
                          f'tools/docs_reference/results_file.py gives types of {sorted(SETTINGS_TYPES)}')
    rows = []
    for key, spread in evaluate_task_keys():
        if not spread:
            rows.append((key, SETTINGS_TYPES[key], False))
            continue
        for name, value in several.items():
            if name != 'problems':
                rows.append((name, _json_type(value), name not in one))
    return rows


def _field_comments(cls):
    source = inspect.getsource(cls)
    start = inspect.getsourcelines(cls)[1]
    comments = {tok.start[0] + start - 1: tok.string.lstrip('#').strip()
                for tok in tokenize.generate_tokens(io.StringIO(source).readline) if tok.type == tokenize.COMMENT}
    lines = {}
    for node in ast.parse(source).body[0].body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            lines[node.target.id] = comments.get(node.lineno + start - 1, '')
    return lines


def step_record_rows():
    from opencompass_scicode.results.record import StepRecord
    from opencompass_scicode.tasks.evaluate import ANSWER_FIELDS
    hints = typing.get_type_hints(StepRecord)
    comments = _field_comments(StepRecord)
    rows = []
    for f in dataclasses.fields(StepRecord):
        kept = 'only when it says something' if f.name in StepRecord.OPTIONAL else 'always'
        rows.append([code(f.name), cell(type_text(hints[f.name])), kept, cell(comments.get(f.name, ''))])
    rows += [[code('answer'), 'dict', 'always', 'what the model was asked and answered: '
              + ', '.join(code(k) for k in ANSWER_FIELDS) + ' (those it has)'],
             [code('tests'), 'list of str', 'always', 'the step\'s test cases'],
             [code('gold_code'), 'str', 'where the split has it', 'the gold code (validation split)']]
    return rows


def _undescribed(keys):
    described = GUIDE.read_text(encoding='utf-8')
    return [k for k in keys if f'`{k}`' not in described]


def page():
    from opencompass_scicode.results.record import CATEGORIES, STATUSES
    keys = top_level()
    missing = _undescribed([k for k, _, _ in keys])
    if missing:
        raise LookupError(f'results files hold {", ".join(missing)}, which docs/guide/results.md does not '
                          f'describe; add them to its table of keys')
    one = _made_up_scores(1)
    problem_keys = list(one['problems'][0])
    return '\n'.join([
        '# Results file', '',
        generated_note('opencompass_scicode/tasks/evaluate.py', 'opencompass_scicode/evaluation/metrics.py',
                       'opencompass_scicode/results/record.py'),
        '!!! warning "A placeholder"',
        '    Results files have no schema and no version yet. This page lists the fields that the code '
        'writes today; it becomes the published JSON Schema of the typed results model when that lands.', '',
        'Where the file is and what each field means: [Results and report](../guide/results.md#results-files).', '',
        '## Top-level keys {#top-level-keys}', '',
        table(['key', 'JSON type', 'present'],
              [[code(k), t, 'with `infer_cfg.n` > 1' if only_n else 'always'] for k, t, only_n in keys]), '',
        '## A problem {#a-problem}', '',
        f'Each entry of `problems`: {", ".join(code(k) for k in problem_keys)}, and `sample` (0-based) '
        'with `infer_cfg.n` > 1.', '',
        '## A step record {#a-step-record}', '',
        table(['field', 'type', 'in the file', 'what it holds'], step_record_rows()), '',
        '## Statuses and categories {#statuses-and-categories}', '',
        f'`status`: {", ".join(code(s) for s in STATUSES)}.', '',
        f'`category`: {", ".join(code(c) for c in CATEGORIES)} '
        '([what each means](../guide/results.md#categories)).', '',
    ])
