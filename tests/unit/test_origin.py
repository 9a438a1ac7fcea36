"""Inherited or own, and the forensics of the issue's planted bugs, on real validation problems.

Problems 10 and 70 with the gold code except three planted bugs: 10.2 (get_lattice_coords, used by
later steps of problem 10), 10.7 (select_big_weights: the weights 1% off, a tuple compared with
cmp_tuple_or_list) and 70.6 (psi_m: a list compared with cmp_tuple_or_list), and a stub for 10.11.
The later steps that call the wrong 10.2 or 70.6 say their failure is inherited from it; the
three and the stub say theirs is their own. Then the option's edges on the small hand-made
problems: off, on without gold code, and a user's reference file for a split without it.
"""
import json

import pytest

from helpers import TINY_PROBLEMS, gold_predictions, make_data_dir, statuses, tiny_dataset
from opencompass_scicode.datasets import SciCodeDataset
from opencompass_scicode.errors import ConfigError
from opencompass_scicode.evaluation import SciCodeEvaluator
from opencompass_scicode.evaluation.regenerate import ensure_targets

BUGS = {'10.2': ('xyz @ latvec', '(xyz + 1) @ latvec'),
        '10.7': ('gweights = gweights_all[mask_weight]', 'gweights = gweights_all[mask_weight] * 1.01'),
        '70.6': ('2.0*cmath.sqrt(h2)', '2.01*cmath.sqrt(h2)')}
STUBBED = {'10.11'}     # its gold code takes 10-20 s: a stub fails at once, on any earlier code


def _planted(step, code):
    if step.step_id in STUBBED:
        return step.function_header + '\n    return 0.0'
    if step.step_id in BUGS:
        before, after = BUGS[step.step_id]
        assert before in code, step.step_id
        return code.replace(before, after)
    return code


CHECKED_AS_IT_IS = {'kind': 'own', 'checked': "the earlier steps' code is the gold code already"}


@pytest.fixture(scope='module')
def planted(official_data):
    ds = SciCodeDataset(path=str(official_data), split='validation', sample_ids=['10', '70'])
    result = SciCodeEvaluator(timeout=120, max_workers=2).evaluate(ds, gold_predictions(ds, edit=_planted),
                                                                   ensure_targets(ds))
    return {s['step_id']: s for p in result['problems'] for s in p['steps']}, result


def test_a_wrong_earlier_function_makes_later_steps_say_they_inherit_it(planted):
    steps, result = planted
    failed = {sid for sid, s in steps.items() if s['status'] != 'pass'}
    assert failed == {'10.2', '10.4', '10.5', '10.7', '10.8', '10.11', '70.6', '70.7', '70.8'}
    origins = {sid: steps[sid]['origin'] for sid in sorted(failed)}
    assert origins == {
        '10.2': CHECKED_AS_IT_IS,
        '10.4': {'kind': 'inherited', 'from_step': '10.2'}, '10.5': {'kind': 'inherited', 'from_step': '10.2'},
        '10.7': {'kind': 'own', 'with_gold_earlier': 'wrong_value'},
        '10.8': {'kind': 'inherited', 'from_step': '10.2'}, '10.11': {'kind': 'own', 'with_gold_earlier': 'wrong_value'},
        '70.6': CHECKED_AS_IT_IS,
        '70.7': {'kind': 'inherited', 'from_step': '70.6'}, '70.8': {'kind': 'inherited', 'from_step': '70.6'}}
    assert 'inherited' not in steps['10.5']['message']       # the verdict's message stays as it was
    assert all('origin' not in s for s in steps.values() if s['status'] == 'pass')
    # 10.2 and 70.6 build on the gold code already: their own bugs need no rerun, so the cost is
    # one run per failed step that builds on a wrong one
    assert result['origins'] == {'inherited': 5, 'own': 4, 'reruns': 7, 'rerun_s': result['origins']['rerun_s']}
    assert result['origins']['rerun_s'] > 0


