from opencompass_scicode.datasets.scicode import Problem, Step
from opencompass_scicode.evaluation.metrics import score
from opencompass_scicode.results import StepRecord


def _step(sid, index):
    return Step(step_id=sid, index=index, description='', background='', function_header='def f():',
                return_line='', test_cases=('pass',))


def _problem(pid, n):
    return Problem(problem_id=pid, name='', dependencies='',
                   steps=tuple(_step(f'{pid}.{i}', i) for i in range(1, n + 1)))


def rec(sid, status):
    return StepRecord(sid, status)


def test_prefilled_step_left_out_of_both_sides():
    p13 = _problem('13', 7)         # 13.6 is prefilled
    records = {(f'13.{i}', 0): rec(f'13.{i}', 'pass') for i in (1, 2, 3, 4, 5, 7)}
    out = score([p13], records)
    assert out['subproblem_total'] == 6 and out['subproblem_correct'] == 6
    assert out['main_problem_resolved'] == 1
    statuses = [s['status'] for s in out['problems'][0]['steps']]
    assert statuses[5] == 'skipped'


def test_prefilled_step_never_counts_as_pass():
    p76 = _problem('76', 4)
    records = {('76.3', 0): rec('76.3', 'pass')}   # even if someone scored it
    out = score([p76], records)
    assert out['subproblem_correct'] == 0 and out['subproblem_total'] == 3


def test_missing_steps_count_as_failed_in_the_full_denominator():
    problems = [_problem('1', 2), _problem('2', 3)]
    records = {('1.1', 0): rec('1.1', 'pass'), ('1.2', 0): rec('1.2', 'pass'), ('2.1', 0): rec('2.1', 'pass')}
    out = score(problems, records)
    assert out['subproblem_total'] == 5 and out['subproblem_correct'] == 3
    assert out['main_problem_total'] == 2 and out['main_problem_resolved'] == 1
    assert out['main_problem_resolve_rate'] == 50.0 and out['subproblem'] == 60.0
    missing = out['problems'][1]['steps'][1]
    assert missing['status'] == 'parse_error'


def test_non_pass_statuses_fail_the_problem():
    for status in ('fail', 'timeout', 'parse_error', 'eval_error'):
        out = score([_problem('5', 1)], {('5.1', 0): rec('5.1', status)})
        assert out['main_problem_resolved'] == 0 and out['subproblem_correct'] == 0


def test_official_denominators_of_the_real_splits(official_data):
    from opencompass_scicode.datasets import SciCodeDataset
    for split, problems, steps in (('validation', 15, 50), ('test', 65, 288), ('all', 80, 338)):
        ds = SciCodeDataset(path=str(official_data), split=split)
        out = score(ds.problems, {})
        assert (out['main_problem_total'], out['subproblem_total']) == (problems, steps)


def test_step_record_keeps_the_results_file_layout_and_refuses_unknown_statuses():
    import pytest
    record = StepRecord('1.1', 'fail', 1, 0.5, 'out', 'err', 'raised ValueError')
    assert list(record.to_dict()) == ['step_id', 'status', 'returncode', 'duration_s', 'stdout', 'stderr',
                                      'message']
    tampered = StepRecord('1.1', 'fail', violation='numpy.allclose was rebound')
    assert tampered.to_dict()['violation'] == 'numpy.allclose was rebound'
    assert StepRecord.from_dict(record.to_dict(), shared=True) == StepRecord(
        '1.1', 'fail', 1, 0.5, 'out', 'err', 'raised ValueError', shared=True)
    with pytest.raises(ValueError, match='passed'):
        StepRecord('1.1', 'passed')


def _problems(solved_steps):
    """Results-file problems: one (passed, scored) pair per problem."""
    return [{'problem_id': str(i), 'problem_correct': c == t, 'total_correct': c, 'total_steps': t}
            for i, (c, t) in enumerate(solved_steps)]


def test_all_pass_gives_an_interval_ending_at_100():
    from opencompass_scicode.results.stats import intervals
    out = intervals(_problems([(3, 3)] * 15))
    assert out == {'main_problem_resolve_rate_ci95': [100.0, 100.0], 'subproblem_ci95': [100.0, 100.0]}


