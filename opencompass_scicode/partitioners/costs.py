"""What a problem is expected to cost, to make shards of about equal size."""
from ..pool.timings import StepDurations, durations_path


def infer_costs(dataset) -> list[tuple[str, int]]:
    """[(problem id, characters of prompt sent)]: each step's prompt holds the problem so far, so
    a problem costs about steps x prompt length."""
    out = []
    for problem in dataset.problems:
        sent, so_far = 0, 0
        for step in problem.steps:
            so_far += len(step.description) + len(step.function_header) + len(step.return_line)
            if dataset.with_bg:
                so_far += len(step.background)
            if not step.prefilled:
                sent += so_far
        out.append((problem.problem_id, sent))
    return out


def eval_costs(dataset) -> list[tuple[str, float]]:
    """[(problem id, seconds)]: the remembered durations of its steps (1 s where unknown)."""
    durations = StepDurations(durations_path(dataset.data_dir))
    return [(p.problem_id, sum(durations.expected(s.step_id) for s in p.scored_steps)) for p in dataset.problems]
