"""AgentCompass's files of a run, beside ours: `results/scicode/<model>/<run>/details/<task>.json`
(one per problem) and `summary.md` in that run directory (under the work dir).

Built from our files only, read as plain JSON: the results file (verdicts, counts, each step's
code) and the predictions file (each step's exchange with the model, its `trajectory`). The
counts are ours (the whole split in the denominators, a step without an answer failed); a
problem's `error` is what kept a step from being answered or scored.
"""
import json
from pathlib import Path

from ..utils.workdir import write_json_atomic

PREFILLED_NOTE = 'official prefilled step'
COUNTS = ('main_problem_resolved', 'main_problem_total', 'subproblem_correct', 'subproblem_total')


def run_dir_of(work_dir, model, timestamp, dataset=None):
    """Where one (model, dataset) run's files go: `<run>` is the run's timestamp (and the dataset
    when the config has several)."""
    run = timestamp if dataset is None else f'{timestamp}_{dataset}'
    return Path(work_dir) / 'results' / 'scicode' / model / run


def _predictions(path):
    latest = {}
    if not Path(path).is_file():
        return latest
    for line in Path(path).read_text(encoding='utf-8').splitlines():
        try:
            record = json.loads(line)
        except ValueError:          # a torn line
            continue
        latest[(record['step_id'], record.get('sample', 0))] = record
    return latest


def _trajectory(record):
    if record.get('transcript'):
        return record['transcript']
    if record.get('prompt') is None:
        return []
    return [{'role': 'user', 'content': record['prompt']},
            {'role': 'assistant', 'content': record.get('response')}]


def _step(step):
    skipped = step['status'] == 'skipped'
    return {'step_id': step['step_id'], 'status': step['status'], 'correct': step['status'] == 'pass',
            'tests_total': step.get('tests_total'), 'tests_passed': step.get('tests_passed'),
            'returncode': step.get('returncode'), 'stdout': step.get('stdout', ''),
            'stderr': step.get('stderr', ''), 'message': PREFILLED_NOTE if skipped else step.get('message', '')}


def attempt(problem, records):
    """One attempt (a sample of the problem) in AgentCompass's shape."""
    sample = problem.get('sample') or 0
    scored = [s for s in problem['steps'] if s['status'] != 'skipped']
    codes = {s['step_id']: (s.get('answer') or {}).get('code') for s in scored}
    errors = []
    trajectory = []
    for s in scored:
        record = records.get((s['step_id'], sample)) or {}
        if record.get('error'):
            errors.append(f'{s["step_id"]}: {record["error"]}')
        elif s['status'] == 'eval_error':
            errors.append(f'{s["step_id"]}: not scored: {s.get("message", "")}')
        trajectory.append({'step_id': s['step_id'], 'messages': _trajectory(record)})
    total, correct = problem['total_steps'], problem['total_correct']
    ratio = round(correct / total, 6) if total else 0.0
    error = '; '.join(errors) or None
    return {
        'final_answer': {'step_codes': {k: v for k, v in codes.items() if v is not None}},
        'artifacts': {'step_codes': codes},
        'trajectory': trajectory,
        'correct': bool(problem['problem_correct']) and error is None,
        'score': ratio,
        'meta': {'evaluation': {
            'problem_id': problem['problem_id'], 'problem_correct': int(bool(problem['problem_correct'])),
            'total_correct': correct, 'total_steps': total, 'subproblem_correctness': ratio,
            'steps': [_step(s) for s in problem['steps']], 'error': error}},
    }


def _counts(tasks):
    out = {'Total': len(tasks), 'Evaluated': sum(1 for t in tasks if t['error'] is None),
           'Error': sum(1 for t in tasks if t['error'] is not None),
           'main_problem_resolved': sum(t['problem_correct'] for t in tasks),
           'main_problem_total': len(tasks),
           'subproblem_correct': sum(t['total_correct'] for t in tasks),
           'subproblem_total': sum(t['total_steps'] for t in tasks)}
    out['main_problem_resolve_rate'] = _rate(out['main_problem_resolved'], out['main_problem_total'])
    out['subproblem'] = _rate(out['subproblem_correct'], out['subproblem_total'])
    return out


def _rate(part, whole):
    return round(part / whole, 4) if whole else 0.0


SUMMARY_COLUMNS = ('main_problem_resolve_rate', 'subproblem', 'Total', 'Evaluated', 'Error') + COUNTS


def protocol_lines(results):
    """What made the numbers (ours, beside AgentCompass's fields): protocol, fingerprint, libraries,
    targets."""
    protocol = results.get('protocol') or {}
    scored = '; '.join(f'{env}: ' + ', '.join(f'{lib} {v}' for lib, v in versions.items() if v)
                       for env, versions in (results.get('scored_with') or {}).items())
    return [f'- protocol: {protocol.get("name", "unrecorded")} (fingerprint {protocol.get("fingerprint", "-")})',
            f'- scored with: {scored or "unrecorded"}',
            f'- targets sha256: {results.get("targets_sha256") or "unrecorded"}', '']


def summary_text(model, run, evaluations, categories, results=None):
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


def write_agentcompass_files(work_dir, timestamp, results_path, predictions_path, categories, dataset=None):
    """Write one (model, dataset) run's AgentCompass files from our results and predictions
    files; `categories`: problem id -> category. Their directory, or None without results."""
    if not Path(results_path).is_file():
        return None
    results = json.loads(Path(results_path).read_text(encoding='utf-8'))
    records = _predictions(predictions_path)
    out = run_dir_of(work_dir, results['model'], timestamp, dataset)
    by_task = {}
    for problem in results['problems']:
        by_task.setdefault(problem['problem_id'], []).append(attempt(problem, records))
    for task, attempts in by_task.items():
        write_json_atomic(out / 'details' / f'{task}.json',
                          {'task_id': task, 'benchmark': 'scicode', 'model': results['model'],
                           'category': categories.get(task, 'unclassified'), 'attempts': attempts})
    evaluations = [a['meta']['evaluation'] for attempts in by_task.values() for a in attempts]
    (out / 'summary.md').write_text(summary_text(results['model'], out.name, evaluations, categories, results),
                                    encoding='utf-8')
    return out
