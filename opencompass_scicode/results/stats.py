"""How sure a rate is: 95% intervals by resampling problems, and paired differences.

The steps of a problem are not independent (a wrong early step sinks the
later ones), so every interval here is clustered by problem: a bootstrap
draws problems with replacement, never single steps. The generator is seeded,
so a rerun prints the same numbers. With 15 validation problems the interval
of the main-problem rate is about +-25 points: read small differences with it.
"""
import numpy as np
from typing import Any

RESAMPLES = 2000
SEED = 20240101


def _grouped(problems):
    """problem id -> [samples solved, samples, passed steps, scored steps] (a results file holds
    one entry per problem, or one per problem and sample)."""
    out = {}
    for p in problems:
        row = out.setdefault(p['problem_id'], [0, 0, 0, 0])
        row[0] += bool(p['problem_correct'])
        row[1] += 1
        row[2] += p['total_correct']
        row[3] += p['total_steps']
    return out


def _arrays(grouped, ids=None):
    rows = np.array([grouped[i] for i in (ids or grouped)], dtype=float).reshape(-1, 4)
    return rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3]


def _rates(solved, samples, correct, total, draws):
    main = solved[draws].sum(axis=1) / samples[draws].sum(axis=1) * 100
    steps = total[draws].sum(axis=1)
    sub = np.divide(correct[draws].sum(axis=1) * 100, steps, out=np.zeros_like(steps), where=steps > 0)
    return main, sub


def _draws(n, resamples, seed):
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def _interval(values):
    low, high = np.percentile(values, [2.5, 97.5])
    return [round(float(low), 2), round(float(high), 2)]


def intervals(problems, resamples=RESAMPLES, seed=SEED) -> dict[str, list[float]]:
    """{'main_problem_resolve_rate_ci95': [lo, hi], 'subproblem_ci95': [lo, hi]} in percent."""
    if not problems:
        return {'main_problem_resolve_rate_ci95': [0.0, 0.0], 'subproblem_ci95': [0.0, 0.0]}
    grouped = _grouped(problems)
    main, sub = _rates(*_arrays(grouped), _draws(len(grouped), resamples, seed))
    return {'main_problem_resolve_rate_ci95': _interval(main), 'subproblem_ci95': _interval(sub)}


def paired_difference(first, second, resamples=RESAMPLES, seed=SEED) -> dict[str, Any]:
    """second minus first, on the problems both scored, resampled together.

    Returns {'problems': n, 'main': (difference, [lo, hi]), 'subproblem': (difference, [lo, hi])}
    in percentage points, or None when they share no problem.
    """
    one, two = _grouped(first), _grouped(second)
    shared = [pid for pid in two if pid in one]
    if not shared:
        return None
    a, b = _arrays(one, shared), _arrays(two, shared)
    draws = _draws(len(shared), resamples, seed)
    main_a, sub_a = _rates(*a, draws)
    main_b, sub_b = _rates(*b, draws)
    whole = np.arange(len(shared))[None, :]
    point_main = float(_rates(*b, whole)[0][0] - _rates(*a, whole)[0][0])
    point_sub = float(_rates(*b, whole)[1][0] - _rates(*a, whole)[1][0])
    return {'problems': len(shared),
            'main': (round(point_main, 2), _interval(main_b - main_a)),
            'subproblem': (round(point_sub, 2), _interval(sub_b - sub_a))}
