"""Runs one step inside its sandboxed process and reports what it saw.

Same semantics as the official test program: the program text (dependencies,
earlier steps, this step) runs as `__main__`, then each test case in order in
the same namespace with `target` set to its expected value. Differences that
only matter to code trying to cheat:
- the targets are handed in by the harness; the targets file itself is never
  reachable and `process_hdf5_to_tuple` refuses to run;
- `SystemExit` (sys.exit, exit(), raise SystemExit) is caught and reported;
- the harness reports to its parent over a private pipe, with a nonce, after
  each test and at the end, then leaves with os._exit: a process that exits
  on its own (os._exit(0), atexit hooks) never produces the final report;
- after the program and after each test a Guard checks that comparison
  functions, builtins and the dependency names were not rebound.
The parent decides the verdict from these reports (evaluation/verdict.py).

For the reader of a failed step (job['forensics'], on by default): the asserts of each test are
rewritten to keep the values they compare (asserts.py), a failure is reported with the failing
line and the model's own line, and tracebacks show source lines and no frames of ours
(tracebacks.py). Only after the verdict is reported does forensics.py summarise the values and run
the remaining tests for information.
"""
import builtins
import json
import os
import sys
import traceback
from typing import Any

from . import asserts, forensics
from .guard import Guard
from .tracebacks import LINE_CAP, Sources, innermost

_write = os.write      # bound before any untrusted code can rebind os.write
_dumps = json.dumps
_exit = os._exit


class TargetsAccessDenied(PermissionError):
    pass


def _reporter(fd, nonce):
    def report(event, **fields):
        fields.update(event=event, nonce=nonce)
        data = (_dumps(fields, default=str) + '\n').encode()
        while data:
            written = _write(fd, data)
            data = data[written:]
    return report


def _flush_std():
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except Exception:
            pass


def _deny_targets(flags):
    def process_hdf5_to_tuple(*args, **kwargs):
        flags.append('called process_hdf5_to_tuple (reading the test targets)')
        raise TargetsAccessDenied('test targets are not available to step code')
    try:
        import scicode.parse.parse as parse
        parse.process_hdf5_to_tuple = process_hdf5_to_tuple
    except ImportError:
        pass
    return process_hdf5_to_tuple


def run_step(job, report_fd) -> None:
    """Never returns: ends the process with os._exit."""
    report = _reporter(report_fd, job['nonce'])
    flags = []
    status = 1
    sources = Sources()
    try:
        if job.get('preamble'):
            exec(job['preamble'], {})  # its effects on modules stay (a shim); its names do not
        namespace = {'__name__': '__main__', '__builtins__': builtins}
        # Bind the dependency names first, so the guard knows the real objects.
        sources.add('dependencies', job['dependencies'])
        try:
            exec(compile(job['dependencies'], 'dependencies', 'exec'), namespace)
        except Exception as exc:   # the program would fail on its first lines: a failed step
            sys.stderr.write(sources.format(exc))
            report('exception', where='dependencies', **_described(exc, sources, None, ()))
            return
        denied = _deny_targets(flags)
        guard = Guard(namespace, job.get('guarded_names', ()))
        report('started')
        step = _Step(namespace, report, guard, flags, sources, job.get('forensics', False))
        if not step.run(job['program'], 'program.py', 'program')[0]:
            return
        report('program_done')
        namespace['process_hdf5_to_tuple'] = denied
        namespace['targets'] = job['targets']
        for index, test in enumerate(job['tests']):
            namespace['target'] = job['targets'][index]
            ok, failure = step.run(test, f'test_case_{index + 1}', f'test {index + 1}', test=index + 1)
            if not ok:
                if failure is not None and step.forensics:
                    forensics.after_failure(job, index, *failure, namespace, report, guard, flags)
                return
            asserts.forget(namespace)
            report('test_done', test=index + 1)
        report('completed', tests=len(job['tests']))
        status = 0
    except BaseException:
        traceback.print_exc()
        report('harness_error', detail=traceback.format_exc()[-2000:])
    finally:
        _flush_std()
        _exit(status)


def _located(exc, sources, filename, sites):
    """(the test's failing line, the model's own line) of an exception, each `file, line N: code`."""
    def where(name):
        found = innermost(exc, name)
        if not found:
            return None
        line, function, _ = found
        site = next((s for s in sites if s.line <= line <= s.end_line), None)
        code = site.text if site else sources.line(name, line)
        inside = f', in {function}' if function and function != '<module>' else ''
        return f'{name}, line {line}{inside}: {code}' if code else f'{name}, line {line}{inside}'
    return (where(filename) if filename else None), where('program.py')


def _described(exc, sources, filename, sites, test=None):
    """What the verdict needs to know of an exception (its text, its class, a missing name) and
    what its reader needs: where it failed, in the test and in the model's code."""
    assertion, raised_at = _located(exc, sources, filename, sites)
    try:
        said = str(exc)
    except Exception:    # as Python prints it when the exception's own str() fails
        said = '<exception str() failed>'
    text = f'{type(exc).__name__}: {said}' if said else type(exc).__name__
    if isinstance(exc, SyntaxError) and exc.text:
        text += f': {exc.text.strip()[:LINE_CAP]}'
    elif raised_at or assertion:
        text += f' at {raised_at or assertion}'
    fields = {'detail': text[:800], 'error_type': type(exc).__name__}
    if isinstance(exc, NameError) and isinstance(getattr(exc, 'name', None), str):
        fields['name'] = exc.name
    if test is not None:
        fields.update(test=test, assertion=assertion, raised_at=raised_at)
    elif raised_at:
        fields['raised_at'] = raised_at
    return fields


class _Step:
    """Runs the program and the tests of one step in its namespace, reporting what goes wrong."""

    def __init__(self, namespace, report, guard, flags, sources, forensics_on):
        self.namespace, self.report, self.guard, self.flags = namespace, report, guard, flags
        self.sources, self.forensics = sources, forensics_on

    def run(self, source, filename, where, test=None) -> tuple[bool, tuple[BaseException, list[Any]] | None]:
        """(True, None) when it ran clean; (False, (exception, assert sites)) after an exception
        was reported; (False, None) after a violation."""
        # Compiled here, inside the reporting: code that does not compile is the model's fault
        # (python refuses the official program file), not the harness's.
        self.sources.add(filename, source)
        sites = []
        try:
            if self.forensics and test is not None:
                code, sites = asserts.instrument(source, filename)
            else:
                code = compile(source, filename, 'exec')
            exec(code, self.namespace)
        except SystemExit as exc:
            self.report('violation', where=where, detail=f'the program called exit ({exc.code!r}) instead of '
                                                         f'letting the tests run to the end')
            return False, None
        except BaseException as exc:
            sys.stderr.write(self.sources.format(exc))
            problems = self.guard.violations() + self.flags
            if problems:     # the failure may come from the tampering itself: report that
                self.report('violation', where=where, detail='; '.join(problems))
                return False, None
            self.report('exception', where=where, **_described(exc, self.sources, filename, sites, test))
            return False, (exc, sites)
        problems = self.guard.violations() + self.flags
        if problems:
            self.report('violation', where=where, detail='; '.join(problems))
            return False, None
        return True, None
