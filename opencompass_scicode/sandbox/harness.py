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
"""
import builtins
import json
import os
import sys
import traceback

from .guard import Guard

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


def run_step(job, report_fd):
    """Never returns: ends the process with os._exit."""
    report = _reporter(report_fd, job['nonce'])
    flags = []
    status = 1
    try:
        if job.get('preamble'):
            exec(job['preamble'], {})  # its effects on modules stay (a shim); its names do not
        namespace = {'__name__': '__main__', '__builtins__': builtins}
        # Bind the dependency names first, so the guard knows the real objects.
        try:
            exec(compile(job['dependencies'], 'dependencies', 'exec'), namespace)
        except Exception as exc:   # the program would fail on its first lines: a failed step
            traceback.print_exc()
            report('exception', where='dependencies', **_described(exc))
            return
        denied = _deny_targets(flags)
        guard = Guard(namespace, job.get('guarded_names', ()))
        report('started')
        if not _run(job['program'], 'program.py', namespace, report, 'program', guard, flags):
            return
        namespace['process_hdf5_to_tuple'] = denied
        namespace['targets'] = job['targets']
        for index, test in enumerate(job['tests']):
            namespace['target'] = job['targets'][index]
            if not _run(test, f'test_case_{index + 1}', namespace, report, f'test {index + 1}', guard, flags):
                return
            report('test_done', test=index + 1)
        report('completed', tests=len(job['tests']))
        status = 0
    except BaseException:
        traceback.print_exc()
        report('harness_error', detail=traceback.format_exc()[-2000:])
    finally:
        _flush_std()
        _exit(status)


def _described(exc):
    """What the verdict needs to know of an exception: its text, its class, a missing name."""
    fields = {'detail': f'{type(exc).__name__}: {exc}'[:500], 'error_type': type(exc).__name__}
    if isinstance(exc, NameError) and isinstance(getattr(exc, 'name', None), str):
        fields['name'] = exc.name
    return fields


def _run(source, filename, namespace, report, where, guard, flags):
    # Compiled here, inside the reporting: code that does not compile is the
    # model's fault (python refuses the official program file), not the harness's.
    try:
        exec(compile(source, filename, 'exec'), namespace)
    except SystemExit as exc:
        report('violation', where=where, detail=f'the program called exit ({exc.code!r}) instead of '
                                                f'letting the tests run to the end')
        return False
    except BaseException as exc:
        traceback.print_exc()
        problems = guard.violations() + flags
        if problems:     # the failure may come from the tampering itself: report that
            report('violation', where=where, detail='; '.join(problems))
        else:
            report('exception', where=where, **_described(exc))
        return False
    problems = guard.violations() + flags
    if problems:
        report('violation', where=where, detail='; '.join(problems))
        return False
    return True
