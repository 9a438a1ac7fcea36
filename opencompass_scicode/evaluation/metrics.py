"""SciCode metrics from per-step records.

Denominators are the whole dataset (split and sample_ids): a step with no
record counts as failed. Prefilled steps are left out of both sides. Each
rate comes with its 95% interval, clustered by problem.
"""
from ..results import StepRecord
from ..results.defects import excluding_known_defects
from ..results.stats import intervals


def percent(num, den):
    return round(100.0 * num / den, 4) if den else 0.0


def score(problems, records):
    """`records` maps step_id -> StepRecord. Returns the metric part of a results file."""
    per_problem, categories = [], {}
    solved = correct_steps = scored_steps = 0
    for problem in problems:
        steps, correct, total = [], 0, 0
        for step in problem.steps:
            if step.prefilled:
                steps.append(StepRecord.skipped(step.step_id).to_dict())
                continue
            record = records.get(step.step_id) or StepRecord.missing(step.step_id)
            steps.append(record.to_dict())
            category = record.category or record.status
            categories[category] = categories.get(category, 0) + 1
            total += 1
            correct += record.passed
        problem_correct = total > 0 and correct == total
        solved += problem_correct
        correct_steps += correct
        scored_steps += total
        per_problem.append({'problem_id': problem.problem_id, 'problem_correct': problem_correct,
                            'total_correct': correct, 'total_steps': total, 'steps': steps})
    return {
        'main_problem_resolve_rate': percent(solved, len(problems)),
        'subproblem': percent(correct_steps, scored_steps),
        'main_problem_resolved': solved,
        'main_problem_total': len(problems),
        'subproblem_correct': correct_steps,
        'subproblem_total': scored_steps,
        **intervals(per_problem),          # 95%, bootstrap over problems (results/stats.py)
        'categories': dict(sorted(categories.items(), key=lambda item: -item[1])),
        'excluding_known_defects': excluding_known_defects(per_problem),    # beside, never instead
        'problems': per_problem,
    }
