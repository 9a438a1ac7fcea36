"""One table cell as text: a rate with its counts and interval, a cost, near misses, a paired
difference.

The main table, the tables beside it and the report's tables all show these numbers; built in
one place, a number reads the same wherever it is shown.
"""
from .results_files import MISSING

# metric -> (rate key, its 95% interval, numerator, denominator) of a results file
KEYS = {'main': ('main_problem_resolve_rate', 'main_problem_resolve_rate_ci95', 'main_problem_resolved',
                 'main_problem_total'),
        'sub': ('subproblem', 'subproblem_ci95', 'subproblem_correct', 'subproblem_total')}


def rate_cell(results, metric):
    """`rate (correct/total) [95% interval]`; the interval only where the results file has one."""
    rate, ci, num, den = KEYS[metric]
    text = f'{results[rate]:.1f} ({results[num]}/{results[den]})'
    if results.get(ci):
        text += f' [{results[ci][0]:.0f}-{results[ci][1]:.0f}]'
    n = results.get('subproblem_not_scored') or 0
    if n:       # beside the rate, so that unscored steps never read as a low score
        text += f'; {count(n, "step")} not scored'
    return text


def cost(price, prompt_tokens, completion_tokens):
    """Money spent, from the model entry's price=dict(input=, output=) per million tokens."""
    if not price:
        return '-'
    spent = (prompt_tokens * price.get('input', 0) + completion_tokens * price.get('output', 0)) / 1e6
    return f'{spent:.4f}'


def count(n, noun):
    return f'{n} {noun}' + ('' if n == 1 else 's')


def near_misses(counts):
    """`k/failed (share%)`, or `-` for a results file written without forensics."""
    if not counts:
        return MISSING
    return f'{counts.get("near_misses", 0)}/{counts.get("failed", 0)} ({counts.get("share", 0.0):.1f}%)'


def difference(point, interval):
    return f'{point:+.1f} [{interval[0]:+.1f}, {interval[1]:+.1f}]'
