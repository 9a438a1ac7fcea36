"""Where a step's verdict is decided.

A step passes only if the harness reported, with this run's nonce, that every
test case ran to the end, nothing it watches was tampered with, and the
process then exited 0 through the harness. Exit code 0 alone proves nothing
(a program can call os._exit(0) halfway), so it is never enough.
"""
import signal


def _signal_name(returncode):
    try:
        return signal.Signals(-returncode).name
    except (ValueError, TypeError):
        return str(-returncode)


def decide(run, n_tests):
    """(status, message, violation) for a StepRun."""
    if run.error:
        return 'eval_error', run.error, None
    if run.timed_out:
        return 'timeout', 'timed out; the step and everything it started were killed', None
    if run.process_limit_hit:
        return 'fail', 'started more processes than allowed; the step was killed', 'process flood'
    events = run.events
    forged = [e for e in events if e.get('event') in ('forged', 'garbled')]
    if forged:
        return 'fail', 'the step wrote a report the harness did not send', 'forged harness report'
    violations = [e for e in events if e['event'] == 'violation']
    if violations:
        v = violations[0]
        return 'fail', f'{v.get("where")}: {v.get("detail")}', v.get('detail')
    harness_errors = [e for e in events if e['event'] == 'harness_error']
    if harness_errors:
        return 'eval_error', 'harness error: ' + harness_errors[0].get('detail', '')[-500:], None
    exceptions = [e for e in events if e['event'] == 'exception']
    if exceptions:
        e = exceptions[0]
        return 'fail', f'{e.get("where")} raised {e.get("detail")}', None
    completed = [e for e in events if e['event'] == 'completed']
    done = sum(1 for e in events if e['event'] == 'test_done')
    if completed and completed[0].get('tests') == n_tests and done == n_tests and run.returncode == 0:
        return 'pass', f'all {n_tests} test cases ran to the end', None
    started = any(e['event'] == 'started' for e in events)
    if run.returncode is not None and run.returncode < 0:
        why = f'killed by {_signal_name(run.returncode)}'
    else:
        why = f'exited with code {run.returncode}'
    where = f'after {done} of {n_tests} test cases' if started else 'before the program started'
    violation = None
    if run.returncode == 0:
        violation = 'exited with code 0 before the tests finished'
    return 'fail', f'the process {why} {where}', violation
