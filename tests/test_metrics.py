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
    records = {f'13.{i}': rec(f'13.{i}', 'pass') for i in (1, 2, 3, 4, 5, 7)}
    out = score([p13], records)
    assert out['subproblem_total'] == 6 and out['subproblem_correct'] == 6
    assert out['main_problem_resolved'] == 1
    statuses = [s['status'] for s in out['problems'][0]['steps']]
    assert statuses[5] == 'skipped'


def test_prefilled_step_never_counts_as_pass():
    p76 = _problem('76', 4)
    records = {'76.3': rec('76.3', 'pass')}   # even if someone scored it
    out = score([p76], records)
    assert out['subproblem_correct'] == 0 and out['subproblem_total'] == 3


def test_missing_steps_count_as_failed_in_the_full_denominator():
    problems = [_problem('1', 2), _problem('2', 3)]
    records = {'1.1': rec('1.1', 'pass'), '1.2': rec('1.2', 'pass'), '2.1': rec('2.1', 'pass')}
    out = score(problems, records)
    assert out['subproblem_total'] == 5 and out['subproblem_correct'] == 3
    assert out['main_problem_total'] == 2 and out['main_problem_resolved'] == 1
    assert out['main_problem_resolve_rate'] == 50.0 and out['subproblem'] == 60.0
    missing = out['problems'][1]['steps'][1]
    assert missing['status'] == 'parse_error'


def test_non_pass_statuses_fail_the_problem():
    for status in ('fail', 'timeout', 'parse_error', 'eval_error'):
        out = score([_problem('5', 1)], {'5.1': rec('5.1', status)})
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
    records = {'44.1': rec('44.1', 'pass'), '44.2': rec('44.2', 'pass'), '44.3': rec('44.3', 'fail'),
               '1.1': rec('1.1', 'pass'), '29.1': rec('29.1', 'pass'), '29.2': rec('29.2', 'fail'),
               '29.3': rec('29.3', 'pass')}
    out = score(problems, records)
    assert (out['main_problem_resolved'], out['subproblem_correct']) == (1, 5)   # official: unchanged
    clean = out['excluding_known_defects']
    assert clean['steps_excluded'] == 1
    assert (clean['subproblem_correct'], clean['subproblem_total']) == (5, 6)    # 44.3 left out
    assert (clean['main_problem_resolved'], clean['main_problem_total']) == (1, 2)   # problem 44 left out
    assert clean['source']['source'].startswith('SciCode-Verified')
    assert excluding_known_defects([])['main_problem_total'] == 0
