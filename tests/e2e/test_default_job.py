"""README command 1: the default offline job scores the reference model 15/15 and 50/50, under the
official protocol."""
import re

import pytest

from helpers import only_run, results, run_cli


@pytest.mark.slow
def test_default_config_reference_model_full_marks(tmp_path, official_data):
    proc = run_cli(['configs/eval_scicode.py', '-w', tmp_path], timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.count('100.0 (15/15)') == 2 and proc.stdout.count('100.0 (50/50)') == 2
    assert re.search(r'^reference +regenerated +official +100\.0 \(15/15\)', proc.stdout, re.M)
    assert re.search(r'^protocol: official \(fingerprint [0-9a-f]{8}, [0-9a-f]{8}; scored with python ', proc.stdout,
                     re.M)
    run_dir = only_run(tmp_path)
    for name in ('scicode_validation', 'scicode_validation_with_background'):
        res = results(run_dir, 'reference', name)
        assert res['subproblem_correct'] == 50 and res['main_problem_resolved'] == 15
        assert res['protocol']['name'] == 'official' and res['protocol']['overrides'] == {}
