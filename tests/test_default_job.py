"""README command 1: the default offline job scores the reference model 15/15 and 50/50."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_default_config_reference_model_full_marks(tmp_path, official_data):
    proc = subprocess.run([sys.executable, 'run.py', 'configs/eval_scicode.py', '-w', str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.count('100.0 (15/15)') == 2 and proc.stdout.count('100.0 (50/50)') == 2
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    for name in ('scicode_validation', 'scicode_validation_with_background'):
        res = json.loads((run_dir / 'results' / 'reference' / f'{name}.json').read_text())
        assert res['subproblem_correct'] == 50 and res['main_problem_resolved'] == 15
