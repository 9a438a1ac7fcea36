"""Why a step failed, shown: the failing test, its line, the values it compared, the later tests.

One hand-written failing program per comparison form the SciCode tests use, each checked for the
failing test, the assertion line and what the comparison held; then the later tests run for
information, values whose repr misbehaves, and the verdicts with forensics off.
"""
import json

import h5py
import numpy as np
import pytest

from helpers import make_data_dir, step, tiny_dataset
from opencompass_scicode.evaluation import SciCodeEvaluator
from opencompass_scicode.sandbox import comparisons, values
from opencompass_scicode.sandbox.asserts import PREFIX, forget, instrument
from opencompass_scicode.targets.h5format import write_step_targets
from opencompass_scicode.targets.locate import Targets

DEPS = 'import numpy as np\nfrom scicode.compare.cmp import cmp_tuple_or_list, are_dicts_close'

# step id -> (the model's program, tests, targets)
CASES = {
    'allclose': ('def f(x):\n    return np.array([1.0, 2.0, 3.5])',
                 ['x = 3\nassert np.allclose(f(x), target)'], [np.array([1.0, 2.0, 3.0])]),
    'cmp_tuple_or_list': ('def f():\n    return np.array([1.0, 2.0]), 5.1',
                          ['assert cmp_tuple_or_list(f(), target)'], [(np.array([1.0, 2.0]), 5.0)]),
    'equals': ('def f(x):\n    return x + 3', ['assert f(2) == target'], [4]),
    'isclose': ('def f(x):\n    return x + 0.002', ['assert np.isclose(f(1.0), target, atol=1e-3)'], [1.0]),
    'np.all': ('def f():\n    return np.array([1, 2, 4])', ['assert np.all(f() == target)'],
               [np.array([1, 2, 3])]),
    'and': ('def f():\n    return 1.0, 7.0',
            ['assert np.allclose(f()[0], target[0]) and np.allclose(f()[1], target[1])'], [(1.0, 2.0)]),
    'computed boolean': ('def f():\n    return -1.0', ['x = f()\nassert (x > 0) == target'], [True]),
    'shape mismatch': ('def f():\n    return np.zeros(4)', ['assert np.allclose(f(), target)'], [np.zeros(3)]),
    'nan': ('def f():\n    return np.array([1.0, np.nan, 3.0])', ['assert np.allclose(f(), target)'],
            [np.array([1.0, 2.0, 3.0])]),
    'dicts': ("def f():\n    return {'a': 1.0, 'b': 2.5}", ['assert are_dicts_close(f(), target)'],
              [{'a': 1.0, 'b': 2.0}]),
    'later tests': ('def f(x):\n    return 0 if x == 1 else x',
                    ['assert f(1) == target', 'assert f(2) == target', 'assert f(3) == target'], [1, 2, 3]),
    'a later test loops': ('def f(x):\n    while x == 2:\n        pass\n    return 0',
                           ['assert f(1) == target', 'assert f(2) == target', 'assert f(3) == target'],
                           [1, 2, 3]),
    # the loop on one line: a loop over two lines is caught on either line when its stack is taken
    'timeout in test 2': ('def settle(x):\n    while x == 2: pass\n    return x\n'
                          'def f(x):\n    return settle(x)',
                          ['assert f(1) == target', 'y = 2\nassert f(y) == target'], [1, 2]),
    'crash in test 2': ('import os, signal\ndef f(x):\n    if x == 2:\n        os.kill(os.getpid(), signal.SIGSEGV)\n'
                        '    return x', ['assert f(1) == target', 'assert f(2) == target', 'assert f(3) == target'],
                        [1, 2, 3]),
    'repr raises': ('class Odd:\n    def __repr__(self):\n        raise RuntimeError("no")\n'
                    'def f():\n    return Odd()', ['assert f() == target'], [1]),
    'repr sleeps': ('import time\nclass Slow:\n    def __repr__(self):\n        time.sleep(600)\n'
                    'def f():\n    return Slow()', ['assert f() == target'], [1]),
    'huge array': ('def f():\n    return np.zeros(10 ** 8, dtype=np.uint8)',
                   ['assert np.array_equal(f(), target)'], [3]),
    '3 of 1000': ('def f():\n    v = np.linspace(0, 1, 1000)\n    v[[17, 204, 900]] += [0.5, 2.0, -0.25]\n'
                  '    return v', ['assert np.allclose(f(), target)'], [np.linspace(0, 1, 1000)]),
    # (the targets file holds no dict within a tuple: the expected value is written in the test)
    'nested': ("def f():\n    return (1.0, [2, 3], {'energy': np.array([1.0, 2.0]), 'name': 'h'})",
               ["expected = (1.0, [2, 3], {'energy': np.array([1.0, 2.105]), 'name': 'h'})\n"
                'assert cmp_tuple_or_list(f(), expected)'], [0]),
    'ragged in a list': ('def f():\n    return [[np.zeros(2), np.zeros(3)], 1.0]',
                         ['expected = [[np.zeros(2), np.array([0.0, 0.0, 0.5])], 1.0]\n'
                          'assert cmp_tuple_or_list(f(), expected)'], [0]),
    'sparse in a list': ('import scipy.sparse\ndef f():\n    return [1, scipy.sparse.csr_matrix(np.eye(3))]',
                         ['import scipy.sparse\nassert cmp_tuple_or_list(f(), [1, scipy.sparse.csr_matrix(2 * np.eye(3))])'],
                         [0]),
    'markup': ("def f():\n    return '<script>alert(1)</script>'", ['assert f() == target'], ['ok']),
    'model raises': ('def f(x):\n    values = [1, 2]\n    return values[x]', ['assert f(5) == target'], [1]),
    'hidden names rebound': ('def f():\n    globals().update({k: True for k in list(globals()) if "seen" in k})\n'
                             '    return 0', ['assert f() == target'], [1]),
}
IDS = {name: f'990.{i + 1}' for i, name in enumerate(CASES)}


