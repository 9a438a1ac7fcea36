"""After a step's first failing test: what it compared, and how the remaining tests fare.

The harness calls this only once the verdict is reported (the failing test's `exception` event,
then `decided`): nothing here can change the verdict, its category or its duration, which the
worker takes from that moment (worker_watch.py). What follows is for the reader:
- `comparison`: the values the failing assert compared (asserts.py captured them as the test
  evaluated them), summarised by comparisons.py within SUMMARY_S;
- `later_test` events: the tests after the failing one, run in the same namespace as the official
  program would have run them had it gone on, within a budget (`later_tests_s`, at most the time
  the step took until its verdict), with their output discarded. A test cut by the budget, and
  the ones after it, count as not run. If the step's code rebinds what the tests compare with,
  the later tests stop there (their outcome would mean nothing).
The worker kills the process at extra_time() after the verdict, whatever this code is doing.
"""
import json
import os
import re
import signal
import time
from contextlib import contextmanager
from typing import Any, Iterator

from . import asserts, comparisons, tracebacks

SUMMARY_S = 1.0
COMPARISON_CAP = 16 * 1024          # bytes of JSON per comparison
TARGET_WORDS = re.compile(r'\btargets?\b')
INNER_CAP = 3


def extra_time(elapsed, later_tests_s) -> float:
    """Seconds a step may go on after its verdict: the value summary, then the later tests."""
    return SUMMARY_S + min(max(elapsed, 0.0), later_tests_s)


class Overrun(BaseException):
    """Raised into the step's code when the time for information is up (not an Exception: code
    that catches those lets it through)."""


@contextmanager
def time_limit(seconds) -> Iterator[None]:
    """Raise Overrun in this thread once `seconds` have passed inside the block."""
    def expire(signum, frame):
        raise Overrun()
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _silence():
    """Later output goes nowhere: stdout and stderr stay those of the run up to the verdict."""
    import sys
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)


def _falsy(value):
    """True/False when the truth of a comparison's result can be told without the step's code
    (bools, numpy bools and bool arrays, None), else None."""
    import sys
    np = sys.modules.get('numpy')
    if value is None or type(value) is bool:
        return not value
    if np is not None:
        if type(value) is np.bool_:
            return not bool(value)
        if type(value) is np.ndarray and value.dtype == bool:
            return not bool(value.all())
    return None


def _state(comparison, scope):
    """'raised' (operands evaluated, no result), 'false', 'true', 'unknown', or None (not reached)."""
    seen = [scope.get(name, ...) is not ... for name, _ in comparison.sides]
    result = scope.get(comparison.result, ...)
    if comparison.form == 'value':
        return None if result is ... else {True: 'false', False: 'true'}.get(_falsy(result), 'unknown')
    if result is ...:
        return 'raised' if seen and all(seen) else None
    return {True: 'false', False: 'true'}.get(_falsy(result), 'unknown')


def _explained(comparison, scope):
    sides = [(scope[name], text, 'target' if TARGET_WORDS.search(text) else 'value')
             for name, text in comparison.sides if scope.get(name, ...) is not ...]
    options = {key: scope.get(name, ...) for key, name in comparison.options.items()}
    out = comparisons.explain(comparison.form, sides, options)
    out['expr'] = comparison.text
    return out


def explain(exc, filename, sites) -> dict[str, Any] | None:
    """The comparison of the failing assert, summarised, or None when there is none to show: the
    exception did not come from an instrumented assert, or (for errors other than a failed
    assertion) the comparison's operands were not all evaluated."""
    found = tracebacks.innermost(exc, filename)
    if not found or found[2] is None:
        return None
    line, _, frame = found
    candidates = [s for s in sites if s.line <= line <= s.end_line]
    if not candidates:
        return None
    scope = frame.f_locals
    site = candidates[-1]
    states = {i: _state(c, scope) for i, c in enumerate(site.comparisons)}
    wanted = ('false', 'unknown', 'raised') if isinstance(exc, AssertionError) else ('raised', 'false')
    failing = [i for i, s in states.items() if s in wanted]
    outer = [i for i in failing if site.comparisons[i].parent not in failing]
    if not outer:
        return None
    chosen = outer[-1]
    out = _explained(site.comparisons[chosen], scope)
    inner = [i for i, c in enumerate(site.comparisons) if c.parent == chosen and states[i] is not None]
    if inner:
        out['inner'] = [_explained(site.comparisons[i], scope) for i in inner[:INNER_CAP]]
    out['assertion'] = site.text
    return out


def bounded(comparison) -> dict[str, Any]:
    """The comparison as it may travel: at most COMPARISON_CAP bytes of JSON."""
    def size(obj):
        return len(json.dumps(obj, default=str))
    if size(comparison) <= COMPARISON_CAP:
        return comparison
    comparison = {k: v for k, v in comparison.items() if k != 'inner'}
    if size(comparison) <= COMPARISON_CAP:
        return comparison
    return {'form': str(comparison.get('form'))[:60], 'note': 'the summary of the values was too large'}


def after_failure(job, index, exc, sites, namespace, report, guard, flags) -> None:
    """Everything for information after test `index` (0-based) failed with `exc`. Returns when
    done; the caller ends the process."""
    started = job.get('started_at') or time.monotonic()
    budget = min(max(time.monotonic() - started, 0.0), float(job.get('later_tests_s', 0.0)))
    report('decided', budget_s=round(budget, 3))
    _silence()
    filename = f'test_case_{index + 1}'
    try:
        with time_limit(SUMMARY_S):
            comparison = explain(exc, filename, sites)
    except Overrun:
        comparison = {'note': f'the values could not be summarised within {SUMMARY_S:g} s'}
    except Exception as error:
        comparison = {'note': f'summarising the values failed ({type(error).__name__})'}
    if comparison:
        report('comparison', comparison=bounded(comparison))
    del exc
    asserts.forget(namespace)
    _later_tests(job, index, namespace, report, guard, flags, time.monotonic() + budget)


def _later_tests(job, index, namespace, report, guard, flags, deadline):
    tests = job['tests']
    if index + 1 >= len(tests):
        return
    if guard.violations() or flags:
        report('later_stopped', test=index + 2, why='the step had rebound what the tests compare with')
        return
    for later in range(index + 1, len(tests)):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            report('later_stopped', test=later + 1, why='the time for later tests ran out')
            return
        namespace['target'] = job['targets'][later]
        try:
            with time_limit(remaining):
                exec(compile(tests[later], f'test_case_{later + 1}', 'exec'), namespace)
            passed = True
        except Overrun:
            report('later_stopped', test=later + 1, why='the time for later tests ran out')
            return
        except SystemExit:
            report('later_stopped', test=later + 1, why='the test called exit')
            return
        except BaseException:
            passed = False
        if guard.violations() or flags:
            report('later_stopped', test=later + 1, why='the step rebound what the tests compare with')
            return
        report('later_test', test=later + 1, passed=passed)
