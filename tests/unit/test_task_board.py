"""The progress display of a launch stays readable with many models at once: one line per model
plus one for scoring during inference; per-dataset lines only for a launch of a few tasks."""
import io
import json

from rich.console import Console

from opencompass_scicode.runners.board import PART_LINES_UP_TO, TaskBoard
from opencompass_scicode.tasks.contract import TaskSpec, status_of


def specs_with_progress(tmp_path, count, scored=0):
    specs = []
    for i in range(count):
        spec = TaskSpec(name=f'infer/m{i}', stage='infer', command=[], config_path='-',
                        log_path=str(tmp_path / f'm{i}.out'), progress_path=str(tmp_path / f'm{i}.progress.json'),
                        labels={'model': f'm{i}', 'datasets': ['val', 'val_bg']})
        progress = {'done': 10 + i, 'total': 60, 'errors': i % 2, 'started': 0,
                    'parts': {'val': {'done': 5, 'total': 30, 'errors': 0},
                              'val_bg': {'done': 5 + i, 'total': 30, 'errors': i % 2}}}
        if scored:
            progress['scored'] = scored
        (tmp_path / f'm{i}.progress.json').write_text(json.dumps(progress))
        specs.append(spec)
    return specs


def lines_shown(specs, running, ended=()):
    out = io.StringIO()
    with TaskBoard(Console(file=out, width=140), specs, 'infer') as board:
        board.show({s.name: '' for s in running}, {s.name: status_of(s, 0, 1.0) for s in ended})
    return [line for line in out.getvalue().splitlines() if line.strip()]


def test_eight_models_at_once_one_line_each_and_one_for_scoring(tmp_path):
    specs = specs_with_progress(tmp_path, 8, scored=5)
    lines = lines_shown(specs, running=specs[:6], ended=specs[6:])
    assert len(lines) == 9
    assert [line.split()[1] for line in lines[:8]] == [f'm{i}' for i in range(8)]
    assert '13/60' in lines[3] and '1 errors' in lines[3] and 'done' in lines[7]
    assert lines[8].split()[:2] == ['infer', 'scoring'] and '40/480' in lines[8] and '108 answered' in lines[8]


def test_a_few_tasks_get_a_line_per_dataset_and_no_scoring_line_before_a_step_is_scored(tmp_path):
    specs = specs_with_progress(tmp_path, 2)
    assert len(specs) <= PART_LINES_UP_TO
    lines = lines_shown(specs, running=specs)
    assert len(lines) == 2 + 2 * 2 and not any('scoring' in line for line in lines)
    assert sum(line.split()[0] == 'val_bg' for line in lines) == 2
    # the same two tasks among many: their datasets are added up in their own lines
    many = specs_with_progress(tmp_path, PART_LINES_UP_TO + 1)
    assert len(lines_shown(many, running=many)) == PART_LINES_UP_TO + 1


def test_a_task_not_started_says_it_waits(tmp_path):
    specs = specs_with_progress(tmp_path, 3)
    lines = lines_shown(specs, running=specs[:1])
    assert 'waiting' in lines[1] and 'waiting' in lines[2] and 'waiting' not in lines[0]
