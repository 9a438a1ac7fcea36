"""A test that skips because a real part is missing fails under CI=true, and only there."""
import os
import subprocess
import sys
from pathlib import Path

import ci_skips

PLUGIN_DIR = Path(ci_skips.__file__).resolve().parent        # where ci_skips.py is


def run_pytest(tmp_path, ci):
    (tmp_path / 'test_parts.py').write_text(
        'import pytest\n'
        'def test_needs_a_part():\n'
        '    pytest.skip("no chromium on this machine")\n'
        '@pytest.mark.xfail(reason="known")\n'
        'def test_known_bug():\n'
        '    assert False\n'
        'def test_plain():\n'
        '    assert True\n')
    env = {k: v for k, v in os.environ.items() if k != 'CI'}
    if ci:
        env['CI'] = 'true'
    env['PYTHONPATH'] = os.pathsep.join([str(PLUGIN_DIR), env.get('PYTHONPATH', '')])
    return subprocess.run([sys.executable, '-m', 'pytest', '-p', 'ci_skips', '-q', '-rA', '-p', 'no:cacheprovider',
                           str(tmp_path / 'test_parts.py')], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)


def test_a_skip_fails_under_ci_with_its_reason(tmp_path):
    proc = run_pytest(tmp_path, ci=True)
    assert proc.returncode == 1, proc.stdout
    assert 'skipped under CI=true, where this test must run: no chromium on this machine' in proc.stdout
    assert '1 failed, 1 passed, 1 xfailed' in proc.stdout


def test_locally_a_skip_stays_a_skip(tmp_path):
    proc = run_pytest(tmp_path, ci=False)
    assert proc.returncode == 0, proc.stdout
    assert '1 passed, 1 skipped, 1 xfailed' in proc.stdout
