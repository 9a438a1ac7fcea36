from opencompass_scicode.predictions import PredictionStore


def _plain(loaded):
    """The store's records as the dicts they were appended as."""
    return {key: record.to_json() for key, record in loaded.items()}


def test_last_record_wins_and_torn_line_is_ignored_and_not_glued(tmp_path):
    store = PredictionStore(tmp_path / 'p.jsonl')
    store.append({'step_id': '1.1', 'code': 'a'})
    store.append({'step_id': '1.1', 'code': 'b'})
    with open(store.path, 'a') as fh:
        fh.write('{"step_id": "1.2", "co')          # killed mid-write
    assert _plain(store.load()) == {'1.1': {'step_id': '1.1', 'code': 'b'}}
    store.append({'step_id': '1.2', 'code': 'c'})
    assert store.load()['1.2'].to_json() == {'step_id': '1.2', 'code': 'c'}


def test_digest_changes_with_content(tmp_path):
    store = PredictionStore(tmp_path / 'p.jsonl')
    assert store.digest() is None
    store.append({'step_id': '1.1'})
    first = store.digest()
    store.append({'step_id': '1.2'})
    assert store.digest() != first


def test_a_store_loaded_again_reads_what_was_appended_since_and_notices_a_new_file(tmp_path):
    path = tmp_path / 'p.jsonl'
    store = PredictionStore(path)
    store.append({'step_id': '1.1', 'code': 'a'})
    assert _plain(store.load()) == {'1.1': {'step_id': '1.1', 'code': 'a'}}
    store.append({'step_id': '1.2', 'code': 'b'})
    store.append({'step_id': '1.1', 'code': 'c', 'sample': 1})
    with open(path, 'a') as fh:              # another writer, cut short mid-line: not a record yet
        fh.write('{"step_id": "1.3", "co')
    assert _plain(store.load()) == {'1.1': {'step_id': '1.1', 'code': 'a'}, '1.2': {'step_id': '1.2', 'code': 'b'},
                                    '1.1@1': {'step_id': '1.1', 'code': 'c', 'sample': 1}}
    store.append({'step_id': '1.3', 'code': 'd'})        # starts on a line of its own
    assert store.load()['1.3'].to_json() == {'step_id': '1.3', 'code': 'd'}
    assert store.load() == PredictionStore(path).load()  # as a fresh reader of the whole file sees it
    store.set_aside('stale')                              # a new file: read from its start
    store.append({'step_id': '2.1', 'code': 'e'})
    assert _plain(store.load()) == {'2.1': {'step_id': '2.1', 'code': 'e'}}


def test_torn_names_each_cut_line_and_its_step_and_nothing_else(tmp_path):
    store = PredictionStore(tmp_path / 'p.jsonl')
    assert store.torn() == []
    store.append({'step_id': '1.1', 'code': 'a'})
    with open(store.path, 'a') as fh:
        fh.write('{"step_id": "1.2", "sample": 1, "co')     # cut after its key
    assert store.torn() == [(2, '1.2@1')]
    store.append({'step_id': '1.2', 'code': 'b', 'sample': 1})
    with open(store.path, 'a') as fh:
        fh.write('{"prob')                                  # cut before its key
    assert store.torn() == [(2, '1.2@1'), (4, None)]
    assert list(store.load()) == ['1.1', '1.2@1']


def test_a_file_of_the_old_writer_reads_typed_and_is_written_back_as_it_was(tmp_path):
    import pytest
    from pydantic import ValidationError
    from helpers import ROOT
    from opencompass_scicode.predictions import Prediction
    old = ROOT / 'tests' / 'fixtures' / 'results_v1' / 'dummy_predictions_n2.jsonl'
    records = list(PredictionStore(old).records())
    assert [(r.step_id, r.sample) for r in records] == [('19.1', 0), ('19.1', 1), ('19.2', 0), ('19.2', 1)]
    assert all(r.settings_fp and r.prompt and r.code and r.settings['n'] == 2 for r in records)
    copy = PredictionStore(tmp_path / 'copy.jsonl')
    for record in records:
        copy.append(record)
    assert copy.path.read_text() == old.read_text()             # byte for byte: fields in their order too
    with pytest.raises(ValidationError, match='step_id'):
        copy.append({'code': 'x'})                       # a record names its step
    with pytest.raises(ValidationError, match='sample'):
        Prediction(step_id='1.1', sample='second')
