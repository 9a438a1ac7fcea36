"""Faults survived (issue 26): runs killed again and again, two resumes at once, a full disk, a torn
predictions line, requests that never answer. Real run.py processes against the loopback server,
real signals, a real tmpfs; the cases themselves are benchmarks/faults.py's, which prints their table."""
import sys

import pytest

from helpers import ROOT, results, statuses
from opencompass_scicode.predictions import PredictionStore

sys.path.insert(0, str(ROOT / 'benchmarks'))
import faults  # noqa: E402
import faults_disk  # noqa: E402
import faults_kill  # noqa: E402

pytestmark = pytest.mark.slow


def survived(case):
    """What every case must end with: the verdicts of an uninterrupted run, nothing lost, no step
    recorded twice with other content, each step asked once plus what each fault cut off."""
    assert case.exit_codes[-1] == 0, case.outputs[-1] if case.outputs else case.exit_codes
    assert case.verdicts_equal
    assert case.records_lost == 0
    assert not case.extra.get('twice')
    assert case.requested == case.needed + sum(case.lost_in_flight), (case.requested, case.lost_in_flight)


def test_a_run_killed_at_every_stage_ends_as_an_uninterrupted_one(official_data, server, tmp_path):
    case = faults.repeated_kills(server, tmp_path)
    assert case.faults == ['SIGKILL at 3/12 answers', 'SIGKILL at 6/12 answers', 'SIGKILL at 10/12 answers',
                           'SIGKILL at the last answer', 'SIGKILL during scoring']
    assert case.exit_codes[:5] == [-9] * 5
    survived(case)
    assert all(0 <= n <= 2 for n in case.lost_in_flight)      # at most the requests in flight (concurrency 2)
    assert statuses(results(case.run_dir, 'api', 'val'))[faults.WRONG_STEP] != 'pass'


def test_two_resumes_at_once_one_is_refused_naming_the_other_and_a_later_one_finishes(
        official_data, server, tmp_path):
    case = faults.double_resume(server, tmp_path)
    refused, holder = case.extra['refused'], case.extra['holder']
    assert case.exit_codes[1] == 2 and case.extra['holder_running']     # refused while the other works
    out, err = case.outputs[0]
    assert f'in use by another run.py (pid {holder.pid})' in err, err
    assert 'Traceback' not in out + err
    assert case.faults == ['SIGKILL at 4/12 answers', '2 x -r at once', 'SIGKILL of the working one']
    assert case.exit_codes[2] == -9              # the holder died by SIGKILL; its lock went with it
    survived(case)
    assert refused.pid != holder.pid


@pytest.fixture
def tmpfs(tmp_path):
    """A 1 MiB tmpfs, unmounted after the test (CI runs as root; locally a skip with its reason)."""
    folder = tmp_path / 'disk'
    why = faults.mount_tmpfs(folder, '1m')
    if why:
        pytest.skip(f'cannot mount a tmpfs ({why}): run as root, as CI does')
    try:
        yield folder
    finally:
        faults.unmount(folder)


def test_a_full_disk_stops_the_run_clearly_and_a_resume_asks_only_for_what_is_missing(
        official_data, server, tmp_path, tmpfs):
    case = faults.full_disk(server, tmp_path, tmpfs)
    assert case.faults and case.faults[0].startswith('disk full at')
    out, err = case.outputs[0]
    assert case.exit_codes[0] == 1, (out[-2000:], err[-2000:])
    assert 'Traceback' not in out + err
    said = [line for line in err.splitlines() if line.startswith('error:')]
    assert len(said) == 1 and 'no space left on device' in said[0] and str(tmpfs) in said[0], err[-3000:]
    assert 'failed (no space left on device)' in err         # the task's state says why
    survived(case)