def test_the_planted_bugs_in_nested_comparisons_give_a_path_and_a_largest_difference(planted):
    steps, _ = planted
    weights = steps['10.7']['comparison']['difference']     # (gpoints, gweights): the weights 1% off
    assert weights['path'] == '[1]' and weights['max_abs_diff'] == pytest.approx(0.00143, rel=0.01)
    assert weights['first_difference']['outside_tolerance'] == weights['first_difference']['elements']
    psi = steps['70.6']['comparison']['difference']         # [h2, h3, psi_list]: the psi list 0.5% off
    assert psi['path'] == '[2]' and psi['max_abs_diff'] == pytest.approx(1.58e-06, rel=0.01)
    assert "compared at [2]: 3/3 elements outside the tolerance, first at [0] " in steps['70.6']['message']


def test_the_check_is_an_option_and_never_changes_a_verdict(tiny_data):
    ds = tiny_dataset(tiny_data)
    targets = ensure_targets(ds)
    wrong = gold_predictions(ds, wrong={'900.1'})
    on = SciCodeEvaluator(timeout=60, max_workers=2).evaluate(ds, wrong, targets)
    off = SciCodeEvaluator(timeout=60, max_workers=2, inherited_check=False).evaluate(ds, wrong, targets)
    assert statuses(on) == statuses(off) == {'900.1': 'fail', '900.2': 'fail', '901.1': 'pass'}
    steps = {s['step_id']: s for p in on['problems'] for s in p['steps']}
    assert steps['900.2']['origin'] == {'kind': 'inherited', 'from_step': '900.1'}
    assert steps['900.1']['origin'] == {'kind': 'own', 'checked': "no earlier step of the model's"}
    assert not [s for p in off['problems'] for s in p['steps'] if 'origin' in s] and 'origins' not in off
    # a step with a bug of its own, on earlier code that is wrong too: its own
    both = SciCodeEvaluator(timeout=60, max_workers=2).evaluate(ds, gold_predictions(ds, wrong={'900.1', '900.2'}),
                                                               targets)
    steps = {s['step_id']: s for p in both['problems'] for s in p['steps']}
    assert steps['900.2']['origin'] == {'kind': 'own', 'with_gold_earlier': 'wrong_value'}


def test_without_gold_code_a_reference_file_gives_it_and_true_asks_for_it(tiny_data, tmp_path):
    targets = ensure_targets(tiny_dataset(tiny_data))
    wrong = gold_predictions(tiny_dataset(tiny_data), wrong={'900.1'})
    # the same problems as the test split has them: no gold code
    ds = tiny_dataset(make_data_dir(tmp_path / 'no_gold', [
        {**p, 'sub_steps': [{**s, 'ground_truth_code': None} for s in p['sub_steps']]} for p in TINY_PROBLEMS]))
    plain = SciCodeEvaluator(timeout=60, max_workers=2).evaluate(ds, wrong, targets)
    assert 'origins' not in plain           # nothing to check against: off, quietly
    with pytest.raises(ConfigError, match='inherited_check=True needs gold code'):
        SciCodeEvaluator(timeout=60, max_workers=2, inherited_check=True).evaluate(ds, wrong, targets)
    reference = tmp_path / 'reference.json'
    reference.write_text(json.dumps({'900.1': 'import numpy as np\ndef add(a, b):\n    return a + b\n'}))
    result = SciCodeEvaluator(timeout=60, max_workers=2, reference_code=str(reference)).evaluate(ds, wrong, targets)
    steps = {s['step_id']: s for p in result['problems'] for s in p['steps']}
    assert steps['900.2']['origin'] == {'kind': 'inherited', 'from_step': '900.1'}
    for bad, says in (('{"900.1": 3}', 'not a JSON object of step ids to code'), ('[', 'is no JSON')):
        reference.write_text(bad)
        with pytest.raises(ConfigError, match=says):
            SciCodeEvaluator(reference_code=str(reference))
    with pytest.raises(ConfigError, match='cannot read the reference code file'):
        SciCodeEvaluator(reference_code=str(tmp_path / 'missing.json'))
