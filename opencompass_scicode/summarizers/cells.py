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


def rate_cell(results, metric: str) -> str:
    """`rate (correct/total) [95% interval]` of a results file (or the rates without known
    defects it holds); the interval only where it has one."""
    rate, ci, num, den = KEYS[metric]
    text = f'{getattr(results, rate):.1f} ({getattr(results, num)}/{getattr(results, den)})'
    interval = getattr(results, ci, None)
    if interval:
        text += f' [{interval[0]:.0f}-{interval[1]:.0f}]'
    n = getattr(results, 'subproblem_not_scored', 0) or 0
    if n:       # beside the rate, so that unscored steps never read as a low score
        text += f'; {count(n, "step")} not scored'
    return text


def cost(price, prompt_tokens, completion_tokens) -> str:
    """Money spent, from the model entry's price=dict(input=, output=) per million tokens."""
    if not price:
        return '-'
    spent = (prompt_tokens * price.get('input', 0) + completion_tokens * price.get('output', 0)) / 1e6
    return f'{spent:.4f}'


def count(n, noun) -> str:
    """`n` and the noun, plural unless `n` is 1: `3 models`."""
    return f'{n} {noun}' + ('' if n == 1 else 's')


def near_misses(counts) -> str:
    """`k/failed (share%)` of a results file's NearMisses, or `-` for one written without forensics."""
    if counts is None:
        return MISSING
    return f'{counts.near_misses}/{counts.failed} ({counts.share:.1f}%)'


def difference(point, interval) -> str:
    """A difference with its interval: `+2.0 [-1.0, +5.0]`."""
    return f'{point:+.1f} [{interval[0]:+.1f}, {interval[1]:+.1f}]'