def test_a_torn_last_line_is_ignored_with_a_note_and_its_step_asked_again(official_data, server, tmp_path):
    case = faults.torn_line(server, tmp_path)
    out, err = case.outputs[-1]
    note = [line for line in err.splitlines() if line.startswith('note:') and 'cut short' in line]
    assert note and 'val.jsonl' in note[0] and 'asked again' in err, err[-2000:]
    survived(case)
    assert case.requested == case.needed + 1
    # the cut line stays (for inspection), never read as a record; the step has one record again
    store = PredictionStore(case.run_dir / 'predictions' / 'api' / 'val.jsonl')
    assert [r.step_id for r in store.records()].count(case.extra['torn_step']) == 1
    assert [key for _, key in store.torn()] == [case.extra['torn_step']]


def test_requests_that_never_answer_are_bounded_by_timeout_and_retries(official_data, server, tmp_path):
    case = faults.hung_server(server, tmp_path, timeout=1.0, retries=1)
    out, err = case.outputs[0]
    assert case.exit_codes[0] == 1 and 'Traceback' not in out + err
    assert case.extra['hanging'] == 4            # 19.1 twice (timeout, one retry), in both datasets
    survived(case)


def test_a_model_server_dying_mid_run_is_restarted_and_the_run_ends_as_an_uninterrupted_one(
        official_data, server, tmp_path):
    case = faults.dying_server(server, tmp_path)
    survived(case)
    assert case.extra['restarts'] == 1
    assert case.requested == case.needed         # every step answered once: no answer paid twice
    assert case.extra['attempts'] > case.needed  # the requests it cut off were sent again


# ------------------------------------------------------------ issue 34: every point, every process
def _failures(points):
    """What a failed point shows: its numbers, its message and the end of run.py's output."""
    return '\n'.join(f'{p.how} at {p.stage}: exit {p.exit_code}, {p.stop_s} s, clean {p.clean}, left {p.left}, '
                     f'lost {p.lost}, beyond {p.beyond}, resumed {p.resumed}: {p.message}\n'
                     f'{p.extra.get("stderr", "")[-1500:]}' for p in points if not p.passed)


def test_the_disk_fills_at_sampled_points_and_each_run_ends_clearly_then_resumes(official_data, server, tmp_path):
    """A sample of benchmarks/faults_disk.py's sweep (which runs every point): a real tmpfs of three
    sizes (required under CI=true, as root), and the N-th write refused at the first write of each
    stage. Each run ends by itself within seconds, with one line naming the path and the lack of
    space, leaves no process running, and -r ends with the uninterrupted run's verdicts, asking only
    for the answers the stop lost."""
    why = faults.mount_tmpfs(tmp_path / 'can-mount', '4k')
    if why:
        pytest.skip(f'cannot mount a tmpfs ({why}): run as root, as CI does')
    faults.unmount(tmp_path / 'can-mount')
    stages = ('planning', 'task files', 'predictions', 'shared verdicts', 'results', 'report')
    points = faults_disk.sweep(server, tmp_path, sizes=[8, 64, 200], writes=faults_disk.first_of_each(stages))
    assert all(p.passed for p in points), _failures(points)
    refused = [p for p in points if p.how.startswith('write')]
    assert [p.stage for p in refused] == list(stages)               # each stage's first write refused
    assert all(p.filled for p in points)                            # every one stopped the run
    assert sum(p.lost for p in points) == sum(p.beyond for p in points)


def test_each_kind_of_process_killed_at_a_seeded_moment_costs_no_verdict(official_data, server, tmp_path):
    """A sample of benchmarks/faults_kill.py's sweep: one seeded moment for each kind of process."""
    cases = faults_kill.sweep(server, tmp_path, seeds=[0])
    failed = [c for c in cases if not c.passed or not c.killed]
    assert not failed, '\n'.join(f'{c.kind} (seed {c.seed}) at {c.stage}: killed {c.killed}, exit {c.exit_code}, '
                                 f'{c.end_s} s, clear {c.clear}, left {c.left}, lost {c.lost}, beyond {c.beyond}, '
                                 f'resumed {c.resumed}: {c.message}\n{c.extra.get("stderr", "")[-1500:]}'
                                 for c in failed)
    assert [c.kind for c in cases] == list(faults_kill.KINDS)
    # a pool's server, worker or step's child, or the model's server, dying costs no task: the run finishes
    assert all(c.finished for c in cases if c.kind in ('step pool server', 'pool worker', "step's child",
                                                       'model server'))
