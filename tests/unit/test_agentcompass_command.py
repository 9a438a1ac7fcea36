"""AgentCompass's command line translated into a config (adapters/agentcompass/), and the
dataset's category filter: no run, no request."""
import json

import pytest

from helpers import DATA
from opencompass_scicode.cli import parse_args
from opencompass_scicode.adapters.agentcompass.command_line import config_from_run_args
from opencompass_scicode.datasets import SciCodeDataset
from opencompass_scicode.errors import ConfigError

URL = 'http://127.0.0.1:9/v1'


def translate(*extra, bench=None, harness=None, model=None):
    argv = ['run', 'scicode', 'scicode_tool_use', 'org/my-model', '--env', 'host_process',
            '--model-base-url', URL, '--model-api-key', 'sk-unit']
    for flag, value in (('--benchmark-params', bench), ('--harness-params', harness), ('--model-params', model)):
        if value is not None:
            argv += [flag, value if isinstance(value, str) else json.dumps(value)]
    return config_from_run_args(parse_args(argv + list(extra), prog='run.py'))


def test_smoke_command_becomes_one_model_and_one_dataset():
    cfg, _, notes = translate('--model-api-protocol', 'openai-responses', '--task-concurrency', '3',
                              bench={'split': 'validation', 'sample_ids': ['10', 1]}, harness={'mode': 'naive'},
                              model={'temperature': 0.2, 'max_tokens': 512, 'top_p': 0.9})
    (model,), (ds,) = cfg['models'], cfg['datasets']
    assert model == dict(type='OpenAIChatModel', path='org/my-model', base_url=URL, key='sk-unit', api='responses',
                         temperature=0.2, max_out_len=512, extra_body={'top_p': 0.9}, max_concurrency=3)
    assert ds['split'] == 'validation' and ds['sample_ids'] == ['10', '1'] and ds['infer_cfg'] == {'mode': 'naive', 'extraction': 'fenced'}
    assert cfg['agentcompass_outputs'] is True and notes == []


def test_agentcompass_defaults_apply_with_one_note():
    cfg, _, notes = translate()
    ds = cfg['datasets'][0]
    assert ds['split'] == 'all' and ds['infer_cfg']['mode'] == 'tool_use' and ds['with_bg'] is False
    assert notes == ["AgentCompass's defaults apply: split='all' (ours: 'validation'), "
                     "mode='tool_use' (ours: 'naive')"]


def test_agentcompass_rules_come_with_its_command():
    """A prose answer is a parse_error with null code (the 'fenced' extraction); a dataset_zip_url's
    test_data.h5 must be the official file; a relative h5py_file is under AgentCompass's data dir."""
    from opencompass_scicode.datasets.files import H5_SHA256
    cfg, _, _ = translate(bench={'split': 'test', 'dataset_zip_url': 'http://127.0.0.1:9/t.zip',
                                 'h5py_file': 'test_data.h5'})
    ds = cfg['datasets'][0]
    assert ds['infer_cfg']['extraction'] == 'fenced' and ds['targets_sha256'] == H5_SHA256
    assert ds['h5py_file'] == 'data/test_data.h5'          # no --data-dir: AgentCompass's default, data
    assert translate(bench={'h5py_file': '/abs/t.h5'})[0]['datasets'][0]['h5py_file'] == '/abs/t.h5'


def test_a_dataset_zip_url_holding_another_file_is_refused(tmp_path):
    import io
    import zipfile
    from file_server import FileServer
    from opencompass_scicode.registry import build_dataset
    from opencompass_scicode.targets.fetch import Fetching
    from opencompass_scicode.errors import DataError
    data_dir = tmp_path / 'data'
    data_dir.mkdir()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, 'w') as zf:
        zf.writestr('scicode/test_data.h5', b'\x89HDF\r\n\x1a\n not the official file')
    with FileServer({'/t.zip': buffer.getvalue()}) as srv:
        cfg, _, _ = translate('--data-dir', str(data_dir), bench={'split': 'test', 'dataset_zip_url': srv.url('/t.zip')})
        entry = dict(cfg['datasets'][0], path=str(DATA))        # the problems of the real data dir
        dataset = build_dataset({k: v for k, v in entry.items() if k != 'infer_cfg'})
        dataset.path = str(data_dir)                            # fetched into a dir of its own
        with pytest.raises(DataError, match='sha256 mismatch for test_data.h5'):
            Fetching(say=lambda text: None).ensure(dataset)
    assert not (data_dir / 'test_data.h5').exists()


@pytest.mark.parametrize('key, flag', [
    ('datasets[0].category', '--benchmark-params.category'),
    ('datasets[0].sample_ids', '--benchmark-params.sample_ids'),
    ('datasets[0].targets_url', '--benchmark-params.dataset_zip_url'),
    ('datasets[0].with_bg', '--harness-params.with_background'),
    ('datasets[0].infer_cfg.mode', '--harness-params.mode'),
    ('datasets[0].path', '--data-dir'),
    ('models[0].base_url', '--model-base-url'),
    ('models[0].max_out_len', '--model-params.max_tokens'),
    ('models[0].max_concurrency', '--task-concurrency'),
])
def test_later_errors_about_the_config_name_the_flag_it_came_from(key, flag):
    from opencompass_scicode.adapters.agentcompass.command_line import in_their_words
    said = in_their_words(ConfigError('no problem is in category x', key=key, fix='use all'))
    assert said.key == flag and str(said).startswith(f'the command line (run scicode ...): key `{flag}`')
    assert 'datasets[0]' not in str(said) and 'models[0]' not in str(said) and said.fix == 'use all'
    other = ConfigError('x', key='runner.max_num_workers')
    assert in_their_words(other) is other


