"""A scoring progress line names a step that has run for over a minute: the pool says when a
worker starts a program, the eval task keeps the steps running in its progress file, and the
runner's line names the one running longest."""
import time

from rich.console import Console

from helpers import gold_predictions, tiny_dataset
from opencompass_scicode.evaluation import SciCodeEvaluator
from opencompass_scicode.evaluation.regenerate import ensure_targets
from opencompass_scicode.runners.board import TaskBoard
from opencompass_scicode.tasks.contract import TaskSpec
from opencompass_scicode.utils.progress import LONG_STEP_S, ProgressFile, long_running, read_progress



def test_the_pool_says_when_each_step_starts_before_its_verdict(tiny_data):
    ds = tiny_dataset(tiny_data)
    targets = ensure_targets(ds)
    heard = []
    records = []
    SciCodeEvaluator(timeout=60, max_workers=2).evaluate(
        ds, gold_predictions(ds), targets, on_step=lambda r: records.append((r.step_id, time.monotonic())),
        on_start=lambda sid, sample: heard.append((sid, sample, time.monotonic())))
    assert sorted(sid for sid, _, _ in heard) == ['900.1', '900.2', '901.1'] and {s for _, s, _ in heard} == {0}
    started = {sid: at for sid, _, at in heard}
    assert all(started[sid] <= at for sid, at in records)


def test_the_progress_file_keeps_the_running_steps(tmp_path):
    progress = ProgressFile(tmp_path / 'p.json', 'eval/m/d', 3)
    progress.started('10.3')
    progress.started('10.4')
    progress.finished('10.4')
    assert list(read_progress(tmp_path / 'p.json')['running']) == ['10.3']
    progress.finished('10.3')
    assert read_progress(tmp_path / 'p.json')['running'] == {}


def test_only_a_step_over_a_minute_is_named_the_longest_first():
    now = 10_000.0
    assert long_running({'running': {'1.1': now - 5}}, now) == ''
    assert long_running({'running': {}}, now) == '' and long_running(None, now) == ''
    assert long_running({'running': {'1.1': now - 5, '10.3': now - LONG_STEP_S - 1}}, now) == 'step 10.3 running 61 s'
    assert long_running({'running': {'10.3': now - 600, '70.8': now - 125}}, now) == 'step 10.3 running 10 min'
    assert long_running({'running': {'70.8': now - 119}}, now) == 'step 70.8 running 119 s'


def board_lines(tmp_path, stage, running):
    """The extra text of each line of a task board showing one running task of `stage` whose
    progress file says `running` (step -> seconds ago), and whatever it scored."""
    spec = TaskSpec(name=f'{stage}/m/d', stage=stage, command=['true'], config_path='', log_path='',
                    progress_path=str(tmp_path / f'{stage}.json'), labels={'model': 'm', 'dataset': 'd'})
    progress = ProgressFile(spec.progress_path, spec.name, 50)
    progress.state['running'] = {name: time.time() - ago for name, ago in running.items()}
    if stage == 'infer':
        progress.state['scored'] = 3
    progress.write(force=True)
    with open(tmp_path / 'screen', 'w') as screen, TaskBoard(Console(file=screen), [spec], stage) as board:
        board.show({spec.name: ''}, {})
        return [task.fields['extra'] for task in board.bar.tasks]


def test_the_boards_scoring_lines_name_it(tmp_path):
    (line,) = board_lines(tmp_path, 'eval', {'47.4': 150, '1.1': 2})
    assert line.endswith(' · step 47.4 running 2 min')
    (line,) = board_lines(tmp_path, 'eval', {'1.1': 2})
    assert 'running' not in line
    # early evaluation: the inference task's steps on the scoring line, not on the task's own
    task, scoring = board_lines(tmp_path, 'infer', {'47.4 (val)': 75})
    assert 'running' not in task and scoring.endswith(' · step 47.4 (val) running 75 s')


def test_early_evaluation_tells_the_inference_tasks_progress_too(tiny_data, tmp_path):
    """Under early evaluation the steps are scored inside the inference task: its line names them."""
    from opencompass_scicode.evaluation.eager import EagerEvaluator
    from opencompass_scicode.inference.engine import InferPart
    from opencompass_scicode.predictions import PredictionStore
    from opencompass_scicode.utils.workdir import RunDir

    class Heard(ProgressFile):
        def started(self, name):
            self.heard.append(name)
            super().started(name)

    ds = tiny_dataset(tiny_data)
    ensure_targets(ds)
    store = PredictionStore(tmp_path / 'preds.jsonl')
    for record in gold_predictions(ds).values():
        store.append(record)
    progress = Heard(tmp_path / 'p.json', 'infer/m', 3)
    progress.heard = []
    part = InferPart(ds, store, {})
    eager = EagerEvaluator(RunDir(tmp_path, 'run'), [(part, SciCodeEvaluator(timeout=60, max_workers=1))],
                           progress=progress)
    for problem in ds.problems:
        eager.submit(part, problem)
    eager.finish()
    progress.write(force=True)          # as the inference task does when it ends
    assert sorted(progress.heard) == [f'{sid} ({ds.abbr})' for sid in ('900.1', '900.2', '901.1')]
    state = read_progress(tmp_path / 'p.json')
    assert state['scored'] == 3 and state['running'] == {}


def test_a_progress_write_refused_never_stops_the_pool_thread_that_reports_a_step(tmp_path):
    """The pool's threads report starts and ends; on a full disk the write fails, the thread must
    go on (else the pool waits for it for ever)."""
    import errno
    progress = ProgressFile(tmp_path / 'p.json', 'eval/m/d', 3)

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, 'No space left on device')
    progress._write = full
    progress.started('10.3')
    progress.finished('10.3')
    assert progress.state['running'] == {}
