"""Task files are typed records: what a partitioner writes reads back as the record of its kind,
and a file of another shape is refused naming the file and the key before the task starts."""
import json

import pytest

from opencompass_scicode.partitioners.base import BasePartitioner
from opencompass_scicode.tasks.__main__ import main as task_main
from opencompass_scicode.tasks.contract import (EvalTaskFile, InferTaskFile, MergeTaskFile, TargetsTaskFile,
                                                TaskFileError, read_task_file)
from opencompass_scicode.utils.workdir import RunDir

MODEL = {'type': 'opencompass_scicode.models.DummyModel', 'abbr': 'dummy'}
DATASET = {'type': 'opencompass_scicode.datasets.SciCodeDataset', 'abbr': 'val', 'split': 'validation'}
WORKS = [
    ('infer', {'model': MODEL, 'datasets': [DATASET], 'eager_eval': True, 'discard_stale': False}, InferTaskFile),
    ('infer', {'action': 'merge', 'model_abbr': 'dummy', 'datasets': [DATASET], 'shards': ['part0of2']},
     MergeTaskFile),
    ('eval', {'model_abbr': 'dummy', 'dataset': DATASET, 'shard': 'part1of2'}, EvalTaskFile),
    ('targets', {'dataset': DATASET}, TargetsTaskFile),
]


@pytest.mark.parametrize('stage, work, kind', WORKS, ids=lambda w: getattr(w, '__name__', None))
def test_what_a_partitioner_writes_reads_back_typed(tmp_path, stage, work, kind):
    run_dir = RunDir(tmp_path, '20260101_000000').create()
    spec = BasePartitioner.task(run_dir, stage, ['dummy'], work)
    record = read_task_file(spec.config_path)
    assert isinstance(record, kind) and record.task == spec
    assert record.timestamp == '20260101_000000'
    for key, value in work.items():
        assert getattr(record, key) == value


def test_a_partitioner_refuses_to_write_a_task_file_of_another_shape(tmp_path):
    run_dir = RunDir(tmp_path, '20260101_000000').create()
    with pytest.raises(TaskFileError, match='datasets'):
        BasePartitioner.task(run_dir, 'eval', ['dummy'], {'model_abbr': 'dummy', 'datasets': [DATASET]})


@pytest.mark.parametrize('change, says', [
    (lambda d: d.update(shards=['p']), 'shards: Extra inputs are not permitted'),
    (lambda d: d.pop('dataset'), 'dataset: Field required'),
    (lambda d: d['task'].update(stage='score'), "unknown task stage 'score'"),
    (lambda d: d.pop('task'), 'no task stage'),
])
def test_a_task_file_of_another_shape_is_refused_by_the_task(tmp_path, capsys, change, says):
    run_dir = RunDir(tmp_path, '20260101_000000').create()
    spec = BasePartitioner.task(run_dir, 'eval', ['dummy'], {'model_abbr': 'dummy', 'dataset': DATASET})
    data = json.loads(open(spec.config_path).read())
    change(data)
    with open(spec.config_path, 'w') as fh:
        json.dump(data, fh)
    with pytest.raises(TaskFileError) as info:
        read_task_file(spec.config_path)
    assert spec.config_path in str(info.value) and says in str(info.value)
    assert task_main([spec.config_path], standalone=False) == 1
    assert says in capsys.readouterr().err
