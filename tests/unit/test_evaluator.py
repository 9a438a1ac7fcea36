import h5py
import numpy as np
import pytest

from helpers import gold_predictions, make_data_dir, statuses, step, tiny_dataset
from opencompass_scicode.evaluation import SciCodeEvaluator
from opencompass_scicode.targets.h5format import read_step_targets, write_step_targets
from opencompass_scicode.evaluation.regenerate import ensure_targets
from opencompass_scicode.targets.locate import Targets


@pytest.fixture
def tiny(tiny_data):
    ds = tiny_dataset(tiny_data)
    targets = ensure_targets(ds)         # regenerated from the gold code
    return ds, targets


def test_regenerated_targets_hold_what_the_tests_compare(tiny):
    ds, targets = tiny
    assert targets.kind == 'regenerated'
    assert targets.step_ids == {'900.1', '900.2', '901.1'}
    t1 = read_step_targets(targets.path, '900.1', 2)
    assert t1[0] == 3 and np.array_equal(t1[1], [1, 2, 3])
    t2 = read_step_targets(targets.path, '900.2', 2)
    assert t2[0] == 8 and bool(t2[1]) is True
    (pair,) = read_step_targets(targets.path, '901.1', 1)
    assert pair == (1, 3)


def test_gold_code_passes_every_step(tiny):
    ds, targets = tiny
    result = SciCodeEvaluator(timeout=60, max_workers=2).evaluate(ds, gold_predictions(ds), targets)
    assert statuses(result) == {'900.1': 'pass', '900.2': 'pass', '901.1': 'pass'}
    assert result['main_problem_resolved'] == 2 and result['subproblem_correct'] == 3


def test_wrong_code_fails_exactly_those_steps(tiny):
    ds, targets = tiny
    preds = gold_predictions(ds, wrong={'900.2'})
    result = SciCodeEvaluator(timeout=60, max_workers=2).evaluate(ds, preds, targets)
    assert statuses(result) == {'900.1': 'pass', '900.2': 'fail', '901.1': 'pass'}
    failed = result['problems'][0]['steps'][1]
    assert 'AssertionError' in failed['stderr'] and failed['returncode'] != 0
    assert result['main_problem_resolved'] == 1 and result['subproblem_correct'] == 2


def test_a_wrong_assertion_in_a_test_is_reported_as_fail(tmp_path):
    problems = [{'problem_id': '950', 'problem_name': 'x', 'required_dependencies': 'import numpy as np',
                 'sub_steps': [step('950.1', 'Square.', 'def sq(x):', '    return y',
                                    ['assert np.allclose(sq(3) + 1, target)'],   # deliberately wrong
                                    gold='def sq(x):\n    y = x * x\n    return y')]}]
    ds = tiny_dataset(make_data_dir(tmp_path / 'd', problems))
    h5 = tmp_path / 'targets.h5'
    with h5py.File(h5, 'w') as fh:
        write_step_targets(fh, '950.1', [9])
    result = SciCodeEvaluator(timeout=60).evaluate(ds, gold_predictions(ds),
                                                   Targets('official', h5, frozenset({'950.1'})))
    assert statuses(result) == {'950.1': 'fail'}


def test_a_test_case_that_does_not_compile_fails_the_step(tmp_path):
    # The official program is one file: python refuses it and exits non-zero, a failed step.
    problems = [{'problem_id': '951', 'problem_name': 'x', 'required_dependencies': '',
                 'sub_steps': [step('951.1', 'Square.', 'def sq(x):', '    return y',
                                    ['assert sq(3) == target', 'assert sq(2 == target'],
                                    gold='def sq(x):\n    y = x * x\n    return y')]}]
    ds = tiny_dataset(make_data_dir(tmp_path / 'd', problems))
    h5 = tmp_path / 'targets.h5'
    with h5py.File(h5, 'w') as fh:
        write_step_targets(fh, '951.1', [9, 4])
    result = SciCodeEvaluator(timeout=60).evaluate(ds, gold_predictions(ds),
                                                   Targets('official', h5, frozenset({'951.1'})))
    record = result['problems'][0]['steps'][0]
    assert record['status'] == 'fail', record
    assert record['message'].startswith('test 2 raised SyntaxError') and 'line 1' in record['message']


def test_timeout_missing_prediction_error_and_missing_target(tiny):
    ds, targets = tiny
    preds = gold_predictions(ds)
    preds['900.1']['code'] = 'def add(a, b):\n    while True:\n        pass\n'
    del preds['900.2']
    preds['901.1'] = {'step_id': '901.1', 'code': None, 'program': None, 'error': 'HTTP 500'}
    result = SciCodeEvaluator(timeout=2).evaluate(ds, preds, targets)
    st = statuses(result)
    assert st == {'900.1': 'timeout', '900.2': 'parse_error', '901.1': 'parse_error'}
    # a step the targets file lacks is a harness problem, never a pass
    only = Targets('regenerated', targets.path, frozenset({'900.1', '900.2'}))
    result = SciCodeEvaluator(timeout=60).evaluate(ds, gold_predictions(ds), only)
    assert statuses(result)['901.1'] == 'eval_error'