@pytest.fixture(scope='module')
def scored(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('forensics')
    steps = [step(IDS[name], name, 'def f():', '    return 0', tests, gold='def f():\n    return 0')
             for name, (_, tests, _) in CASES.items()]
    ds = tiny_dataset(make_data_dir(tmp / 'data', [{'problem_id': '990', 'problem_name': 'forms',
                                                     'required_dependencies': DEPS, 'sub_steps': steps}]))
    h5 = tmp / 'targets.h5'
    with h5py.File(h5, 'w') as fh:
        for name, (_, _, targets) in CASES.items():
            write_step_targets(fh, IDS[name], targets, as_tuple=False)
    targets = Targets('official', h5, frozenset(IDS.values()))
    preds = {IDS[name]: {'step_id': IDS[name], 'code': None, 'error': None, 'program': f'{DEPS}\n{code}\n'}
             for name, (code, _, _) in CASES.items()}

    def records(**options):
        result = SciCodeEvaluator(timeout=6, max_workers=2, **options).evaluate(ds, preds, targets)
        by_id = {s['step_id']: s for p in result['problems'] for s in p['steps']}
        return {name: by_id[sid] for name, sid in IDS.items()}, result
    return records(), records(forensics=False)


def _difference(record):
    return record['comparison']['difference']


# form -> (shape or length of each side, the largest absolute difference: of the first differing item
# or key for the official helpers)
FORMS = {'allclose': ([[3], [3]], 0.5), 'cmp_tuple_or_list': ([2, 2], 0.1), 'equals': ([None, None], 1.0),
         'isclose': ([None, None], 0.002), 'np.all': ([[3], [3]], 1.0), 'and': ([None, None], 5.0),
         'computed boolean': ([None, None], 1.0), 'shape mismatch': ([[4], [3]], None),
         'nan': ([[3], [3]], 0.0), 'dicts': ([2, 2], 0.5)}


@pytest.mark.parametrize('name', FORMS)
def test_every_comparison_form_names_its_test_line_shapes_and_largest_difference(scored, name):
    (records, _), _ = scored
    r = records[name]
    test = CASES[name][1][0].split('\n')
    assert r['failed_test'] == 1 and r['tests_total'] == 1
    assert r['assertion'] == f'test_case_1, line {len(test)}: {test[-1]}'
    shapes, largest = FORMS[name]
    sides = r['comparison']['sides']
    assert [s.get('shape', s.get('len')) for s in sides] == shapes
    assert [s['role'] for s in sides][-1] == 'target'
    difference = r['comparison'].get('difference', {})
    difference = difference.get('first_difference', difference)
    assert difference.get('max_abs_diff') == largest


def test_np_allclose_names_the_values_and_their_largest_difference(scored):
    (records, _), _ = scored
    r = records['allclose']
    assert (r['status'], r['category'], r['failed_test'], r['tests_total']) == ('fail', 'wrong_value', 1, 1)
    assert r['assertion'] == 'test_case_1, line 2: assert np.allclose(f(x), target)'
    c = r['comparison']
    assert c['form'] == 'np.allclose' and c['tolerance'] == {'rtol': 1e-05, 'atol': 1e-08}
    value, target = c['sides']
    assert (value['expr'], value['role'], value['shape'], value['dtype']) == ('f(x)', 'value', [3], 'float64')
    assert (target['role'], target['shape']) == ('target', [3])
    assert _difference(r)['max_abs_diff'] == 0.5 and _difference(r)['where'] == [2]
    assert _difference(r)['outside_tolerance'] == 1 and c['near_miss'] is False
    # the message and stderr show the line, and no frame of the harness
    assert 'assert np.allclose(f(x), target)' in r['message'] and 'max abs diff 0.5' in r['message']
    assert 'File "test_case_1", line 2' in r['stderr'] and 'harness' not in r['stderr']
    assert '    assert np.allclose(f(x), target)' in r['stderr']


def test_cmp_tuple_or_list_names_the_first_item_that_differs(scored):
    (records, _), _ = scored
    r = records['cmp_tuple_or_list']
    assert r['failed_test'] == 1 and r['comparison']['form'] == 'cmp_tuple_or_list'
    first = _difference(r)['first_difference']
    assert first['item'] == 1 and first['max_abs_diff'] == 0.1
    assert [s['type'] for s in r['comparison']['sides']] == ['tuple', 'list']   # as the h5 reader gives it


def test_equality_is_exact(scored):
    (records, _), _ = scored
    r = records['equals']
    c = r['comparison']
    assert (c['form'], c['tolerance'], 'near_miss' in c) == ('==', 'exact', False)
    assert _difference(r)['max_abs_diff'] == 1.0 and _difference(r)['elements_differ'] == 1
    assert [s['repr'] for s in c['sides']] == ['5', '4']


def test_isclose_uses_the_given_tolerance_and_tells_a_near_miss(scored):
    (records, _), _ = scored
    c = records['isclose']['comparison']
    assert c['form'] == 'np.isclose' and c['tolerance'] == {'rtol': 1e-05, 'atol': 0.001}
    assert 1 < c['difference']['tolerance_ratio'] < 10 and c['near_miss'] is True
    assert records['allclose']['comparison']['difference']['tolerance_ratio'] > 10    # and a far miss


def test_np_all_over_an_elementwise_comparison(scored):
    (records, _), _ = scored
    c = records['np.all']['comparison']
    assert c['form'] == '==' and c['expr'] == 'f() == target'
    assert c['difference']['where'] == [2] and c['difference']['max_abs_diff'] == 1.0


def test_comparisons_joined_with_and_show_the_one_that_failed(scored):
    (records, _), _ = scored
    c = records['and']['comparison']
    assert c['expr'] == 'np.allclose(f()[1], target[1])'
    assert c['difference']['max_abs_diff'] == 5.0 and [s['role'] for s in c['sides']] == ['value', 'target']


def test_an_assert_over_a_computed_boolean_shows_it_and_what_it_was_computed_from(scored):
    (records, _), _ = scored
    r = records['computed boolean']
    c = r['comparison']
    assert c['expr'] == '(x > 0) == target' and [s['repr'] for s in c['sides']] == ['False', 'True']
    (inner,) = c['inner']
    assert inner['expr'] == 'x > 0' and [s['repr'] for s in inner['sides']] == ['-1.0', '0']


def test_a_shape_mismatch_is_said_as_such(scored):
    (records, _), _ = scored
    r = records['shape mismatch']
    # np.allclose raises on shapes that do not broadcast: an exception, with the values it got
    assert (r['status'], r['category'], r['error_type']) == ('fail', 'exception', 'ValueError')
    c = r['comparison']
    assert [s['shape'] for s in c['sides']] == [[4], [3]]
    assert 'do not broadcast' in c['difference']['shape_mismatch'] and c['near_miss'] is False


def test_nan_is_counted(scored):
    (records, _), _ = scored
    c = records['nan']['comparison']
    assert c['sides'][0]['nan'] == 1 and 'nan' not in c['sides'][1]
    assert c['difference']['nan_mismatch'] == 1 and c['difference']['where'] == [1]
    assert c['near_miss'] is False


def test_are_dicts_close_names_the_key_that_differs(scored):
    (records, _), _ = scored
    first = records['dicts']['comparison']['difference']['first_difference']
    assert first['key'] == "'b'" and first['max_abs_diff'] == 0.5
    assert records['dicts']['comparison']['difference']['path'] == "['b']"


def test_later_tests_run_for_information_and_never_change_the_verdict(scored):
    (records, _), (plain, _) = scored
    r = records['later tests']
    assert (r['status'], r['category'], r['failed_test'], r['tests_passed'], r['tests_total']) == (
        'fail', 'wrong_value', 1, 2, 3)
    assert 'tests_not_run' not in r
    assert plain['later tests']['status'] == 'fail' and plain['later tests']['tests_passed'] == 0
    assert plain['later tests']['tests_not_run'] == 2


def test_a_later_test_that_does_not_end_is_cut_and_counts_as_not_run(scored):
    (records, _), _ = scored
    r = records['a later test loops']
    assert (r['status'], r['category'], r['failed_test'], r['tests_passed']) == ('fail', 'wrong_value', 1, 0)
    assert r['tests_not_run'] == 2 and 'ran out' in r['tests_note']
    assert r['duration_s'] < 6          # the verdict's duration, not the time spent on test 2


def test_a_timeout_says_which_test_it_was_in_and_where_it_hung(scored):
    (records, _), (plain, _) = scored
    r = records['timeout in test 2']
    assert (r['status'], r['failed_test'], r['tests_passed'], r['tests_total']) == ('timeout', 2, 1, 2)
    assert 'in test 2 of 2' in r['message']
    # the step's own stack just before the kill: the test's line, then the model's frames, innermost last
    assert r['timeout_stack']['frames'] == [
        {'file': 'test_case_2', 'line': 2, 'function': '<module>', 'code': 'assert f(y) == target'},
        {'file': 'program.py', 'line': 7, 'function': 'f', 'code': 'return settle(x)'},
        {'file': 'program.py', 'line': 4, 'function': 'settle', 'code': 'while x == 2: pass'}]
    assert 'inside' not in r['timeout_stack']
    assert r['message'].endswith('it was in settle, program.py line 4: while x == 2: pass')
    assert 'timeout_stack' not in plain['timeout in test 2']           # forensics off: not asked for


def test_a_hung_stack_keeps_the_steps_own_frames_and_names_the_library_it_was_in():
    from opencompass_scicode.sandbox.tracebacks import hung_stack
    text = ('  File "program.py", line 1 in written_by_the_step\n'         # before the fault handler's stack
            'Stack (most recent call first):\n'
            '  File "/usr/lib/python3/site-packages/numpy/linalg/_linalg.py", line 647 in inv\n'
            '  File "program.py", line 2 in f\n'
            '  File "test_case_1", line 1 in <module>\n'
            '  File "/x/opencompass_scicode/sandbox/harness.py", line 190 in run\n'
            '  File "program.py", line 1 in <script>forged\n'            # not the fault handler's form
            '  File "program.py", line 1 in after_it\n')
    stack = hung_stack(text, {'program.py': 'def f():\n    return np.linalg.inv(a)', 'test_case_1': 'f()'})
    assert stack == {'frames': [{'file': 'test_case_1', 'line': 1, 'function': '<module>', 'code': 'f()'},
                                {'file': 'program.py', 'line': 2, 'function': 'f',
                                 'code': 'return np.linalg.inv(a)'}],
                     'inside': 'numpy/linalg/_linalg.py, line 647, in inv'}
    # nothing of the step's own (it hung while its dependencies were imported): no stack to show
    assert hung_stack('Stack (most recent call first):\n  File "dependencies", line 1 in <module>\n', {}) is None
    assert hung_stack('', {}) is None


def test_a_crash_says_which_test_it_was_in(scored):
    (records, _), _ = scored
    r = records['crash in test 2']
    assert (r['status'], r['category'], r['failed_test'], r['tests_passed'], r['tests_not_run']) == (
        'fail', 'exception', 2, 1, 1)
    assert 'SIGSEGV' in r['message'] and 'in test 2 of 3' in r['message']


@pytest.mark.parametrize('name', ['repr raises', 'repr sleeps', 'huge array'])
def test_values_that_misbehave_get_a_placeholder_and_the_step_its_verdict(scored, name):
    (records, _), _ = scored
    r = records[name]
    assert (r['status'], r['category'], r['failed_test']) == ('fail', 'wrong_value', 1)
    assert len(json.dumps(r)) < 20000
    c = r['comparison']
    if name == 'repr raises':
        assert c['sides'][0]['repr'].startswith('<') and 'Odd' in c['sides'][0]['repr']
    elif name == 'repr sleeps':
        assert 'could not be summarised' in c['note']
    else:
        value = c['sides'][0]
        assert value['shape'] == [10 ** 8] and len(value['repr']) < 300
        assert c['difference']['elements'] == 10 ** 8
        assert c['difference']['max_abs_diff'] == 3.0


def test_a_large_array_says_how_many_elements_differ_which_and_the_worst(scored):
    (records, _), _ = scored
    r = records['3 of 1000']
    d = _difference(r)
    assert (d['elements'], d['outside_tolerance']) == (1000, 3)
    assert [e['index'] for e in d['first_differences']] == [[17], [204], [900]]
    assert d['first_differences'][1]['values'] == [values.short_repr(np.linspace(0, 1, 1000)[204] + 2.0),
                                                    values.short_repr(np.linspace(0, 1, 1000)[204])]
    assert (d['where'], d['max_abs_diff']) == ([204], 2.0)
    # the message: the difference first, whole, then the values
    told = r['message'].split('; compared ', 1)[1]
    assert told.startswith('3/1000 elements outside the tolerance, first at [17] ')
    assert '[204] ' in told and '[900] ' in told and 'max abs diff 2.0 at [204]' in told
    assert told.index('max abs diff') < told.index('f() = ')


def test_a_nested_comparison_names_the_path_of_the_first_difference_and_its_size(scored):
    (records, _), _ = scored
    d = _difference(records['nested'])
    assert (d['path'], d['max_abs_diff']) == ("[2]['energy']", 0.105)
    assert "at [2]['energy']: 1/2 elements outside the tolerance" in records['nested']['message']
    d = _difference(records['ragged in a list'])            # a list that is no array: item by item
    assert (d['path'], d['max_abs_diff']) == ('[0][1]', 0.5)
    d = _difference(records['sparse in a list'])
    assert (d['path'], d['max_abs_diff']) == ('[1]', 1.0)
    assert d['first_difference']['outside_tolerance'] == 3


def test_the_phrase_puts_the_difference_first_and_never_cuts_it():
    from opencompass_scicode.evaluation.forensics import PHRASE_CAP, difference_phrase, phrase
    long_side = {'expr': 'f(x)', 'repr': 'x' * 1000}
    difference = {'elements': 10 ** 6, 'outside_tolerance': 123456, 'max_abs_diff': 0.25, 'where': [7, 9],
                  'first_differences': [{'index': [0, i], 'values': ['1.0' * 30, '2.0']} for i in range(5)]}
    told = phrase({'sides': [long_side, long_side], 'difference': difference})
    assert told.startswith('123456/1000000 elements outside the tolerance, first at [0, 0] ')
    assert '[0, 2] ' in told and '[0, 3]' not in told and 'max abs diff 0.25 at [7, 9]' in told
    whole = difference_phrase(difference)
    assert told.startswith(whole) and len(told) <= max(PHRASE_CAP, len(whole))   # the values give way
    deep = {'first_difference': {'key': "'" + 'k' * 400 + "'", **difference}}  # longer than the cap itself
    assert phrase({'sides': [long_side], 'difference': deep}) == difference_phrase(deep)
    assert difference_phrase(deep).endswith('max abs diff 0.25 at [7, 9]')
    # with room, the values follow, cut; the largest difference names where it is (the `where` key)
    told = phrase({'sides': [long_side, long_side], 'difference': {'max_abs_diff': 0.5, 'where': [2]}})
    assert told.startswith('max abs diff 0.5 at [2]; f(x) = xxx') and len(told) == PHRASE_CAP
    assert phrase({'sides': [{'expr': 'a', 'repr': '1'}]}) == 'a = 1'      # nothing to say of a difference


def test_an_exception_names_the_models_own_line(scored):
    (records, _), _ = scored
    r = records['model raises']
    assert (r['category'], r['error_type'], r['failed_test']) == ('exception', 'IndexError', 1)
    assert r['raised_at'] == 'program.py, line 5, in f: return values[x]'
    assert r['assertion'] == 'test_case_1, line 1: assert f(5) == target'
    assert 'File "program.py", line 5, in f\n    return values[x]' in r['stderr']
    assert 'comparison' not in r            # f raised before anything was compared
    assert r['message'] == 'test 1 raised IndexError: list index out of range at ' + r['raised_at']


def test_the_step_cannot_steer_the_assertion_through_the_hidden_names(scored):
    (records, _), _ = scored
    assert records['hidden names rebound']['category'] == 'wrong_value'


def test_markup_in_a_value_stays_text_in_the_record(scored):
    (records, _), _ = scored
    assert records['markup']['comparison']['sides'][0]['repr'] == "'<script>alert(1)</script>'"


def test_forensics_off_gives_the_same_verdicts_categories_and_no_comparison(scored):
    (records, result), (plain, plain_result) = scored
    for name in CASES:
        assert (records[name]['status'], records[name]['category'], records[name].get('error_type')) == (
            plain[name]['status'], plain[name]['category'], plain[name].get('error_type')), name
        assert 'comparison' not in plain[name]
    assert result['categories'] == plain_result['categories']
    assert result['near_misses'] == {'near_misses': 1, 'failed': len(CASES), 'share': round(100 / len(CASES), 1)}


def _run_instrumented(source, namespace):
    code, sites = instrument(source, 'test_case_1')
    exec(code, namespace)
    return sites


def test_the_rewritten_test_evaluates_everything_once_and_in_order():
    calls = []

    def f(x):
        calls.append(x)
        return x
    source = ('assert np.allclose(f(1), f(2) - 1) and f(3) == 3\n'
              'assert cmp_tuple_or_list((f(4),), (4,))\nassert 0 < f(5) < f(6)\n')
    namespace = {'f': f, 'np': np, 'cmp_tuple_or_list': lambda a, b: a == b}
    sites = _run_instrumented(source, namespace)
    assert calls == [1, 2, 3, 4, 5, 6] and len(sites) == 3
    assert [c.form for c in sites[0].comparisons] == ['np.allclose', '==']
    calls.clear()
    exec(compile(source, 'test_case_1', 'exec'), {**namespace, 'f': f})   # as written: the same calls
    assert calls == [1, 2, 3, 4, 5, 6]


def test_a_failing_assert_fails_the_same_and_forget_drops_the_captures():
    namespace = {'np': np, 'target': np.array([1.0, 2.0])}
    with pytest.raises(AssertionError):
        _run_instrumented('assert np.allclose(np.array([1.0, 2.5]), target)', namespace)
    assert any(k.startswith(PREFIX) for k in namespace)
    forget(namespace)
    assert not any(k.startswith(PREFIX) for k in namespace)


def test_where_walrus_cannot_go_the_test_runs_as_written():
    # := is refused in a class body's comprehension: the plain test runs, without captures
    source = 'class C:\n    ok = [x for x in range(3) if x == 1]\nassert C.ok == [1]\n'
    namespace = {}
    code, sites = instrument(source, 'test_case_1')
    exec(code, namespace)
    assert namespace['C'].ok == [1] and [s.line for s in sites] == [3]
    with pytest.raises(SyntaxError):
        instrument('assert (1 ==', 'test_case_1')


def test_near_miss_needs_the_difference_within_ten_times_the_tolerance():
    tol = {'rtol': 0.0, 'atol': 1e-3}
    near = comparisons.explain('np.allclose', [(np.array([1.005]), 'f()', 'value'), (np.array([1.0]), 'target',
                                                                                        'target')], {'atol': 1e-3})
    far = comparisons.explain('np.allclose', [(np.array([1.02]), 'f()', 'value'), (np.array([1.0]), 'target',
                                                                                      'target')], {'atol': 1e-3})
    assert near['near_miss'] is True and far['near_miss'] is False
    assert values.arrays(np.array([1.005]), np.array([1.0]), tol)['tolerance_ratio'] == pytest.approx(5.0)


def test_a_comparison_from_the_step_process_is_made_plain_and_bounded():
    from opencompass_scicode.evaluation.forensics import _comparison
    odd = _comparison({'comparison': {'tolerance': {'rtol': float('nan')}, 'x': [float('inf')]}})
    assert odd == {'tolerance': {'rtol': 'nan'}, 'x': ['inf']}
    json.dumps(odd, allow_nan=False)
    assert _comparison({'comparison': {'repr': 'x' * 100000}}) == {'note': 'the summary of the values was too large'}
    assert _comparison({'comparison': 'not a dict'}) is None
