"""Where a step's verdict is decided, and why a failed step failed.

A step passes only if the harness reported, with this run's nonce, that every
test case ran to the end, nothing it watches was tampered with, and the
process then exited 0 through the harness. Exit code 0 alone proves nothing
(a program can call os._exit(0) halfway), so it is never enough.

Every verdict also names a category, so that a reader sees at a glance why
steps fail: `no_code`, `refused` (the API refused the request), `truncated`, `syntax_error`, `name_error`,
`import_error`, `wrong_value` (an assertion of a test failed), `exception`
(any other; `error_type` names its class), `timeout`, `resource_limit`
(memory, processes, file size), `tamper` (the step tried to fake its verdict),
`eval_error` (the harness failed, not the model), `pass`, `skipped` (the list, in
display order, is results.CATEGORIES).

`record_for` turns a run into the step's record: the verdict, and what
forensics.py reads from the events about a failure. The steps that cannot run
at all get theirs in evaluator.py (`cannot_run`) and results/record.py.
"""
import signal
from typing import Any, NamedTuple, Optional

from ..results import StepRecord
from ..sandbox.tracebacks import hung_stack
from .forensics import hung_phrase, phrase, step_facts

_BY_ERROR = {'SyntaxError': 'syntax_error', 'IndentationError': 'syntax_error', 'TabError': 'syntax_error',
             'NameError': 'name_error', 'UnboundLocalError': 'name_error',
             'ImportError': 'import_error', 'ModuleNotFoundError': 'import_error',
             'AssertionError': 'wrong_value', 'MemoryError': 'resource_limit'}
# Signals the limits send: address space (an allocation that fails hard), file size, the cgroup's OOM kill.
_LIMIT_SIGNALS = {signal.SIGXFSZ, signal.SIGXCPU, signal.SIGKILL}


class Verdict(NamedTuple):
    status: str
    message: str
    violation: Optional[str] = None
    category: Optional[str] = None
    error_type: Optional[str] = None


def _signal_of(returncode):
    try:
        return signal.Signals(-returncode)
    except (ValueError, TypeError):
        return None


def _exception(event):
    error_type = event.get('error_type') or str(event.get('detail', '')).split(':', 1)[0] or None
    category = _BY_ERROR.get(error_type, 'exception')
    if category == 'name_error' and event.get('name'):
        error_type = f'{error_type}: {event["name"]}'     # the name the model's code lacked
    return Verdict('fail', f'{event.get("where")} raised {event.get("detail")}', None, category, error_type)


def decided_part(events) -> list[dict[str, Any]]:
    """The events up to the harness's `decided` (with this run's nonce; a forged one is `forged`):
    what a step does after its verdict is decided is for information only and never changes it."""
    for index, event in enumerate(events):
        if event.get('event') == 'decided':
            return events[:index + 1]
    return events


def position(events, n_tests) -> str:
    """Where a step was when it stopped: 'in test k' (1-based), 'in the program' or ''."""
    if not any(e.get('event') == 'started' for e in events):
        return ''
    if not any(e.get('event') == 'program_done' for e in events):
        return 'in the program'
    done = sum(1 for e in events if e.get('event') == 'test_done')
    return f'in test {done + 1} of {n_tests}' if done < n_tests else ''


def decide(run, n_tests) -> Verdict:
    """The Verdict for a StepRun."""
    if run.error:
        return Verdict('eval_error', run.error, None, 'eval_error')
    events = decided_part(run.events)
    if run.timed_out:
        where = position(events, n_tests)
        return Verdict('timeout', f'timed out{" " + where if where else ""}; the step and everything it '
                                  f'started were killed', None, 'timeout')
    if run.process_limit_hit:
        return Verdict('fail', 'started more processes than allowed; the step was killed', 'process flood',
                       'resource_limit', 'process limit')
    forged = [e for e in events if e.get('event') in ('forged', 'garbled')]
    if forged:
        return Verdict('fail', 'the step wrote a report the harness did not send', 'forged harness report',
                       'tamper')
    violations = [e for e in events if e['event'] == 'violation']
    if violations:
        v = violations[0]
        return Verdict('fail', f'{v.get("where")}: {v.get("detail")}', v.get('detail'), 'tamper')
    harness_errors = [e for e in events if e['event'] == 'harness_error']
    if harness_errors:
        return Verdict('eval_error', 'harness error: ' + harness_errors[0].get('detail', '')[-500:], None,
                       'eval_error')
    exceptions = [e for e in events if e['event'] == 'exception']
    if exceptions:
        return _exception(exceptions[0])
    completed = [e for e in events if e['event'] == 'completed']
    done = sum(1 for e in events if e['event'] == 'test_done')
    if completed and completed[0].get('tests') == n_tests and done == n_tests and run.returncode == 0:
        return Verdict('pass', f'all {n_tests} test cases ran to the end', None, 'pass')
    started = any(e['event'] == 'started' for e in events)
    sig = _signal_of(run.returncode) if run.returncode is not None and run.returncode < 0 else None
    why = f'killed by {sig.name if sig else -run.returncode}' if run.returncode is not None and run.returncode < 0 \
        else f'exited with code {run.returncode}'
    where = f'after {done} of {n_tests} test cases' if started else 'before the program started'
    inside = position(events, n_tests)
    message = f'the process {why} {where}' + (f' ({inside})' if inside else '')
    if run.returncode == 0:          # left on its own, before the tests were done
        return Verdict('fail', message, 'exited with code 0 before the tests finished', 'tamper')
    if sig in _LIMIT_SIGNALS:
        return Verdict('fail', message, None, 'resource_limit', sig.name)
    return Verdict('fail', message, None, 'exception', sig.name if sig else None)


def record_for(job, run) -> StepRecord:
    """The StepRecord of a StepJob's StepRun: its verdict, and why it failed if it did."""
    n_tests = len(job.tests)
    verdict = decide(run, n_tests)
    facts = step_facts(run, n_tests, verdict.status, decided_part(run.events))
    if verdict.status == 'timeout' and run.stack:
        sources = {'program.py': job.program, **{f'test_case_{i + 1}': t for i, t in enumerate(job.tests)}}
        facts['timeout_stack'] = hung_stack(run.stack, sources)
    told = phrase(facts.get('comparison')) or hung_phrase(facts.get('timeout_stack'))
    joint = '; compared ' if facts.get('comparison') else '; '
    return StepRecord(job.step_id, verdict.status, run.returncode, run.duration_s, run.stdout, run.stderr,
                      verdict.message + (joint + told if told else ''), verdict.violation,
                      category=verdict.category, error_type=verdict.error_type,
                      targets_digest=run.targets_digest or None, **{k: v for k, v in facts.items() if v is not None})
