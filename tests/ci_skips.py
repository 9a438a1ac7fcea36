"""Under CI (`CI=true`), a skipped test is a failure: CI sets up every real part the tests need
(Slurm, Chromium, the model server, network namespaces), so a skip there means a part is
missing and the test that would have caught a bug never ran. Locally a skip stays a skip, with
its reason. Loaded by conftest.py (`pytest_plugins`)."""
import os

import pytest


def under_ci():
    return os.environ.get('CI', '').strip().lower() in ('true', '1', 'yes')


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not (report.skipped and under_ci()) or hasattr(report, 'wasxfail'):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    reason = reason.removeprefix('Skipped: ')
    report.outcome = 'failed'
    report.longrepr = f'skipped under CI=true, where this test must run: {reason}'
