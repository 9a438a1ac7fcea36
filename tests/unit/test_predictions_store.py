from opencompass_scicode.predictions import PredictionStore


def test_last_record_wins_and_torn_line_is_ignored_and_not_glued(tmp_path):
    store = PredictionStore(tmp_path / 'p.jsonl')
    store.append({'step_id': '1.1', 'code': 'a'})
    store.append({'step_id': '1.1', 'code': 'b'})
    with open(store.path, 'a') as fh:
        fh.write('{"step_id": "1.2", "co')          # killed mid-write
    assert store.load() == {'1.1': {'step_id': '1.1', 'code': 'b'}}
    store.append({'step_id': '1.2', 'code': 'c'})
    assert store.load()['1.2'] == {'step_id': '1.2', 'code': 'c'}


def test_digest_changes_with_content(tmp_path):
    store = PredictionStore(tmp_path / 'p.jsonl')
    assert store.digest() is None
    store.append({'step_id': '1.1'})
    first = store.digest()
    store.append({'step_id': '1.2'})
    assert store.digest() != first
