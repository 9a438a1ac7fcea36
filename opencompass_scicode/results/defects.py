"""Scores without the steps that a correct solution cannot reliably pass.

SciCode-Verified audited every problem (known_defects.json says which files,
layers and commit the lists come from). Beside the official numbers, never
instead of them: sub-steps over the steps not listed, main problems over the
problems with no listed step.
"""
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

DEFECTS_FILE = Path(__file__).with_name('known_defects.json')


@lru_cache(maxsize=1)
def known_defects() -> tuple[frozenset[str], dict[str, Any]]:
    """(the listed step ids, where they come from)."""
    data = json.loads(DEFECTS_FILE.read_text(encoding='utf-8'))
    steps = frozenset(s for listed in data['lists'] for s in listed['steps'])
    source = {'source': data['source'], 'commit': data['commit'],
              'lists': [{k: v for k, v in listed.items() if k != 'steps'} for listed in data['lists']]}
    return steps, source


def excluding_known_defects(problems) -> dict[str, Any]:
    """The rates of a results file's `problems` without the listed steps."""
    listed, source = known_defects()
    excluded = resolved = clean_problems = correct = total = 0
    for problem in problems:
        steps = [s for s in problem['steps'] if s['status'] != 'skipped']
        kept = [s for s in steps if s['step_id'] not in listed]
        excluded += len(steps) - len(kept)
        correct += sum(s['status'] == 'pass' for s in kept)
        total += len(kept)
        if len(kept) == len(steps):
            clean_problems += 1
            resolved += bool(problem['problem_correct'])
    return {'steps_excluded': excluded,
            'main_problem_resolved': resolved, 'main_problem_total': clean_problems,
            'main_problem_resolve_rate': round(100.0 * resolved / clean_problems, 4) if clean_problems else 0.0,
            'subproblem_correct': correct, 'subproblem_total': total,
            'subproblem': round(100.0 * correct / total, 4) if total else 0.0,
            'source': source}
