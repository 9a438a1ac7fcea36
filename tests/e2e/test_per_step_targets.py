"""Targets in OpenCompass's layout: one `<step_id>.h5` per step (its scicode_test_data.zip)."""
import shutil
import textwrap
import zipfile

import h5py
import pytest

from helpers import DATA, only_run, results, run_cli, statuses
from opencompass_scicode.datasets import SciCodeDataset
from opencompass_scicode.errors import DataError
from opencompass_scicode.targets import per_step
from opencompass_scicode.targets.locate import check_coverage, load_targets, plan_targets, regenerated_path

QUICK = ['1', '19', '29']


def split_into_steps(single_file, folder):
    """Write each step group of a single targets file as OpenCompass does: `<step_id>.h5`."""
    folder.mkdir(parents=True, exist_ok=True)
    with h5py.File(single_file, 'r') as src:
        for step_id in src:
            with h5py.File(folder / f'{step_id}.h5', 'w') as dst:
                src.copy(src[step_id], dst, name=step_id)
    return folder


@pytest.fixture(scope='module')
def regenerated(official_data):
    from opencompass_scicode.evaluation.regenerate import ensure_targets
    validation = SciCodeDataset(path=str(official_data), split='validation')
    ensure_targets(validation)
    return regenerated_path(validation)


@pytest.fixture
def steps_dir(tmp_path, regenerated):
    return split_into_steps(regenerated, tmp_path / 'test_data')


def test_a_folder_of_step_files_is_found_named_or_zipped(tmp_path, official_data, regenerated, steps_dir):
    named = SciCodeDataset(path=str(official_data), h5py_file=str(steps_dir))
    assert plan_targets(named) == (per_step.KIND, steps_dir)
    targets = load_targets(named)
    assert targets.kind == 'opencompass-per-step' and len(targets.step_ids) == 50
    assert targets.file_for('10.3') == steps_dir.resolve() / '10.3.h5'
    # found without h5py_file, in the data dir's test_data/ (where the zip unpacks)
    data = tmp_path / 'data'
    shutil.copytree(official_data, data, ignore=shutil.ignore_patterns('regenerated', 'cache', '*.h5'))
    shutil.copytree(steps_dir, data / 'test_data')
    assert plan_targets(SciCodeDataset(path=str(data), split='test'))[0] == per_step.KIND
    # the zip itself, unpacked once into the cache
    archive = tmp_path / 'scicode_test_data.zip'
    with zipfile.ZipFile(archive, 'w') as zf:
        for f in steps_dir.glob('*.h5'):
            zf.write(f, f'test_data/{f.name}')
    zipped = SciCodeDataset(path=str(data), split='validation', h5py_file=str(archive))
    kind, folder = plan_targets(zipped)
    assert kind == per_step.KIND and sorted(p.name for p in folder.glob('*.h5')) == sorted(
        p.name for p in steps_dir.glob('*.h5'))
    stamp = (folder / '10.3.h5').stat().st_mtime_ns
    assert plan_targets(zipped) == (kind, folder) and (folder / '10.3.h5').stat().st_mtime_ns == stamp
    check_coverage(zipped)
    # not a zip, and a folder without step files: clear errors
    bad = tmp_path / 'bad.zip'
    bad.write_text('no zip')
    with pytest.raises(DataError, match='not a readable zip'):
        plan_targets(SciCodeDataset(path=str(data), h5py_file=str(bad)))
    empty = tmp_path / 'empty'
    empty.mkdir()
    with pytest.raises(DataError, match='folder without <step_id>.h5 files'):
        plan_targets(SciCodeDataset(path=str(data), h5py_file=str(empty)))


def test_missing_or_unreadable_step_files_are_named_before_any_work(official_data, steps_dir):
    dataset = SciCodeDataset(path=str(official_data), h5py_file=str(steps_dir))
    check_coverage(dataset)
    (steps_dir / '10.3.h5').unlink()
    (steps_dir / '19.1.h5').write_text('truncated')
    with h5py.File(steps_dir / '1.1.h5', 'a') as fh:
        del fh['1.1/test2']
    with pytest.raises(DataError) as info:
        check_coverage(dataset)
    message = ' '.join(str(info.value).split())
    for part in ('do not cover 3 of its 50 scored steps', '1.1 (2 of its 3 tests)', '10.3 (no file 10.3.h5)',
                 '19.1 (19.1.h5 is no readable HDF5 file)', 'scicode_test_data.zip'):
        assert part in message, part


@pytest.mark.slow
def test_verdicts_equal_those_with_the_single_file(tmp_path, official_data, regenerated, steps_dir):
    from openai_server import FakeOpenAI
    gold = SciCodeDataset(path=str(official_data), split='validation', sample_ids=['1', '19'])
    with FakeOpenAI([s for p in gold.problems for s in p.steps]) as server:     # 29: wrong answers
        cfg = tmp_path / 'cfg.py'
        cfg.write_text(textwrap.dedent(f'''
            from opencompass_scicode.datasets import SciCodeDataset
            from opencompass_scicode.evaluation import SciCodeEvaluator
            from opencompass_scicode.models import OpenAIChatModel
            models = [dict(type=OpenAIChatModel, abbr='api', path='test-model', base_url={server.base_url!r},
                           key='sk-test', retries=1, timeout=30)]
            datasets = [dict(abbr=abbr, type=SciCodeDataset, path={str(DATA)!r}, split='validation',
                             sample_ids={QUICK!r}, h5py_file=h5,
                             eval_cfg=dict(evaluator=dict(type=SciCodeEvaluator, timeout=300)))
                        for abbr, h5 in (('single', {str(regenerated)!r}), ('per_step', {str(steps_dir)!r}))]
        '''))
        work = tmp_path / 'w'
        proc = run_cli([cfg, '-w', work])
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        single, split = (results(only_run(work), 'api', abbr) for abbr in ('single', 'per_step'))
        assert split['targets'] == 'opencompass-per-step' and single['targets'] == 'custom'
        assert statuses(split) == statuses(single)
        assert {s for s, v in statuses(split).items() if v == 'pass'} == {'1.1', '19.1', '19.2'}
        assert 'opencompass-per-step' in (only_run(work) / 'summary' / f'summary_{only_run(work).name}.txt').read_text()

        # a step file missing: refused at planning, before any request
        asked = len(server.log)
        (steps_dir / '29.2.h5').unlink()
        proc = run_cli([cfg, '-w', tmp_path / 'w2'])
        assert proc.returncode == 2
        assert '29.2 (no file 29.2.h5)' in ' '.join(proc.stderr.split())
        assert len(server.log) == asked and not (tmp_path / 'w2').exists()