def test_a_scored_step_without_tests_needs_no_targets_and_passes_when_its_program_runs(tmp_path):
    """SciCode-Verified's 72.6 lost its tests (a later step checks it) but stays scored: as in
    both harnesses, its program runs with no test after it, and no targets entry is needed."""
    from opencompass_scicode.targets.locate import uncovered_steps
    problems = [{'problem_id': '951', 'problem_name': 'x', 'required_dependencies': 'import numpy as np',
                 'sub_steps': [step('951.1', 'Square.', 'def sq(x):', '    return y', [],
                                    gold='def sq(x):\n    y = x * x\n    return y'),
                               step('951.2', 'Cube.', 'def cube(x):', '    return z',
                                    ['assert np.allclose(cube(2), target)'],
                                    gold='def cube(x):\n    z = sq(x) * x\n    return z')]}]
    ds = tiny_dataset(make_data_dir(tmp_path / 'd', problems))
    h5 = tmp_path / 'targets.h5'
    with h5py.File(h5, 'w') as fh:
        write_step_targets(fh, '951.2', [8])
    targets = Targets('verified', h5, frozenset({'951.2'}))
    assert uncovered_steps(ds, h5) == []
    result = SciCodeEvaluator(timeout=60).evaluate(ds, gold_predictions(ds), targets)
    assert statuses(result) == {'951.1': 'pass', '951.2': 'pass'}
    broken = gold_predictions(ds)
    broken['951.1']['code'] = 'def sq(x):\n    return x * x\nraise ValueError("broken at import")\n'
    result = SciCodeEvaluator(timeout=60).evaluate(ds, broken, targets)
    assert statuses(result)['951.1'] == 'fail'


def test_results_attach_to_the_right_step_whatever_the_completion_order(tmp_path):
    # Step k sleeps (5-k)/10 s so later steps finish first; each test checks its own identity.
    n = 5
    sub = [step(f'960.{k}', f'Step {k}.', f'def f{k}():', f'    return {k}',
                [f'import time\ntime.sleep({(n - k) / 10})\nassert f{k}() == target'],
                gold=f'def f{k}():\n    return {k}') for k in range(1, n + 1)]
    ds = tiny_dataset(make_data_dir(tmp_path / 'd', [{'problem_id': '960', 'problem_name': 'o',
                                                       'required_dependencies': '', 'sub_steps': sub}]))
    h5 = tmp_path / 't.h5'
    with h5py.File(h5, 'w') as fh:
        for k in range(1, n + 1):
            write_step_targets(fh, f'960.{k}', [k])
    preds = gold_predictions(ds, wrong={'960.2', '960.4'})
    result = SciCodeEvaluator(timeout=60, max_workers=5).evaluate(
        ds, preds, Targets('official', h5, frozenset(f'960.{k}' for k in range(1, n + 1))))
    assert statuses(result) == {'960.1': 'pass', '960.2': 'fail', '960.3': 'pass',
                                '960.4': 'fail', '960.5': 'pass'}


def test_verbatim_program_gets_the_tests_appended(tiny):
    ds, targets = tiny
    preds = {'900.1': {'step_id': '900.1', 'code': None, 'error': None,
                       'program': 'import numpy as np\ndef add(a, b):\n    return a + b\n'}}
    result = SciCodeEvaluator(timeout=60).evaluate(ds, preds, targets)
    assert statuses(result)['900.1'] == 'pass'


def test_stdout_and_stderr_are_captured_and_capped(tiny):
    ds, targets = tiny
    preds = gold_predictions(ds)
    preds['900.1']['code'] += '\nprint("x" * 100000)\nimport sys\nprint("E" * 10, file=sys.stderr)\n'
    result = SciCodeEvaluator(timeout=60, max_output_bytes=1000).evaluate(ds, preds, targets)
    rec = result['problems'][0]['steps'][0]
    assert rec['status'] == 'pass'
    assert len(rec['stdout']) < 1200 and 'bytes cut' in rec['stdout']


def test_simps_shim_in_both_program_forms(tmp_path):
    # Problems 2 and 28 import scipy.integrate.simps, gone since SciPy 1.14. The shim must work in
    # the official-style program text (target regeneration here) and inside the sandbox harness.
    problems = [{'problem_id': '970', 'problem_name': 's',
                 'required_dependencies': 'import numpy as np\nfrom scipy.integrate import simps',
                 'sub_steps': [step('970.1', 'Integrate.', 'def area(y):', '    return a',
                                    ['assert np.allclose(area(np.array([0.0, 1.0, 4.0, 9.0, 16.0])), target)'],
                                    gold='def area(y):\n    a = simps(y, x=np.arange(len(y)))\n    return a')]}]
    ds = tiny_dataset(make_data_dir(tmp_path / 'd', problems))
    targets = ensure_targets(ds)
    assert targets.report == {'970.1': 'ok'}
    assert np.isclose(read_step_targets(targets.path, '970.1', 1)[0], 64.0 / 3)   # x**2 on [0, 4]
    with_shim = SciCodeEvaluator(timeout=60).evaluate(ds, gold_predictions(ds), targets)
    assert statuses(with_shim) == {'970.1': 'pass'}
    without = SciCodeEvaluator(timeout=60, simps_shim=False).evaluate(ds, gold_predictions(ds), targets)
    assert statuses(without) == {'970.1': 'fail'}
