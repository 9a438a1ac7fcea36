"""Fetching missing targets from a loopback server (tests/file_server.py): resumed with Range
after a cut, restarted when the server ignores Range, verified before it is moved into place,
the next source tried after a 404 or a server that never answers, Drive's confirmation page
followed, archives unpacked; and what each leaves in the data directory."""
import hashlib
import io
import zipfile

import h5py
import numpy as np
import pytest

from file_server import FileServer
from helpers import make_data_dir, TINY_PROBLEMS, tiny_dataset
from opencompass_scicode.errors import ConfigError, DataError
from opencompass_scicode.targets import fetch as fetching
from opencompass_scicode.targets.fetch import FetchError, Fetching, fetch, partial_path
from opencompass_scicode.targets.h5format import write_step_targets
from opencompass_scicode.targets.sources import Source


def small_h5(path, steps=('900.1', '900.2', '901.1'), size_hint=200_000):
    """A small targets file in the official layout, padded so that a transfer takes many chunks."""
    with h5py.File(path, 'w') as fh:
        for sid in steps:
            write_step_targets(fh, sid, [np.arange(size_hint // 8 // len(steps), dtype=float), 1.0])
    return path.read_bytes()


@pytest.fixture
def targets_bytes(tmp_path_factory):
    return small_h5(tmp_path_factory.mktemp('served') / 'served.h5')


def sha(data):
    return hashlib.sha256(data).hexdigest()


def source(url, data=None, name='test_data.h5', digest=None):
    return Source('test', url, name, digest or (sha(data) if data is not None else None))


def contents(folder):
    return sorted(p.name for p in folder.iterdir())


def test_a_cut_connection_is_resumed_with_range_and_the_file_verified(tmp_path, targets_bytes):
    size = len(targets_bytes)
    with FileServer({'/t.h5': targets_bytes}, cuts=[size // 2]) as srv:
        path = fetch(tmp_path, [source(srv.url('/t.h5'), targets_bytes)])
    assert path == tmp_path / 'test_data.h5' and path.read_bytes() == targets_bytes
    assert [e['status'] for e in srv.log] == [200, 206]
    assert srv.log[1]['range'] == f'bytes={size // 2}-'
    assert srv.bytes_sent == size                  # the second request sent only the rest
    assert contents(tmp_path) == ['test_data.h5', 'test_data.h5.sha256.json']


def test_a_partial_file_from_a_killed_fetch_is_resumed(tmp_path, targets_bytes):
    src = None
    with FileServer({'/t.h5': targets_bytes}) as srv:
        src = source(srv.url('/t.h5'), targets_bytes)
        partial_path(tmp_path, src).write_bytes(targets_bytes[:1000])
        fetch(tmp_path, [src])
    assert (tmp_path / 'test_data.h5').read_bytes() == targets_bytes
    assert srv.log[0]['range'] == 'bytes=1000-' and srv.bytes_sent == len(targets_bytes) - 1000
    assert not partial_path(tmp_path, src).exists()


def test_a_server_ignoring_range_restarts_cleanly(tmp_path, targets_bytes):
    with FileServer({'/t.h5': targets_bytes}, honour_range=False) as srv:
        src = source(srv.url('/t.h5'), targets_bytes)
        partial_path(tmp_path, src).write_bytes(b'x' * 1000)       # would corrupt the file if appended to
        fetch(tmp_path, [src])
    assert [e['status'] for e in srv.log] == [200]
    assert (tmp_path / 'test_data.h5').read_bytes() == targets_bytes
    assert contents(tmp_path) == ['test_data.h5', 'test_data.h5.sha256.json']


def test_a_wrong_checksum_deletes_the_download_and_names_both_digests(tmp_path, targets_bytes):
    wrong = '0' * 64
    with FileServer({'/t.h5': targets_bytes}) as srv:
        with pytest.raises(FetchError) as info:
            fetch(tmp_path, [source(srv.url('/t.h5'), digest=wrong)])
    assert wrong in str(info.value) and sha(targets_bytes) in str(info.value)
    assert contents(tmp_path) == []              # no partial file, nothing under the final name


def test_a_404_then_the_next_source(tmp_path, targets_bytes):
    with FileServer({'/t.h5': targets_bytes}) as srv:
        path = fetch(tmp_path, [source(srv.url('/gone.h5'), targets_bytes), source(srv.url('/t.h5'), targets_bytes)])
    assert [(e['path'], e['status']) for e in srv.log] == [('/gone.h5', 404), ('/t.h5', 200)]
    assert path.read_bytes() == targets_bytes


def test_a_server_that_never_answers_is_given_up_after_the_timeout(tmp_path, targets_bytes):
    with FileServer({'/t.h5': targets_bytes}, hang={'/slow.h5'}) as srv:
        with pytest.raises(FetchError) as info:
            fetch(tmp_path, [source(srv.url('/slow.h5'), targets_bytes)], timeout=0.5)
        assert 'no answer within 0.5 s' in str(info.value)
        path = fetch(tmp_path, [source(srv.url('/slow.h5'), targets_bytes), source(srv.url('/t.h5'), targets_bytes)],
                     timeout=0.5)
    assert path.read_bytes() == targets_bytes
    assert contents(tmp_path) == ['test_data.h5', 'test_data.h5.sha256.json']


def test_every_cut_is_resumed_until_the_limit(tmp_path, targets_bytes):
    size = len(targets_bytes)
    with FileServer({'/t.h5': targets_bytes}, cuts=[size // 5] * 10) as srv:
        with pytest.raises(FetchError, match='gave up after 3 resumes'):
            fetch(tmp_path, [source(srv.url('/t.h5'), targets_bytes)])
        src = source(srv.url('/t.h5'), targets_bytes)
        kept = partial_path(tmp_path, src).stat().st_size
        assert kept == 4 * (size // 5)             # what arrived is kept for the next try
        fetch(tmp_path, [src])
    assert (tmp_path / 'test_data.h5').read_bytes() == targets_bytes
    assert srv.bytes_sent == size


def test_drive_confirmation_page_is_followed(tmp_path, targets_bytes):
    page = ('<html><body><form id="download-form" action="/download" method="get">'
            '<input type="hidden" name="id" value="FILEID"><input type="hidden" name="export" value="download">'
            '<input type="hidden" name="confirm" value="t"><input type="submit"></form></body></html>')
    with FileServer({'/download': targets_bytes}, pages={'/uc': page},
                    needs={'/download': {'confirm': 't', 'id': 'FILEID'}}) as srv:
        path = fetch(tmp_path, [source(srv.url('/uc?export=download&id=FILEID'), targets_bytes)])
    assert [e['path'] for e in srv.log] == ['/uc', '/download'] and path.read_bytes() == targets_bytes


def test_what_is_neither_hdf5_nor_zip_is_refused(tmp_path):
    with FileServer({'/t.h5': b'<not html but no hdf5 either>' * 10}, pages={'/page': '<p>sign in</p>'}) as srv:
        with pytest.raises(FetchError) as info:
            fetch(tmp_path, [source(srv.url('/t.h5'), digest='0' * 64), source(srv.url('/page'), digest='0' * 64)])
    assert 'neither an HDF5 file nor a zip' in str(info.value) and 'a web page, not the file' in str(info.value)
    assert contents(tmp_path) == []


def zipped(members):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, 'w') as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()


def test_a_per_step_archive_is_unpacked_to_test_data(tmp_path):
    step_files = {sid: small_h5(tmp_path / f'{sid}.h5', steps=(sid,), size_hint=2000) for sid in ('900.1', '901.1')}
    archive = zipped({f'test_data/{sid}.h5': data for sid, data in step_files.items()})
    data_dir = tmp_path / 'data'
    with FileServer({'/scicode_test_data.zip': archive}) as srv:
        path = fetch(data_dir, [Source('oc', srv.url('/scicode_test_data.zip'), 'scicode_test_data.zip', None)])
    assert path == data_dir / 'test_data' and contents(data_dir) == ['test_data']
    assert {p.name: p.read_bytes() for p in path.iterdir()} == {f'{k}.h5': v for k, v in step_files.items()}


def test_an_archive_holding_test_data_h5_is_checked_by_that_file(tmp_path, targets_bytes):
    archive = zipped({'scicode/test_data.h5': targets_bytes})
    data_dir = tmp_path / 'data'
    with FileServer({'/a.zip': archive}) as srv:
        with pytest.raises(FetchError, match='sha256 mismatch for test_data.h5'):
            fetch(data_dir, [Source('a', srv.url('/a.zip'), 'a.zip', '1' * 64)])
        assert contents(data_dir) == []
        path = fetch(data_dir, [Source('a', srv.url('/a.zip'), 'a.zip', sha(targets_bytes))])
    assert path == data_dir / 'test_data.h5' and path.read_bytes() == targets_bytes
    assert contents(data_dir) == ['test_data.h5', 'test_data.h5.sha256.json']


# ------------------------------------------------------------------ within a run's planning
def test_a_run_fetches_targets_url_and_scores_against_them(tmp_path, targets_bytes):
    from opencompass_scicode.targets.locate import load_targets
    data_dir = make_data_dir(tmp_path / 'data', TINY_PROBLEMS, name='problems_all.jsonl')
    said = []
    with FileServer({'/t.h5': targets_bytes}) as srv:
        dataset = tiny_dataset(data_dir, split='test', targets_url=[srv.url('/t.h5')],
                               targets_sha256=sha(targets_bytes))
        assert Fetching(say=said.append).ensure(dataset)
        assert Fetching(say=said.append).ensure(dataset)        # there now: not asked again
    assert len(srv.log) == 1 and 'fetching them first' in said[0] and len(said) == 1
    assert load_targets(dataset).kind == 'custom'               # not the official file: never called so


def test_offline_or_no_download_stops_with_the_manual_steps_and_asks_nothing(tmp_path, targets_bytes, monkeypatch):
    data_dir = make_data_dir(tmp_path / 'data', TINY_PROBLEMS, name='problems_all.jsonl')
    with FileServer({'/t.h5': targets_bytes}) as srv:
        dataset = tiny_dataset(data_dir, split='test', targets_url=srv.url('/t.h5'))
        with pytest.raises(DataError, match=r'fetching is turned off \(--no-download\).*\n  fix: download test_data.h5'):
            Fetching(allowed=False).ensure(dataset)
        monkeypatch.setenv('SCICODE_OFFLINE', '1')
        with pytest.raises(DataError, match=r'turned off \(SCICODE_OFFLINE=1\)'):
            Fetching().ensure(dataset)
        dry = Fetching(dry_run=True)
        assert dry.ensure(dataset) is False and srv.url('/t.h5') in dry.planned[0][2][0]
    assert srv.log == [] and 'test_data.h5' not in contents(data_dir)


def test_validation_needs_no_fetch_unless_targets_url_asks(tmp_path):
    from opencompass_scicode.targets.fetch import needed_sources
    data_dir = make_data_dir(tmp_path / 'data', TINY_PROBLEMS)
    assert needed_sources(tiny_dataset(data_dir)) is None                   # regenerated from gold
    assert needed_sources(tiny_dataset(data_dir, split='test'))[0].label == 'official'
    assert [s.label for s in needed_sources(tiny_dataset(data_dir, split='test'))] == ['official', 'opencompass']
    asked = needed_sources(tiny_dataset(data_dir, targets_url='file:///srv/mirror/test_data.h5'))
    assert [(s.label, s.file_name) for s in asked] == [('targets_url', 'test_data.h5')]
    verified = needed_sources(tiny_dataset(data_dir, split='test', targets='verified'))
    assert {s.file_name for s in verified} == {'test_data_cleaned.h5'} and len(verified) == 2


def test_dataset_keys_are_checked():
    from opencompass_scicode.datasets import SciCodeDataset
    SciCodeDataset(targets_url=['https://example.invalid/t.h5', 'file:///x/t.h5'], targets_sha256='a' * 64,
                   targets='verified')
    for bad, key in ((dict(targets_url='ftp.example/t.h5'), 'targets_url'),
                     (dict(targets_url=['https://ok/t.h5', 3]), 'targets_url'),
                     (dict(targets_sha256='abc'), 'targets_sha256'),
                     (dict(targets='cleaned'), 'targets')):
        with pytest.raises(ConfigError) as info:
            SciCodeDataset(**bad)
        assert info.value.key == key


def test_fetch_command_dry_run_check_and_exit_codes(tmp_path, targets_bytes, capsys):
    data_dir = tmp_path / 'data'
    with FileServer({'/t.h5': targets_bytes}) as srv:
        url = srv.url('/t.h5')
        assert fetching.main(['--data-dir', str(data_dir), '--url', url, '--dry-run']) == 0
        assert url in capsys.readouterr().out and not data_dir.exists() and srv.log == []
        assert fetching.main(['--data-dir', str(data_dir), '--url', url, '--sha256', '2' * 64]) == 2
        err = capsys.readouterr().err
        assert '2' * 64 in err and sha(targets_bytes) in err and 'fix: download test_data.h5' in err
        assert fetching.main(['--data-dir', str(data_dir), '--url', url, '--sha256', sha(targets_bytes)]) == 0
    assert (data_dir / 'test_data.h5').read_bytes() == targets_bytes
    assert fetching.main(['--data-dir', str(data_dir), '--check']) == 2       # a file, but not the official one
    assert 'expected 48b0272a88b1' in capsys.readouterr().err


# ------------------------------------------------------------------ SciCode-Verified's targets
def test_verified_mode_fetches_its_own_file_and_labels_it_verified(tmp_path, targets_bytes):
    from opencompass_scicode.summarizers.extra_tables import notes
    from opencompass_scicode.targets.locate import load_targets
    data_dir = make_data_dir(tmp_path / 'data', TINY_PROBLEMS, name='problems_all.jsonl')
    with FileServer({'/test_data_cleaned.h5': targets_bytes}) as srv:
        pinned = tiny_dataset(data_dir, split='test', targets='verified', targets_sha256=sha(targets_bytes),
                              targets_url=srv.url('/test_data_cleaned.h5'))
        assert Fetching(say=lambda text: None).ensure(pinned)
    assert contents(data_dir).count('test_data_cleaned.h5') == 1 and 'test_data.h5' not in contents(data_dir)
    assert load_targets(pinned).kind == 'verified'
    # the same file without the pin: its digest is not SciCode-Verified's published one
    assert load_targets(tiny_dataset(data_dir, split='test', targets='verified')).kind == 'custom'
    # an official-mode dataset of the same directory does not take it for the official file
    with pytest.raises(DataError, match='needs the official test targets'):
        load_targets(tiny_dataset(data_dir, split='test'))
    said = notes({('m', 'd'): {'targets': 'verified'}})
    assert any('"verified"' in line and 'not comparable with official' in line for line in said)
    assert not any('"verified"' in line for line in notes({('m', 'd'): {'targets': 'official'}}))


def test_h5py_file_naming_the_default_place_is_fetched_there(tmp_path, targets_bytes):
    from opencompass_scicode.targets.fetch import needed_sources
    data_dir = make_data_dir(tmp_path / 'data', TINY_PROBLEMS, name='problems_all.jsonl')
    default = tiny_dataset(data_dir, split='test', h5py_file=str(data_dir / 'test_data.h5'))
    assert [s.label for s in needed_sources(default)] == ['official', 'opencompass']
    own = tiny_dataset(data_dir, split='test', h5py_file=str(tmp_path / 'mine.h5'))
    assert needed_sources(own) is None          # the user's own file: never fetched over


# ------------------------------------------------------------------ SciCode-Verified's corrected problems
def corrected_problems():
    """TINY_PROBLEMS as a correction would publish them: problem 901 dropped, 900.2's
    description made precise and its second test rewritten."""
    import copy
    import json
    fixed = copy.deepcopy(TINY_PROBLEMS[:1])
    step = fixed[0]['sub_steps'][1]
    step['step_description_prompt'] += ' The result is a float.'
    step['test_cases'][1] = 'x = twice(2.5)\nassert np.allclose(x, target)'
    return ''.join(json.dumps(p) + '\n' for p in fixed).encode()


def verified_test_dataset(data_dir, **kw):
    return tiny_dataset(data_dir, split='test', targets='verified', **kw)


def test_verified_test_problems_are_read_from_the_corrected_file(tmp_path):
    from opencompass_scicode.datasets import SciCodeDataset
    data_dir = make_data_dir(tmp_path / 'data', TINY_PROBLEMS, name='problems_all.jsonl')
    served = corrected_problems()
    (data_dir / 'problems_test_verified.jsonl').write_bytes(served)
    official = tiny_dataset(data_dir, split='test')
    assert [p.problem_id for p in official.problems] == ['900', '901']
    fixed = verified_test_dataset(data_dir)
    assert [p.problem_id for p in fixed.problems] == ['900'] and fixed.scored_step_count == 2
    assert fixed.problems[0].source == 'problems_test_verified.jsonl'
    assert fixed.problems[0].steps[1].test_cases[1].startswith('x = twice(2.5)')
    assert fixed.abbr == 'scicode_test_verified' and official.abbr == 'scicode_test'
    # `all`: the corrected test problems, then the official validation ones; validation alone
    # keeps the official problems (SciCode-Verified republished none)
    make_data_dir(data_dir, [dict(TINY_PROBLEMS[1], problem_id='950')], name='problems_dev.jsonl')
    assert [p.problem_id for p in tiny_dataset(data_dir, split='all', targets='verified').problems] == ['900', '950']
    assert tiny_dataset(data_dir, targets='verified').verified_problems_path is None
    # pinned: the file must hash to the digest (the published one by default)
    pinned = dict(path=str(data_dir), split='test', targets='verified', prepare=False)
    assert SciCodeDataset(problems_sha256=sha(served), **pinned).problems[0].problem_id == '900'
    with pytest.raises(DataError, match=f'has sha256 {sha(served)}, not 427771cb8bce') as info:
        SciCodeDataset(**pinned).problems
    assert 'delete it and fetch it again' in str(info.value)
    (data_dir / 'problems_test_verified.jsonl').unlink()
    with pytest.raises(DataError, match=r'reads SciCode-Verified\'s corrected problems from .*does not exist'
                                        r'.*\n  fix: download data/problems_test.jsonl'):
        verified_test_dataset(data_dir).problems


def test_verified_problems_are_fetched_checked_and_named_before_they_are_read(tmp_path):
    from opencompass_scicode.targets.fetch import needed_problem_sources
    data_dir = make_data_dir(tmp_path / 'data', TINY_PROBLEMS, name='problems_all.jsonl')
    served = corrected_problems()
    published = needed_problem_sources(verified_test_dataset(data_dir))
    assert [s.url.split('/')[2] for s in published] == ['huggingface.co', 'raw.githubusercontent.com']
    assert {s.sha256 for s in published} == {'427771cb8bceb5058e8b510af0ee2c8210827a1491e0cdf8e6db56d4ed1440ba'}
    assert needed_problem_sources(tiny_dataset(data_dir, split='test')) is None       # official problems
    assert needed_problem_sources(tiny_dataset(data_dir, targets='verified')) is None  # validation
    with FileServer({'/p.jsonl': served}, cuts=[len(served) // 2]) as srv:
        wrong = verified_test_dataset(data_dir, problems_url=srv.url('/p.jsonl'), problems_sha256='3' * 64)
        with pytest.raises(DataError) as info:
            Fetching(say=lambda text: None).ensure_problems(wrong)
        assert '3' * 64 in str(info.value) and sha(served) in str(info.value)
        assert 'fix: download data/problems_test.jsonl' in str(info.value)
        assert 'problems_test_verified.jsonl' not in contents(data_dir) and not fetching.leftovers(data_dir)
        dataset = verified_test_dataset(data_dir, problems_url=srv.url('/p.jsonl'), problems_sha256=sha(served))
        with pytest.raises(DataError, match=r'corrected problems.*fetching is turned off \(--no-download\)'):
            Fetching(allowed=False).ensure_problems(dataset)
        dry = Fetching(dry_run=True)
        assert dry.ensure_problems(dataset) is False
        assert dry.planned[0][3] == 'corrected problems' and srv.url('/p.jsonl') in dry.planned[0][2][0]
        said = []
        assert Fetching(say=said.append).ensure_problems(dataset)
        assert Fetching(say=said.append).ensure_problems(dataset)     # there now: not asked again
    # the first download was cut and resumed with Range, then refused by its digest; the second whole
    assert [e['status'] for e in srv.log] == [200, 206, 200]
    assert srv.log[1]['range'] == f'bytes={len(served) // 2}-'
    assert len(said) == 1 and 'corrected problems' in said[0] and 'fetching them first' in said[0]
    assert (data_dir / 'problems_test_verified.jsonl').read_bytes() == served
    assert [p.problem_id for p in dataset.problems] == ['900']


def test_problem_keys_are_checked():
    from opencompass_scicode.datasets import SciCodeDataset
    SciCodeDataset(targets='verified', problems_url=['https://example.invalid/p.jsonl'], problems_sha256='a' * 64)
    for bad, key in ((dict(targets='verified', problems_url='p.jsonl'), 'problems_url'),
                     (dict(targets='verified', problems_sha256='xyz'), 'problems_sha256'),
                     (dict(problems_url='https://example.invalid/p.jsonl'), 'problems_url'),
                     (dict(problems_sha256='a' * 64), 'problems_sha256')):
        with pytest.raises(ConfigError) as info:
            SciCodeDataset(**bad)
        assert info.value.key == key


def test_fetch_command_verified_fetches_targets_and_problems(tmp_path, targets_bytes, capsys):
    data_dir = tmp_path / 'data'
    served = corrected_problems()
    with FileServer({'/t.h5': targets_bytes, '/p.jsonl': served}) as srv:
        args = ['--source', 'verified', '--data-dir', str(data_dir), '--url', srv.url('/t.h5'),
                '--sha256', sha(targets_bytes), '--problems-url', srv.url('/p.jsonl')]
        assert fetching.main(args + ['--dry-run']) == 0
        out = capsys.readouterr().out
        assert 'would fetch the targets' in out and 'would fetch the corrected problems' in out
        assert srv.url('/p.jsonl') in out and srv.log == []
        # the problems are not the published file: refused, named, nothing left; the targets stay
        assert fetching.main(args) == 2
        err = capsys.readouterr().err
        assert 'error: the corrected problems' in err and sha(served) in err and '427771cb8bce' in err
        assert 'fix:' in err
        assert contents(data_dir) == ['test_data_cleaned.h5', 'test_data_cleaned.h5.sha256.json']
        # elsewhere, the targets refused: the problems are fetched all the same
        other = tmp_path / 'other'
        assert fetching.main(['--source', 'verified', '--data-dir', str(other), '--url', srv.url('/t.h5'),
                              '--sha256', '4' * 64, '--problems-url', srv.url('/p.jsonl'),
                              '--problems-sha256', sha(served)]) == 2
        assert 'error: the targets' in capsys.readouterr().err
        assert contents(other) == ['problems_test_verified.jsonl']
        assert fetching.main(args + ['--problems-sha256', sha(served)]) == 0
        out = capsys.readouterr().out
        assert 'test_data_cleaned.h5 is already there' in out and 'corrected problems ready' in out
        assert [e['path'] for e in srv.log] == ['/t.h5', '/p.jsonl', '/t.h5', '/p.jsonl', '/p.jsonl']
    assert (data_dir / 'problems_test_verified.jsonl').read_bytes() == served
    assert fetching.main(['--source', 'verified', '--data-dir', str(data_dir), '--check']) == 2
    err = capsys.readouterr().err
    assert 'expected 8fb6e575b7b6' in err and 'expected 427771cb8bce' in err
    with pytest.raises(SystemExit) as info:
        fetching.main(['--data-dir', str(data_dir), '--problems-url', 'https://example.invalid/p.jsonl'])
    assert info.value.code == 2 and '--source verified' in capsys.readouterr().err


def test_split_all_with_validation_problems_alone_needs_no_test_targets(tmp_path):
    """AgentCompass's default split is 'all': its sample_ids of validation problems alone are
    scored against regenerated targets, as split 'validation' is; one test problem needs them."""
    import json
    from opencompass_scicode.targets.fetch import needed_sources
    from opencompass_scicode.targets.locate import plan_targets
    data_dir = make_data_dir(tmp_path / 'data', TINY_PROBLEMS)
    test_problem = dict(TINY_PROBLEMS[1], problem_id='800')
    test_problem['sub_steps'] = [dict(s, step_number='800.1', ground_truth_code=None) for s in test_problem['sub_steps']]
    (data_dir / 'problems_all.jsonl').write_text(json.dumps(test_problem) + '\n')
    chosen = tiny_dataset(data_dir, split='all', sample_ids=['900', '901'])
    assert chosen.validation_only and needed_sources(chosen) is None and plan_targets(chosen)[0] == 'regenerated'
    mixed = tiny_dataset(data_dir, split='all', sample_ids=['900', '800'])
    assert not mixed.validation_only and needed_sources(mixed)[0].label == 'official'
    with pytest.raises(DataError, match='needs the official test targets'):
        plan_targets(mixed)
    assert not tiny_dataset(data_dir, split='all').validation_only
