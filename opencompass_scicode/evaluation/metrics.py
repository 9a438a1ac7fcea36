"""SciCode metrics from per-step records.

Denominators are the whole dataset (split and sample_ids): a step with no
record counts as failed. Prefilled steps are left out of both sides. Each
rate comes with its 95% interval, clustered by problem.
"""
from math import comb
from typing import Any

from ..results import StepRecord
from ..results.defects import excluding_known_defects
from ..results.stats import intervals


def percent(num, den) -> float:
    """`num` of `den` in percent, rounded to 4 places; 0.0 when `den` is 0."""
    return round(100.0 * num / den, 4) if den else 0.0


def pass_at_k(n, c, k) -> float:
    """Chance that at least one of k samples drawn from n, c of them correct, is correct
    (the unbiased estimator of Chen et al. 2021)."""
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def _pass_at(per_problem, n, ks):
    """{'main': {k: %}, 'subproblem': {k: %}} over the problems (and over their scored steps)."""
    solved, passed = {}, {}
    for entry in per_problem:
        solved[entry['problem_id']] = solved.get(entry['problem_id'], 0) + entry['problem_correct']
        for step in entry['steps']:
            if step['status'] != 'skipped':
                key = (entry['problem_id'], step['step_id'])
                passed[key] = passed.get(key, 0) + (step['status'] == 'pass')
    return {'main': {str(k): percent(sum(pass_at_k(n, c, k) for c in solved.values()), len(solved))
                     for k in ks},
            'subproblem': {str(k): percent(sum(pass_at_k(n, c, k) for c in passed.values()), len(passed))
                           for k in ks}}


def score(problems, records, n=1, ks=(), prefilled_steps='skipped') -> dict[str, Any]:
    """`records` maps (step_id, sample) -> StepRecord; `n` samples per problem. Returns the
    metric part of a results file. With n > 1, `problems` holds one entry per problem and sample,
    the counts run over (problem, sample) pairs, so the rates are the means over samples, and
    pass_at_k is added for k = 1, n and `ks`. `prefilled_steps` (a protocol knob): the prefilled
    steps are 'skipped' (official: out of numerator and denominator), 'failed' (counted, never
    passed) or 'scored' (their records, from `records`, count as any step's)."""
    per_problem, categories = [], {}
    solved = correct_steps = scored_steps = near_misses = 0
    for problem in problems:
        for sample in range(n):
            mark = sample if n > 1 else None
            steps, correct, total = [], 0, 0
            for step in problem.steps:
                if step.prefilled and prefilled_steps == 'skipped':
                    steps.append(StepRecord.skipped(step.step_id, mark).to_dict())
                    continue
                if step.prefilled and prefilled_steps == 'failed':
                    record = StepRecord.prefilled_failed(step.step_id, mark)
                else:
                    record = records.get((step.step_id, sample)) or StepRecord.missing(step.step_id, mark)
                if record.sample != mark:
                    record = record.replace(sample=mark)
                steps.append(record.to_dict())
                category = record.category or record.status
                categories[category] = categories.get(category, 0) + 1
                total += 1
                correct += record.passed
                near_misses += record.near_miss
            problem_correct = total > 0 and correct == total
            solved += problem_correct
            correct_steps += correct
            scored_steps += total
            entry = {'problem_id': problem.problem_id, 'problem_correct': problem_correct,
                     'total_correct': correct, 'total_steps': total, 'steps': steps}
            if mark is not None:
                entry['sample'] = sample
            per_problem.append(entry)
    out = {
        'main_problem_resolve_rate': percent(solved, len(problems) * n),
        'subproblem': percent(correct_steps, scored_steps),
        'main_problem_resolved': solved,
        'main_problem_total': len(problems) * n,
        'subproblem_correct': correct_steps,
        'subproblem_total': scored_steps,
        # Steps the harness could not score (eval_error): counted as failed in the rates, and
        # shown beside them, so that a run that scored nothing never reads as a score of 0.
        'subproblem_not_scored': categories.get('eval_error', 0),
        **intervals(per_problem),          # 95%, bootstrap over problems (results/stats.py)
    }
    # OpenCompass's names for the same two numbers, for its summarizer configs and users' scripts.
    out['accuracy'], out['sub_accuracy'] = out['main_problem_resolve_rate'], out['subproblem']
    if n > 1:
        out['samples'] = n
        out['pass_at_k'] = _pass_at(per_problem, n, sorted({1, n, *(k for k in ks if 1 <= k <= n)}))
    out['categories'] = dict(sorted(categories.items(), key=lambda item: -item[1]))
    failed = scored_steps - correct_steps
    # failed steps whose failing comparison was off by less than 10x its tolerance (sandbox/values.py)
    out['near_misses'] = {'near_misses': near_misses, 'failed': failed,
                          'share': round(100.0 * near_misses / failed, 1) if failed else 0.0}
    out['excluding_known_defects'] = excluding_known_defects(per_problem)    # beside, never instead
    out['problems'] = per_problem
    return out
