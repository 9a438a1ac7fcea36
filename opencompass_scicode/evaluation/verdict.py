"""Where a step's verdict is decided."""

STATUSES = ('pass', 'fail', 'timeout', 'parse_error', 'eval_error', 'skipped')


def verdict(result):
    """Status of an executed step program from its ExecResult."""
    if result.error:
        return 'eval_error'
    if result.timed_out:
        return 'timeout'
    if result.returncode == 0:
        return 'pass'
    return 'fail'
