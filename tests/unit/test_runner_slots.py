"""Slots by what a task uses: an inference task of an API model takes no slot of the runner, so
every such task starts at once; any other task (one that starts a model server, an evaluation
task) still waits for one of max_num_workers. Real processes under LocalRunner, and the launch
loop every runner shares (SlurmRunner's too) with a runner that only records."""
import sys
from pathlib import Path

from opencompass_scicode.runners import LocalRunner, SlurmRunner
from opencompass_scicode.runners.base import BaseRunner
from opencompass_scicode.tasks.contract import TaskSpec, status_of

# Writes when it started, waits, writes when it ended.
TASK = ('import sys, time\nopen(sys.argv[1], "w").write(repr(time.time()))\ntime.sleep(float(sys.argv[3]))\n'
        'open(sys.argv[2], "w").write(repr(time.time()))\n')
API = {'api_only': True, 'shares_cpu': True}


def spec(tmp_path, name, resources, seconds=1.0, stage='infer'):
    return TaskSpec(name=name, stage=stage, config_path='-', log_path=str(tmp_path / f'{name}.log'),
                    progress_path=str(tmp_path / f'{name}.progress.json'), resources=resources,
                    command=[sys.executable, '-c', TASK, str(tmp_path / f'{name}.start'),
                             str(tmp_path / f'{name}.end'), str(seconds)])


def times(tmp_path, name):
    return float(Path(tmp_path / f'{name}.start').read_text()), float(Path(tmp_path / f'{name}.end').read_text())


def all_at_once(spans):
    """Every task started before any of them ended: they all ran at the same time."""
    return max(start for start, _ in spans) < min(end for _, end in spans)


def test_api_inference_tasks_start_at_once_and_a_server_task_waits_for_its_slot(tmp_path):
    servers = [spec(tmp_path, f'server{i}', {'shares_cpu': False}) for i in range(2)]
    apis = [spec(tmp_path, f'api{i}', API, seconds=1.5) for i in range(8)]
    # the server tasks first: the first takes the one slot, the API tasks start beside it
    statuses = LocalRunner(max_num_workers=1).launch(servers + apis)
    assert {s.state for s in statuses} == {'done'}
    spans = [times(tmp_path, f'api{i}') for i in range(8)]
    assert all_at_once(spans)
    assert max(s for s, _ in spans) - min(s for s, _ in spans) < 5
    first, second = times(tmp_path, 'server0'), times(tmp_path, 'server1')
    assert second[0] >= first[1], 'the second server task started before the first gave its slot back'
    assert min(s for s, _ in spans) < first[1]        # the API tasks did not wait for the slot


def test_the_same_tasks_holding_slots_run_one_at_a_time(tmp_path):
    # the check above, shown failing when the inference tasks hold slots (as before)
    apis = [spec(tmp_path, f'api{i}', {'shares_cpu': True}, seconds=0.3) for i in range(3)]
    assert {s.state for s in LocalRunner(max_num_workers=1).launch(apis)} == {'done'}
    spans = [times(tmp_path, f'api{i}') for i in range(3)]
    assert not all_at_once(spans)
    assert all(later[0] >= earlier[1] for earlier, later in zip(spans, spans[1:]))


class Recording(BaseRunner):
    """Starts nothing: a task ends `turns` looks after it started. Records the turn of each start."""
    poll_interval = 0.0

    def __init__(self, max_num_workers, turns=3):
        super().__init__(max_num_workers)
        self.turn, self.turns, self.started = 0, turns, {}

    def start(self, spec, parallel):
        self.started[spec.name] = (self.turn, parallel)
        return spec

    def refresh(self, handles):
        self.turn += 1

    def poll(self, spec):
        return status_of(spec, 0, 0.0) if self.turn - self.started[spec.name][0] >= self.turns else None


def test_the_launch_loop_starts_every_api_task_at_once_and_holds_the_others_to_the_slots(tmp_path):
    evals = [spec(tmp_path, f'eval{i}', {'cpus': 2}, stage='eval') for i in range(3)]
    apis = [spec(tmp_path, f'api{i}', API) for i in range(8)]
    runner = Recording(max_num_workers=2)
    runner.launch(evals + apis)
    turns = {name: turn for name, (turn, _) in runner.started.items()}
    assert {turns[f'api{i}'] for i in range(8)} == {0}
    assert (turns['eval0'], turns['eval1'], turns['eval2']) == (0, 0, 3)
    # 2 slots' worth of tasks beside the 8 that hold none run side by side
    assert {parallel for _, parallel in runner.started.values()} == {10}
    # a task waiting on others still waits for them, slot or not
    after = spec(tmp_path, 'merge', API)
    after.depends_on = ['api0']
    runner = Recording(max_num_workers=1)
    runner.launch([spec(tmp_path, 'api0', API), after])
    assert runner.started['merge'][0] == 3


def test_a_slurm_job_of_an_api_model_asks_for_one_cpu_and_shares_it():
    runner = SlurmRunner(partition='debug', cpus_per_task=4, max_num_workers=1)
    api = runner.sbatch_args(spec(Path('/tmp'), 'infer/m0', API))
    assert '--cpus-per-task=1' in api and '--oversubscribe' in api and '--mem=1G' in api
    assert not any(a.startswith('--gres') for a in api)
    other = runner.sbatch_args(spec(Path('/tmp'), 'eval/m0/val', {}, stage='eval'))
    assert '--cpus-per-task=4' in other and '--oversubscribe' not in other


def test_a_spec_takes_a_slot_unless_it_only_waits_on_an_api(tmp_path):
    assert not spec(tmp_path, 'a', API).takes_slot
    assert spec(tmp_path, 'b', {'shares_cpu': True}).takes_slot
    # a task file written before this key existed holds a slot, as it did
    assert TaskSpec.from_dict(dict(spec(tmp_path, 'c', {}).to_dict(), resources={})).takes_slot
