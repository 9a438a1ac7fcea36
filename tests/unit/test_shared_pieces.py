"""Pieces written once and used by several parts: the `not run` status of a task whose
dependencies stopped, the "did you mean" hint of a misspelt name, and the environment
variable through which the runner tells evaluation tasks how many of them run at once."""
import pytest

from opencompass_scicode.errors import close_matches, did_you_mean
from opencompass_scicode.launch.execute import run_stage
from opencompass_scicode.runners.base import BaseRunner
from opencompass_scicode.tasks.contract import TaskSpec, TaskStatus, status_of


def _spec(name, depends_on=()):
    return TaskSpec(name=name, stage='eval', command=['python', '-m', 'nowhere'], config_path='-',
                    log_path=f'/tmp/{name}.log', progress_path=f'/tmp/{name}.json',
                    depends_on=list(depends_on), labels={'model': 'm', 'dataset': 'd'})


# ----------------------------------------------------------------- the `not run` status

def test_a_task_behind_stopped_ones_is_not_run_and_says_which():
    status = TaskStatus.not_run(_spec('eval/m/d', ['infer/m', 'targets']), ['infer/m', 'targets'])
    assert (status.name, status.state, status.duration_s, status.log_path) == \
        ('eval/m/d', 'not run', 0.0, '/tmp/eval/m/d.log')
    assert status.note == 'infer/m, targets did not finish'
    assert status.labels == {'model': 'm', 'dataset': 'd', 'stage': 'eval'}
    assert status.stopped_others and not status.ok
    assert status.record()['state'] == 'not run'


def test_not_run_without_a_stopped_dependency_is_refused():
    with pytest.raises(ValueError, match='eval/m/d'):
        TaskStatus.not_run(_spec('eval/m/d'), [])


class _Runner:
    """Records what it is asked to launch; every task it runs fails."""
    def __init__(self):
        self.launched = []

    def launch(self, specs, title=''):
        self.launched.extend(s.name for s in specs)
        return [status_of(s, 1, 0.0) for s in specs]


class _RunDir:
    def save_status(self, updates):
        self.saved = updates


def test_a_stage_after_a_failed_one_marks_its_tasks_not_run():
    failed = status_of(_spec('infer/m'), 1, 2.0)
    runner, run_dir = _Runner(), _RunDir()
    statuses = run_stage(runner, run_dir, [_spec('eval/m/d', ['infer/m']), _spec('eval/x/d')], 'eval', [failed])
    assert runner.launched == ['eval/x/d']
    assert statuses[0] == TaskStatus.not_run(_spec('eval/m/d'), ['infer/m'])
    assert run_dir.saved['eval/m/d']['note'] == 'infer/m did not finish'


class _FailingRunner(BaseRunner):
    """Every task fails at once, in the launch loop or inline (--debug)."""
    poll_interval = 0.0

    def start(self, spec, parallel):
        return spec

    def poll(self, spec):
        return status_of(spec, 1, 0.0)

    def run_inline(self, spec):
        return status_of(spec, 1, 0.0)


@pytest.mark.parametrize('debug', [False, True])
def test_a_runner_does_not_start_a_task_whose_dependency_failed(debug):
    specs = [_spec('infer/m'), _spec('eval/m/d', ['infer/m'])]
    first, second = _FailingRunner(max_num_workers=2, debug=debug).launch(specs)
    assert first.state == 'failed'
    assert second == TaskStatus.not_run(specs[1], ['infer/m'])


# ----------------------------------------------------------------- did you mean

def test_did_you_mean_names_the_nearest_choice_quoted():
    assert did_you_mean('timout', ['timeout', 'max_workers']) == "did you mean 'timeout'? "
    assert close_matches('runer', ('partitioner', 'runner')) == ['runner']


def test_did_you_mean_lists_several_unquoted_when_asked():
    stems = ['scicode_gen', 'scicode_gen_085b98', 'scicode_wbg_gen_085b98', 'gpt_4o']
    hint = did_you_mean('scicode_gn', stems, n=5, cutoff=0.5, quote=False)
    assert hint.startswith('did you mean scicode_gen, ') and hint.endswith('? ') and "'" not in hint
    assert 'gpt_4o' not in hint


def test_did_you_mean_is_empty_when_nothing_is_near_or_the_name_is_not_text():
    assert did_you_mean('zzz', ['timeout', 'max_workers']) == ''
    assert did_you_mean('timeout', []) == ''
    assert did_you_mean(3, ['timeout']) == ''         # a key of another type: no hint, no crash
    assert close_matches(None, ['timeout']) == []


# ----------------------------------------------------------------- tasks side by side

def test_the_runner_and_the_evaluator_share_the_parallel_variable(monkeypatch):
    from opencompass_scicode.evaluation.evaluator import default_workers
    from opencompass_scicode.runners import local
    from opencompass_scicode.utils.parallel import PARALLEL_ENV
    assert local.PARALLEL_ENV is PARALLEL_ENV
    monkeypatch.delenv('SLURM_CPUS_PER_TASK', raising=False)
    monkeypatch.setenv(PARALLEL_ENV, '1')
    alone = default_workers()
    monkeypatch.setenv(PARALLEL_ENV, str(10 * alone))
    assert default_workers() == 1               # many tasks at once: one worker each at least
    monkeypatch.setenv(PARALLEL_ENV, 'two')
    assert default_workers() == alone           # not a number: as if alone
