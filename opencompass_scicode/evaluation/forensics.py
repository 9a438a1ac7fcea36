"""Why a failed step failed, in detail: the record fields read from the harness's events.

Which test failed (`failed_test` of `tests_total`), its line (`assertion`), the model's own line
(`raised_at`), what the failing assert compared (`comparison`), and how many tests pass
(`tests_passed`: those before the failing one, and the later ones run for information after the
verdict; `tests_not_run` were not reached and `tests_note` says why). The verdict itself is
decided in verdict.py, from the events up to the decision; nothing here changes it.

The events come from the step process: every field is checked for its type and range and cut
to size before it goes into a record.
"""
import json
import math
from typing import Any

from ..sandbox.forensics import COMPARISON_CAP

TEXT_CAP = 600
PHRASE_CAP = 300


def _text(value):
    return value[:TEXT_CAP] if isinstance(value, str) and value else None


def _count(value, low, high):
    return value if type(value) is int and low <= value <= high else None


def _plain(value, depth=0):
    """JSON data that every reader takes (no NaN or infinity, which JSON.parse refuses), at most
    8 levels deep; anything else as text."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if depth >= 8:
        return '...'
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, depth + 1) for v in value]
    return str(value)[:TEXT_CAP]


def _comparison(event):
    value = event.get('comparison')
    if not isinstance(value, dict):
        return None
    value = _plain(value)
    if len(json.dumps(value, allow_nan=False)) > COMPARISON_CAP:
        return {'note': 'the summary of the values was too large'}
    return value


def step_facts(run, n_tests, status, decisive) -> dict[str, Any]:
    """Record fields (only those that say something) for a StepRun that got `status`; `decisive`:
    its events up to the verdict (verdict.decided_part)."""
    facts = {'tests_total': n_tests}
    if status == 'pass':
        facts['tests_passed'] = n_tests
        return facts
    after = run.events[len(decisive):]
    done = sum(1 for e in decisive if e.get('event') == 'test_done')
    failed = next((e for e in decisive if e.get('event') in ('exception', 'violation')), None)
    program_done = any(e.get('event') == 'program_done' for e in decisive)
    failed_test = None
    if failed is not None and failed.get('event') == 'exception':
        failed_test = _count(failed.get('test'), 1, n_tests)
        facts.update(assertion=_text(failed.get('assertion')), raised_at=_text(failed.get('raised_at')))
    elif failed is not None and str(failed.get('where', '')).startswith('test '):
        failed_test = _count(done + 1, 1, n_tests)
    elif failed is None and program_done and done < n_tests:     # timed out, killed, crashed
        failed_test = done + 1
    later = {}
    note = None
    if failed_test is not None:
        for event in after:
            kind = event.get('event')
            test = _count(event.get('test'), failed_test + 1, n_tests)
            if kind == 'comparison' and 'comparison' not in facts:
                facts['comparison'] = _comparison(event)
            elif kind == 'later_test' and test is not None and type(event.get('passed')) is bool:
                later.setdefault(test, event['passed'])
            elif kind == 'later_stopped' and note is None:
                note = _text(event.get('why'))
    reached = (failed_test if failed_test is not None else 0) + len(later)
    facts['failed_test'] = failed_test
    facts['tests_passed'] = (failed_test - 1 if failed_test else 0) + sum(later.values())
    not_run = n_tests - reached if failed_test is not None else n_tests - done
    if not_run > 0:
        facts['tests_not_run'] = not_run
        facts['tests_note'] = note or _why_not_run(status, failed, failed_test, program_done, after, run)
    return {k: v for k, v in facts.items() if v is not None}


def _why_not_run(status, failed, failed_test, program_done, after, run):
    if status == 'timeout':
        return 'the step timed out' + ('' if program_done else ' in the program')
    if failed is not None and failed.get('event') == 'violation':
        return 'the step tried to fake its verdict'
    if failed_test is None:
        return 'the program failed before the tests' if not program_done else 'not reached'
    if not after:
        return 'later tests are run only after a test that raised (and with forensics on)'
    if run.returncode is not None and run.returncode < 0:
        return 'the step was stopped when the time for later tests ran out'
    return 'not reached'


def phrase(comparison) -> str:
    """One line for the message: how the compared values differ, then the values themselves.

    The difference comes first and is never cut (`3/1000 elements outside the tolerance, first
    at [17] 1.5 vs 1.0, ...; max abs diff 0.5 at [17]`; for the official helpers, where:
    `at [2]['energy']: ...`); the values after it are cut to what room PHRASE_CAP leaves."""
    if not isinstance(comparison, dict):
        return ''
    sides = [s for s in comparison.get('sides') or () if isinstance(s, dict)][:2]
    values = ' '.join(' vs '.join(f'{s.get("expr", "?")} = {s.get("repr", "?")}' for s in sides).split())
    diff = comparison.get('difference')
    told = difference_phrase(diff) if isinstance(diff, dict) else ''
    if not told:
        return _cut(values, PHRASE_CAP)
    room = PHRASE_CAP - len(told) - 2
    return told + (f'; {_cut(values, room)}' if values and room >= 20 else '')


def difference_phrase(diff) -> str:
    """How two compared values differ, in a line (empty when the summary says nothing of it)."""
    from ..sandbox.comparisons import first_path
    path, leaf = first_path(diff)
    bits = [str(leaf[k]) for k in ('shape_mismatch', 'length_mismatch') if leaf.get(k)]
    for key, side in (('keys_only_in_value', "the model's value"), ('keys_only_in_target', 'the target')):
        if leaf.get(key):
            bits.append(f'keys only in {side}: {", ".join(map(str, leaf[key]))}')
    count = leaf.get('outside_tolerance', leaf.get('elements_differ'))
    elements = leaf.get('elements')
    if type(count) is int and type(elements) is int and elements > 1:
        looked = leaf.get('elements_compared')
        over = f'{looked} of {elements} looked at' if type(looked) is int else f'{elements}'
        kind = 'outside the tolerance' if 'outside_tolerance' in leaf else 'differ'
        firsts = [f'[{", ".join(map(str, e.get("index", [])))}] {_cut(str(a), 40)} vs {_cut(str(b), 40)}'
                  for e in (leaf.get('first_differences') or [])[:3] if isinstance(e, dict)
                  for a, b in [(e.get('values') or ['?', '?'])[:2]]]
        bits.append(f'{count}/{over} elements {kind}' + (f', first at {", ".join(firsts)}' if firsts else ''))
    if 'max_abs_diff' in leaf:
        where = leaf.get('where')
        at = f' at [{", ".join(map(str, where))}]' if isinstance(where, list) and where else ''
        bits.append(f'max abs diff {leaf["max_abs_diff"]}{at}')
    if leaf.get('nan_mismatch'):
        bits.append(f'{leaf["nan_mismatch"]} NaN on one side')
    if not bits and isinstance(leaf.get('sides'), list) and len(leaf['sides']) == 2:
        bits.append(f'{_cut(str(leaf["sides"][0]), 40)} vs {_cut(str(leaf["sides"][1]), 40)}')
    if not bits and leaf.get('note'):
        bits.append(str(leaf['note']))
    if not bits:
        return ''
    return ' '.join(((f'at {path}: ' if path else '') + '; '.join(bits)).split())


def hung_phrase(stack) -> str:
    """Where a timed-out step was, in a line: its innermost own frame (and the library it was in)."""
    frames = (stack or {}).get('frames') if isinstance(stack, dict) else None
    if not frames:
        return ''
    last = frames[-1]
    inside = f' (inside {stack["inside"]})' if stack.get('inside') else ''
    function = last.get('function')
    place = f'in {function}, ' if function and function != '<module>' else ''
    return _cut(f'it was {place}{last.get("file")} line {last.get("line")}: {last.get("code")}{inside}', PHRASE_CAP)


def _cut(text, cap):
    return text if len(text) <= cap else text[:max(cap - 3, 0)] + '...'
