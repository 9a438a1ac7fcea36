"""How sure a rate is: 95% intervals by resampling problems, and paired differences.

The steps of a problem are not independent (a wrong early step sinks the
later ones), so every interval here is clustered by problem: a bootstrap
draws problems with replacement, never single steps. The generator is seeded,
so a rerun prints the same numbers. With 15 validation problems the interval
of the main-problem rate is about +-25 points: read small differences with it.
"""
import numpy as np

RESAMPLES = 2000
SEED = 20240101


def _arrays(problems):
    """(solved 0/1, passed steps, scored steps) per problem, from a results file's `problems`."""
    solved = np.array([bool(p['problem_correct']) for p in problems], dtype=float)
    correct = np.array([p['total_correct'] for p in problems], dtype=float)
    total = np.array([p['total_steps'] for p in problems], dtype=float)
    return solved, correct, total


def _rates(solved, correct, total, draws):
    main = solved[draws].mean(axis=1) * 100
    steps = total[draws].sum(axis=1)
    sub = np.divide(correct[draws].sum(axis=1) * 100, steps, out=np.zeros_like(steps), where=steps > 0)
    return main, sub


def _draws(n, resamples, seed):
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def _interval(values):
    low, high = np.percentile(values, [2.5, 97.5])
    return [round(float(low), 2), round(float(high), 2)]


def intervals(problems, resamples=RESAMPLES, seed=SEED):
    """{'main_problem_resolve_rate_ci95': [lo, hi], 'subproblem_ci95': [lo, hi]} in percent."""
    if not problems:
        return {'main_problem_resolve_rate_ci95': [0.0, 0.0], 'subproblem_ci95': [0.0, 0.0]}
    arrays = _arrays(problems)
    main, sub = _rates(*arrays, _draws(len(problems), resamples, seed))
    return {'main_problem_resolve_rate_ci95': _interval(main), 'subproblem_ci95': _interval(sub)}


def paired_difference(first, second, resamples=RESAMPLES, seed=SEED):
    """second minus first, on the problems both scored, resampled together.

    Returns {'problems': n, 'main': (difference, [lo, hi]), 'subproblem': (difference, [lo, hi])}
    in percentage points, or None when they share no problem.
    """
    by_id = {p['problem_id']: p for p in first}
    shared = [(by_id[p['problem_id']], p) for p in second if p['problem_id'] in by_id]
    if not shared:
        return None
    a = _arrays([x for x, _ in shared])
    b = _arrays([y for _, y in shared])
    draws = _draws(len(shared), resamples, seed)
    main_a, sub_a = _rates(*a, draws)
    main_b, sub_b = _rates(*b, draws)
    whole = np.arange(len(shared))[None, :]
    point_main = float(_rates(*b, whole)[0][0] - _rates(*a, whole)[0][0])
    point_sub = float(_rates(*b, whole)[1][0] - _rates(*a, whole)[1][0])
    return {'problems': len(shared),
            'main': (round(point_main, 2), _interval(main_b - main_a)),
            'subproblem': (round(point_sub, 2), _interval(sub_b - sub_a))}