def test_data_dir_search_order_and_h5_relative_to_it(tmp_path):
    (tmp_path / 'scicode').mkdir()
    (tmp_path / 'scicode' / 'problems_dev.jsonl').write_text('')
    cfg, _, _ = translate('--data-dir', str(tmp_path), bench={'split': 'validation', 'h5py_file': 'x/t.h5'})
    assert cfg['datasets'][0]['path'] == str(tmp_path / 'scicode')
    assert cfg['datasets'][0]['h5py_file'] == str(tmp_path / 'x' / 't.h5')
    (tmp_path / 'flat').mkdir()
    (tmp_path / 'flat' / 'problems_all.jsonl').write_text('')
    assert translate('--data-dir', str(tmp_path / 'flat'))[0]['datasets'][0]['path'] == str(tmp_path / 'flat')
    cfg, _, notes = translate('--data-dir', str(tmp_path / 'empty'), bench={'split': 'test'}, harness={'mode': 'naive'})
    assert cfg['datasets'][0]['path'] == 'data/scicode' and 'no SciCode problems' in notes[0]


def test_config_file_holds_the_same_keys_and_flags_win(tmp_path):
    path = tmp_path / 'ac.yaml'
    path.write_text('benchmark_params: {split: test, sample_ids: ["2"]}\nharness_params: {mode: naive}\n'
                    'task_concurrency: 4\n')
    cfg, source, _ = translate('--config', str(path), bench={'split': 'validation'})
    ds = cfg['datasets'][0]
    assert (ds['split'], ds['sample_ids'], cfg['models'][0]['max_concurrency']) == ('validation', ['2'], 4)
    assert source == str(path)
    path.write_text('{"benchmark_param": {}}')
    with pytest.raises(ConfigError, match="unknown key 'benchmark_param'"):
        translate('--config', str(path))


@pytest.mark.parametrize('kwargs, extra, words', [
    (dict(bench={'splits': 'test'}), (), ['--benchmark-params.splits', 'allowed keys: split']),
    (dict(bench={'split': 'dev'}), (), ['--benchmark-params.split', "'validation', 'test', 'all'"]),
    (dict(harness='[1, 2]'), (), ['--harness-params', 'JSON object, got list']),
    (dict(harness='{mode: naive'), (), ['--harness-params', 'not JSON']),
    (dict(harness={'mode': 'agent'}), (), ['--harness-params.mode', "'naive', 'chat', 'tool_use'"]),
    (dict(harness={'tool_use_max_loops': 0}), (), ['--harness-params.tool_use_max_loops']),
    (dict(model={'temprature': 0}), (), ['--model-params.temprature', "did you mean 'temperature'"]),
    (dict(), ('--model-api-protocol', 'anthropic'), ['--model-api-protocol', 'openai-chat, openai-responses']),
    (dict(), ('--env', 'docker'), ['--env', 'host_process']),
    (dict(bench={'category': 7}), (), ['--benchmark-params.category']),
    (dict(bench={'dataset_zip_url': 'ftp://x/t.zip'}), (), ['--benchmark-params.dataset_zip_url', 'not a URL']),
])
def test_refusals_name_the_key_and_the_allowed_values(kwargs, extra, words):
    with pytest.raises(ConfigError) as err:
        translate(*extra, **kwargs)
    for word in words:
        assert word in str(err.value)


def test_missing_model_url_is_refused():
    args = parse_args(['run', 'scicode', 'scicode_tool_use', 'm', '--env', 'host_process'], prog='run.py')
    with pytest.raises(ConfigError, match='--model-base-url'):
        config_from_run_args(args)


def test_dataset_zip_url_maps_onto_targets_url_or_is_refused():
    fields = SciCodeDataset.__dataclass_fields__
    if 'targets_url' in fields:
        cfg, _, _ = translate(bench={'dataset_zip_url': 'http://127.0.0.1:9/t.zip'})
        assert cfg['datasets'][0]['targets_url'] == ['http://127.0.0.1:9/t.zip']
    else:
        with pytest.raises(ConfigError, match='dataset_zip_url.*not yet supported'):
            translate(bench={'dataset_zip_url': 'http://127.0.0.1:9/t.zip'})


def test_category_filter_on_problems():
    assert {p.category for p in SciCodeDataset(path=str(DATA), split='validation').problems} == {'unclassified'}
    assert len(SciCodeDataset(path=str(DATA), split='validation', category=['unclassified', 'x']).problems) == 15
    assert len(SciCodeDataset(path=str(DATA), split='validation', category='all').problems) == 15
    with pytest.raises(ConfigError, match="(?s)category 'physics'.*present: 'unclassified'"):
        SciCodeDataset(path=str(DATA), split='validation', category='physics').problems