def test_a_mixed_case_has_the_width_of_a_binomial_interval_and_is_seeded():
    from opencompass_scicode.results.stats import intervals
    problems = _problems([(1, 1)] * 5 + [(0, 1)] * 10)          # 5 of 15 solved: 33.3%
    out = intervals(problems)
    low, high = out['main_problem_resolve_rate_ci95']
    assert low < 100 / 3 < high
    normal_width = 2 * 1.96 * (1 / 3 * 2 / 3 / 15) ** 0.5 * 100   # 47.7 points
    assert abs((high - low) - normal_width) < 8
    assert intervals(problems) == out                            # the same numbers every time
    # clustered: steps of one problem move together, so the interval is wider than per step
    clustered = intervals(_problems([(4, 4)] * 5 + [(0, 4)] * 10))['subproblem_ci95']
    assert clustered[1] - clustered[0] > 40


def test_paired_difference_resamples_problems_together():
    from opencompass_scicode.results.stats import paired_difference
    base = _problems([(0, 2)] * 10)
    better = _problems([(2, 2)] * 5 + [(0, 2)] * 5)
    diff = paired_difference(base, better)
    assert diff['problems'] == 10 and diff['main'][0] == 50.0 and diff['subproblem'][0] == 50.0
    low, high = diff['main'][1]
    assert 0 < low < 50 < high <= 100
    same = paired_difference(base, base)
    assert same['main'] == (0.0, [0.0, 0.0])
    assert paired_difference(base, _problems([])) is None


def test_scores_without_known_defects_sit_beside_the_official_ones():
    from opencompass_scicode.results.defects import excluding_known_defects, known_defects
    listed, source = known_defects()
    assert {'44.3', '47.4', '70.8', '78.3'} <= listed and len(listed) == 4 + 71
    assert source['commit'] and [entry['split'] for entry in source['lists']] == ['validation', 'test']
    problems = [_problem('44', 3), _problem('1', 1), _problem('29', 3)]
    records = {(sid, 0): rec(sid, status) for sid, status in (
        ('44.1', 'pass'), ('44.2', 'pass'), ('44.3', 'fail'), ('1.1', 'pass'), ('29.1', 'pass'),
        ('29.2', 'fail'), ('29.3', 'pass'))}
    out = score(problems, records)
    assert (out['main_problem_resolved'], out['subproblem_correct']) == (1, 5)   # official: unchanged
    clean = out['excluding_known_defects']
    assert clean['steps_excluded'] == 1
    assert (clean['subproblem_correct'], clean['subproblem_total']) == (5, 6)    # 44.3 left out
    assert (clean['main_problem_resolved'], clean['main_problem_total']) == (1, 2)   # problem 44 left out
    assert clean['source']['source'].startswith('SciCode-Verified')
    assert excluding_known_defects([])['main_problem_total'] == 0


def test_pass_at_k_is_the_unbiased_estimator():
    from opencompass_scicode.evaluation.metrics import pass_at_k
    assert pass_at_k(5, 2, 1) == 1 - 3 / 5
    assert pass_at_k(5, 2, 2) == 1 - 3 / 10          # 1 - C(3,2)/C(5,2)
    assert pass_at_k(5, 2, 4) == 1.0 and pass_at_k(5, 0, 3) == 0.0


def test_samples_give_one_entry_per_problem_and_sample_and_pass_at_k():
    a, b = _problem('1', 2), _problem('2', 1)
    records = {('1.1', 0): rec('1.1', 'pass'), ('1.2', 0): rec('1.2', 'pass'),      # 1 solved in sample 0
               ('1.1', 1): rec('1.1', 'pass'), ('1.2', 1): rec('1.2', 'fail'),
               ('2.1', 0): rec('2.1', 'pass'), ('2.1', 1): rec('2.1', 'pass')}      # 2 solved in both
    out = score([a, b], records, n=2, ks=[2, 7])
    assert [(p['problem_id'], p['sample'], p['problem_correct']) for p in out['problems']] == [
        ('1', 0, True), ('1', 1, False), ('2', 0, True), ('2', 1, True)]
    assert all(step['sample'] == p['sample'] for p in out['problems'] for step in p['steps'])
    assert (out['main_problem_resolved'], out['main_problem_total']) == (3, 4)      # a mean over samples
    assert out['main_problem_resolve_rate'] == 75.0 and out['samples'] == 2
    # main: problem 1 has c=1 of n=2, problem 2 c=2; steps: 1.1 2/2, 1.2 1/2, 2.1 2/2
    assert out['pass_at_k'] == {'main': {'1': 75.0, '2': 100.0},
                                'subproblem': {'1': round(100 * (1 + 0.5 + 1) / 3, 4), '2': 100.0}}
    single = score([a], {('1.1', 0): rec('1.1', 'pass'), ('1.2', 0): rec('1.2', 'pass')})
    assert 'pass_at_k' not in single and 'sample' not in single['problems'][0]       # n = 1: as always
    assert 'sample' not in single['problems'][0]['steps'][0]
