"""Why a step failed, in a word: one hand-written answer per category."""
import pytest

from helpers import gold_predictions, tiny_dataset
from opencompass_scicode.evaluation import SciCodeEvaluator
from opencompass_scicode.evaluation.regenerate import ensure_targets
from opencompass_scicode.results import CATEGORIES

HEADER = 'def add(a, b):\n    """Sum."""\n'
ANSWERS = {
    'pass': (HEADER + '    s = a + b\n    return s\n', None),
    'syntax_error': (HEADER + '    return (a +\n', 'SyntaxError'),
    'name_error': (HEADER + '    return helper(a, b)\n', 'NameError: helper'),
    'import_error': ("__import__('no_such_module_for_scicode')\n" + HEADER + '    return a + b\n',
                     'ModuleNotFoundError'),
    'wrong_value': (HEADER + '    return a - b\n', 'AssertionError'),
    'exception': (HEADER + '    return [][1]\n', 'IndexError'),
    'resource_limit': ('_hog = bytearray(3 * 1024 ** 3)\n' + HEADER + '    return a + b\n', 'MemoryError'),
    'tamper': ('import numpy\nnumpy.allclose = lambda *a, **k: True\n' + HEADER + '    return 0\n', None),
    'timeout': ('import time\ntime.sleep(30)\n' + HEADER + '    return a + b\n', None),
}


@pytest.fixture(scope='module')
def scored(tmp_path_factory):
    from helpers import TINY_PROBLEMS, make_data_dir
    ds = tiny_dataset(make_data_dir(tmp_path_factory.mktemp('data'), TINY_PROBLEMS))
    targets = ensure_targets(ds)
    out = {}
    for category, (code, _) in ANSWERS.items():
        preds = gold_predictions(ds)
        preds['900.1']['code'] = code
        result = SciCodeEvaluator(timeout=3, memory_limit_mb=1024).evaluate(ds, preds, targets)
        out[category] = result['problems'][0]['steps'][0], result
    preds = gold_predictions(ds)
    preds['900.1'] = {'step_id': '900.1', 'code': '', 'program': None, 'error': None}
    preds['900.2'] = dict(preds['900.2'], truncated=True)
    preds['901.1'] = {'step_id': '901.1', 'code': None, 'program': None, 'error': 'gave up after 3 attempts'}
    out['no_code'] = SciCodeEvaluator(timeout=3).evaluate(ds, preds, targets)
    return out


@pytest.mark.parametrize('category', ANSWERS)
def test_each_answer_gets_its_category(scored, category):
    record, _ = scored[category]
    assert record['category'] == category, record
    assert record.get('error_type') == ANSWERS[category][1] or (
        category in ('pass', 'tamper', 'timeout') and ANSWERS[category][1] is None), record
    assert record['status'] == {'pass': 'pass', 'timeout': 'timeout'}.get(category, 'fail')


def test_answers_without_code_and_cut_off_ones(scored):
    result = scored['no_code']
    steps = {s['step_id']: s for p in result['problems'] for s in p['steps']}
    assert (steps['900.1']['category'], steps['900.2']['category'], steps['901.1']['category']) == (
        'no_code', 'truncated', 'no_code')
    assert result['categories'] == {'no_code': 2, 'truncated': 1}


def test_results_count_the_categories_of_all_scored_steps(scored):
    _, result = scored['wrong_value']
    assert result['categories'] == {'wrong_value': 2, 'pass': 1}     # 900.2 builds on the wrong add
    assert set(result['categories']) <= set(CATEGORIES)
