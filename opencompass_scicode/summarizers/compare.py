"""Two results of one dataset side by side, step by step: what was fixed, what broke, and why.

A comparison pairs two results files explicitly (two runs of a model, two models of a run, two
results sets of a run: the caller says which is A and which is B). Over the steps both scored:
- how many steps were fixed (A fails, B passes), broken (A passes, B fails), changed (both fail,
  differently: category, exception, test or value) and unchanged (results/flips.py judges);
- the paired difference B - A of the main-problem and sub-step rates, with its 95% interval
  from a bootstrap over the problems both scored (results/stats.py);
- every step that is not unchanged, with A's and B's verdicts and the one-line reason.

The same comparison is printed by `opencompass-scicode compare`, written as Markdown, and shown
in the HTML report (report.py); built here once, it reads the same in all three.
"""
from tabulate import tabulate
from typing import Any

from ..results import flips
from ..results.stats import paired_difference
from .cells import difference, rate_cell

CHANGES = ('fixed', 'broken', 'changed', 'unchanged')


def step_sides(results) -> dict[tuple[str, str, int], dict[str, Any]]:
    """{(problem id, step id, sample): flips.side} of a results file's scored steps (a typed
    results file, or its JSON as a dict)."""
    out = {}
    for problem in flips.field(results, 'problems', ()):
        steps = flips.field(problem, 'steps', ())
        sample = flips.field(problem, 'sample', 0)
        for index, step in enumerate(steps):
            if flips.field(step, 'status') == 'skipped':
                continue
            key = (str(flips.field(problem, 'problem_id')), flips.field(step, 'step_id'),
                   flips.field(step, 'sample', sample) or 0)
            out[key] = flips.side(step, steps[:index], results)
    return out


def compare(sides_a, sides_b, results_a=None, results_b=None) -> dict[str, Any]:
    """The comparison of two results: {'counts', 'paired', 'only_a', 'only_b', 'steps': [changed
    steps], and with both results files (typed, results/schema.py), 'difference' (B - A) and 'rates'}."""
    counts = dict.fromkeys(CHANGES, 0)
    steps = []
    for key in sorted(set(sides_a) & set(sides_b), key=_order):
        a, b = sides_a[key], sides_b[key]
        change = flips.change(a, b)
        counts[change] += 1
        if change != 'unchanged':
            steps.append({'problem_id': key[0], 'step_id': key[1], 'sample': key[2], 'change': change,
                          'a': verdict(a), 'b': verdict(b), 'reason': flips.reason(a, b)})
    out = {'counts': counts, 'paired': sum(counts.values()), 'only_a': len(set(sides_a) - set(sides_b)),
           'only_b': len(set(sides_b) - set(sides_a)), 'steps': steps}
    if results_a and results_b:
        out['difference'] = paired_difference(results_a.problem_counts(), results_b.problem_counts())
        out['rates'] = {metric: (rate_cell(results_a, metric), rate_cell(results_b, metric))
                        for metric in ('main', 'sub')}
    return out


def verdict(side) -> str:
    """A step's verdict in a few words: `pass`, `fail (wrong_value)`, `timeout`, ..."""
    if side['status'] == 'pass' or side['category'] == side['status']:
        return side['status']
    return f'{side["status"]} ({side["category"]})'


def _order(key):
    problem, step, sample = key
    parts = step.split('.')
    return (int(problem) if problem.isdigit() else 0, problem,
            int(parts[-1]) if parts[-1].isdigit() else 0, step, sample)


def counts_line(c) -> str:
    """`3 fixed, 1 broken, 2 changed, 44 unchanged (50 steps paired)`."""
    counts = c['counts']
    line = ', '.join(f'{counts[k]} {k}' for k in CHANGES) + f' ({c["paired"]} steps paired'
    extra = [f'{c[k]} only in {k[-1].upper()}' for k in ('only_a', 'only_b') if c[k]]
    return line + (f'; {", ".join(extra)}' if extra else '') + ')'


def rates_table(c) -> tuple[list[str], list[list[Any]]]:
    """(header, rows): each rate in A and in B, and B - A with its interval."""
    rows = []
    for metric, label in (('main', 'main problems'), ('sub', 'sub-steps')):
        if 'rates' not in c:
            continue
        diff = c.get('difference')
        point = difference(*diff['main' if metric == 'main' else 'subproblem']) if diff else '-'
        rows.append([label, *c['rates'][metric], point])
    return ['', 'A', 'B', 'B - A [95% interval, by problem]'], rows


def steps_table(c, sample=False) -> tuple[list[str], list[list[Any]]]:
    """(header, rows): every step that is not unchanged."""
    head = ['step', *(['sample'] if sample else []), 'A', 'B', 'change', 'reason']
    rows = [[s['step_id'], *([s['sample']] if sample else []), s['a'], s['b'], s['change'], s['reason']]
            for s in c['steps']]
    return head, rows


def as_text(a_label, b_label, c, fmt='simple') -> str:
    """The comparison as text (`fmt` 'simple') or Markdown (`fmt` 'github')."""
    markdown = fmt == 'github'
    sample = any(s['sample'] for s in c['steps'])
    title = f'A: {a_label}\nB: {b_label}'
    parts = [f'## A: {a_label}\n\nB: {b_label}' if markdown else title]
    head, rows = rates_table(c)
    if rows:
        parts.append(tabulate(rows, headers=head, tablefmt=fmt, disable_numparse=True))
    parts.append(('Steps: ' if markdown else 'steps: ') + counts_line(c))
    head, rows = steps_table(c, sample)
    if rows:
        parts.append(tabulate(rows, headers=head, tablefmt=fmt, disable_numparse=True))
    return '\n\n'.join(parts) + '\n'
