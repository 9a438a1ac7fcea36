"""The sweep benchmark's release-aware bound: never above what a schedule achieves, and tight where it should be."""
import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / 'benchmarks'))

from sweep_scale import issue_bound, release_bound  # noqa: E402


def best_schedule(jobs, cpus):
    """The shortest makespan of non-preemptive jobs [(release, duration)] on `cpus` identical
    CPUs, by trying every order (list scheduling over all orders finds an optimal one)."""
    best = float('inf')
    for order in itertools.permutations(jobs):
        free = [0.0] * cpus
        for release, duration in order:
            k = min(range(cpus), key=lambda i: free[i])
            free[k] = max(free[k], release) + duration
        best = min(best, max(free))
    return best


def test_a_step_cannot_start_before_its_problems_answers():
    answered = {'1': 1.0, '2': 5.0}
    # one long step answered late decides, not the work over the CPUs (12 / 2 = 6)
    assert release_bound([('1.1', 2.0), ('2.3', 10.0)], answered, 2) == 15.0
    # work released at 1 s on 2 CPUs: 1 + 40 / 2
    assert release_bound([('1.1', 10.0)] * 4, answered, 2) == 21.0


def test_it_is_a_lower_bound_of_every_small_case():
    answered = {'1': 0.0, '2': 2.0, '3': 7.0}
    cases = [[('1.1', 3.0), ('2.1', 4.0), ('3.1', 1.0), ('1.2', 5.0)],
             [('3.1', 6.0), ('3.2', 6.0), ('1.1', 1.0)],
             [('2.1', 9.0), ('2.2', 1.0), ('1.1', 1.0), ('1.2', 1.0), ('3.1', 2.0)]]
    for steps in cases:
        jobs = [(answered[sid.split('.')[0]], t) for sid, t in steps]
        for cpus in (1, 2):
            assert release_bound(steps, answered, cpus) <= best_schedule(jobs, cpus) + 1e-9
    # and tight where the answers decide: 2 steps of 6 s answered at 7 s end at 13 s at best
    assert release_bound(cases[1], answered, 2) == best_schedule([(7.0, 6.0), (7.0, 6.0), (0.0, 1.0)], 2) == 13.0


def test_issue_38s_bound_takes_the_worst_problem_or_the_work_over_the_cpus():
    answered = {'1': 1.0, '2': 5.0}
    # problem 2's answers then its longest step; problem 1's chain alone is less
    assert issue_bound([('1.1', 2.0), ('2.3', 10.0), ('2.1', 3.0)], answered, 2) == 15.0
    # 40 s of steps on 2 CPUs
    assert issue_bound([('1.1', 10.0)] * 4, answered, 2) == 20.0
    # a problem without scored programs still counts its chain
    assert issue_bound([('1.1', 1.0)], {'1': 1.0, '2': 9.0}, 2) == 9.0
    # weaker than the release-aware bound, so below every schedule too
    for steps in ([('1.1', 3.0), ('2.1', 4.0), ('1.2', 5.0)], [('2.1', 6.0), ('2.2', 6.0), ('1.1', 1.0)]):
        assert issue_bound(steps, answered, 2) <= release_bound(steps, answered, 2)
