"""AgentCompass's files of a run, beside ours: `results/scicode/<model>/<run>/details/<task>.json`
(one per problem) and `summary.md` in that run directory (under the work dir).

Built from our files only: the results file, through its typed loader (verdicts, counts, each
step's code), and the predictions file (each step's exchange with the model, its `trajectory`). A
problem's `error` is what kept a step from being answered (a refused request) or scored. The
counts of summary.md are AgentCompass's: `Total` problems, `Error` those with an error,
`Evaluated` the others, and the rates and their raw counts over the evaluated problems only
(our own tables keep the whole split in their denominators).
"""
from pathlib import Path

from ..predictions import PredictionStore
from ..utils.writes import write_json_atomic, write_whole
from .schema import load_results

PREFILLED_NOTE = 'official prefilled step'
COUNTS = ('main_problem_resolved', 'main_problem_total', 'subproblem_correct', 'subproblem_total')


def run_dir_of(work_dir, model, timestamp, dataset=None) -> Path:
    """Where one (model, dataset) run's files go: `<run>` is the run's timestamp (and the dataset
    when the config has several)."""
    run = timestamp if dataset is None else f'{timestamp}_{dataset}'
    return Path(work_dir) / 'results' / 'scicode' / model / run


def _predictions(path):
    """(step id, sample) -> the latest Prediction of each step in the predictions file at `path`."""
    return {(r.step_id, r.sample): r for r in PredictionStore(path).load().values()}


def _trajectory(record):
    if record is None:
        return []
    if record.transcript:
        return record.transcript
    if record.prompt is None:
        return []
    return [{'role': 'user', 'content': record.prompt},
            {'role': 'assistant', 'content': record.response}]


def _step(step):
    skipped = step.status == 'skipped'
    return {'step_id': step.step_id, 'status': step.status, 'correct': step.status == 'pass',
            'tests_total': step.tests_total, 'tests_passed': step.tests_passed,
            'returncode': step.returncode, 'stdout': step.stdout,
            'stderr': step.stderr, 'message': PREFILLED_NOTE if skipped else step.message}


def attempt(problem, records) -> dict:
    """One attempt (a sample of the problem: a results file's ProblemResult) in AgentCompass's
    shape; `records`: (step id, sample) -> the step's prediction record."""
    sample = problem.sample or 0
    scored = [s for s in problem.steps if s.status != 'skipped']
    codes = {s.step_id: s.answer.code for s in scored}
    errors = []
    trajectory = []
    for s in scored:
        record = records.get((s.step_id, sample))
        if record is not None and record.error:
            errors.append(f'{s.step_id}: {record.error}')
        elif s.status == 'eval_error':
            errors.append(f'{s.step_id}: not scored: {s.message}')
        trajectory.append({'step_id': s.step_id, 'messages': _trajectory(record)})
    total, correct = problem.total_steps, problem.total_correct
    ratio = round(correct / total, 6) if total else 0.0
    error = '; '.join(errors) or None
    return {
        'final_answer': {'step_codes': {k: v for k, v in codes.items() if v is not None}},
        'artifacts': {'step_codes': codes},
        'trajectory': trajectory,
        'correct': bool(problem.problem_correct) and error is None,
        'score': ratio,
        'meta': {'evaluation': {
            'problem_id': problem.problem_id, 'problem_correct': int(bool(problem.problem_correct)),
            'total_correct': correct, 'total_steps': total, 'subproblem_correctness': ratio,
            'steps': [_step(s) for s in problem.steps], 'error': error}},
    }


def _counts(tasks):
    evaluated = [t for t in tasks if t['error'] is None]
    out = {'Total': len(tasks), 'Evaluated': len(evaluated), 'Error': len(tasks) - len(evaluated),
           'main_problem_resolved': sum(t['problem_correct'] for t in evaluated),
           'main_problem_total': len(evaluated),
           'subproblem_correct': sum(t['total_correct'] for t in evaluated),
           'subproblem_total': sum(t['total_steps'] for t in evaluated)}
    out['main_problem_resolve_rate'] = _rate(out['main_problem_resolved'], out['main_problem_total'])
    out['subproblem'] = _rate(out['subproblem_correct'], out['subproblem_total'])
    return out


def _rate(part, whole):
    return round(part / whole, 4) if whole else 0.0


SUMMARY_COLUMNS = ('main_problem_resolve_rate', 'subproblem', 'Total', 'Evaluated', 'Error') + COUNTS


def protocol_lines(results) -> list[str]:
    """What made the numbers (ours, beside AgentCompass's fields): protocol, fingerprint, libraries,
    targets."""
    protocol = results.protocol or {}
    scored = '; '.join(f'{env}: ' + ', '.join(f'{lib} {v}' for lib, v in versions.items() if v)
                       for env, versions in (results.scored_with or {}).items())
    return [f'- protocol: {protocol.get("name", "unrecorded")} (fingerprint {protocol.get("fingerprint", "-")})',
            f'- scored with: {scored or "unrecorded"}',
            f'- targets sha256: {results.targets_sha256 or "unrecorded"}', '']


def summary_text(model, run, evaluations, categories, results=None) -> str:
    """summary.md: the rates (subproblem micro-averaged), counts, and the same by category;
    `results` (our results file): the protocol lines under the title."""
    overall = _counts(evaluations)
    lines = [f'# SciCode: {model}, run {run}', '']
    if results is not None:
        lines += protocol_lines(results)
    lines += [f'- {name}: {overall[name]}' for name in SUMMARY_COLUMNS]
    lines += ['', '## By category', '', '| category | ' + ' | '.join(SUMMARY_COLUMNS) + ' |',
              '|---' * (len(SUMMARY_COLUMNS) + 1) + '|']
    for category in sorted({categories.get(e['problem_id'], 'unclassified') for e in evaluations}):
        counts = _counts([e for e in evaluations if categories.get(e['problem_id'], 'unclassified') == category])
        lines.append(f'| {category} | ' + ' | '.join(str(counts[c]) for c in SUMMARY_COLUMNS) + ' |')
    return '\n'.join(lines) + '\n'


def write_agentcompass_files(work_dir, timestamp, results_path, predictions_path, categories, dataset=None) -> Path | None:
    """Write one (model, dataset) run's AgentCompass files from our results and predictions
    files; `categories`: problem id -> category. Their directory, or None without results."""
    if not Path(results_path).is_file():
        return None
    # each step's code is in the results file itself; its exchange with the model is the predictions file's
    results = load_results(results_path, texts=False)
    records = _predictions(predictions_path)
    out = run_dir_of(work_dir, results.model, timestamp, dataset)
    by_task = {}
    for problem in results.problems:
        by_task.setdefault(problem.problem_id, []).append(attempt(problem, records))
    for task, attempts in by_task.items():
        write_json_atomic(out / 'details' / f'{task}.json',
                          {'task_id': task, 'benchmark': 'scicode', 'model': results.model,
                           'category': categories.get(task, 'unclassified'), 'attempts': attempts})
    evaluations = [a['meta']['evaluation'] for attempts in by_task.values() for a in attempts]
    write_whole(out / 'summary.md', summary_text(results.model, out.name, evaluations, categories, results))
    return out
