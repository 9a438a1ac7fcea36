"""Protocols (protocols/): the table, filling a dataset entry in, the honest name, the fingerprint,
and each knob reaching the object that acts on it."""
import re

import h5py
import pytest

from helpers import ROOT
from opencompass_scicode import protocols
from opencompass_scicode.errors import ConfigError
from opencompass_scicode.evaluation import SciCodeEvaluator
from opencompass_scicode.inference.extract import extractor
from opencompass_scicode.inference.settings import InferConfig
from opencompass_scicode.models.base import ANSWER_TEMPERATURE
from opencompass_scicode.models.openai_api import OpenAIChatModel
from opencompass_scicode.protocols.record import value_text
from opencompass_scicode.registry import build_dataset, build_evaluator
from opencompass_scicode.targets.locate import Targets

CITED = re.compile(r'@[0-9a-f]{7}|AgentCompass\'s SciCode page|^ours|^unused|^one environment')


def entry(**keys):
    return dict({'abbr': 'ds', 'type': 'SciCodeDataset', 'path': str(ROOT / 'data' / 'scicode')}, **keys)


def test_every_protocol_sets_every_knob_and_says_where_it_was_read():
    names = {knob.name for knob in protocols.KNOBS}
    assert {'official', 'opencompass', 'inspect_evals', 'nemo_skills', 'scicode_verified',
            'agentcompass'} <= set(protocols.PROTOCOLS)
    for name, protocol in protocols.PROTOCOLS.items():
        assert set(protocol['values']) == names and set(protocol['sources']) == names, name
        for knob, source in protocol['sources'].items():
            assert CITED.search(source), f'{name}.{knob}: {source!r} cites no commit'
        assert protocol['reproduces']


def test_an_unknown_protocol_is_refused_with_the_list():
    with pytest.raises(ConfigError) as info:
        protocols.apply(entry(protocol='opencompas'))
    assert "unknown protocol 'opencompas'" in str(info.value) and info.value.key == 'protocol'
    assert "did you mean 'opencompass'" in info.value.fix
    for name in protocols.PROTOCOLS:
        assert name in info.value.fix


def test_the_protocol_fills_what_the_entry_leaves_out_and_keeps_what_it_sets():
    filled = protocols.apply(entry(protocol='opencompass', eval_cfg=dict(evaluator=dict(
        type='SciCodeEvaluator', timeout=300))))
    assert filled['split'] == 'test' and filled['with_bg'] is False
    assert filled['infer_cfg'] == dict(mode='chat', max_out_len=4096, temperature=0.7, n=1, tool_use_max_loops=15,
                                       code_timeout_seconds=180, extraction='opencompass')
    evaluator = filled['eval_cfg']['evaluator']
    assert evaluator['timeout'] == 300 and evaluator['simps_shim'] is False      # the entry's, then the protocol's
    record = protocols.record(filled)
    assert record['name'] == 'opencompass+timeout=300' and record['overrides'] == {'timeout': 300}
    assert protocols.apply(filled) == filled                  # applying again changes nothing
    assert protocols.record(protocols.apply(entry(protocol='opencompass')))['name'] == 'opencompass'


def test_official_leaves_split_and_background_to_the_entry():
    for split, bg in (('validation', False), ('test', True)):
        record = protocols.record(protocols.apply(entry(split=split, with_bg=bg)))
        assert record['name'] == 'official' and record['knobs']['split'] == split
    # protocols that fix them name a different choice
    assert protocols.record(protocols.apply(entry(protocol='nemo_skills', split='test')))['name'] == \
        'nemo_skills+split=test'


def test_the_fingerprint_covers_every_knob():
    base = protocols.record(protocols.apply(entry()))
    assert re.fullmatch(r'[0-9a-f]{8}', base['fingerprint'])
    assert protocols.record(protocols.apply(entry()))['fingerprint'] == base['fingerprint']
    for changed in (dict(with_bg=True), dict(infer_cfg=dict(temperature=0.5)),
                    dict(eval_cfg=dict(evaluator=dict(type='SciCodeEvaluator', memory_limit_mb=4096)))):
        assert protocols.record(protocols.apply(entry(**changed)))['fingerprint'] != base['fingerprint'], changed
    # the answers' own settings win over the entry's for the knobs of the answers
    record = protocols.record(protocols.apply(entry()), answers={'temperature': 0.7, 'mode': 'chat'})
    assert record['name'] == 'official+mode=chat+temperature=0.7'


def test_each_protocols_knobs_reach_the_objects_that_act_on_them():
    for name, protocol in protocols.PROTOCOLS.items():
        values = protocol['values']
        filled = protocols.apply(entry(protocol=name, split='validation', targets='official'))
        dataset = build_dataset(filled)
        assert dataset.protocol == name and dataset.prefilled_mode == values['prefilled_mode']
        infer = InferConfig.of(filled['infer_cfg'])
        assert (infer.mode, infer.max_out_len, infer.temperature, infer.extraction) == (
            values['mode'], values['max_out_len'], values['temperature'], values['extraction'])
        evaluator = build_evaluator(filled)
        assert evaluator.limits.timeout == values['timeout'] and evaluator.limits.memory_mb == values['memory_limit_mb']
        assert evaluator.environments == list(values['environments'])
        assert (evaluator.environment_rule, evaluator.simps_shim, evaluator.prefilled_steps) == (
            values['environment_rule'], values['simps_shim'], values['prefilled_steps'])
        if values['with_bg'] != protocols.ANY:
            assert dataset.with_bg == values['with_bg']


def test_extraction_rules():
    response = 'text\n```python\nimport numpy as np\ndef f():\n    return 1\n```\n'
    assert 'import numpy' not in extractor('official')(response) and 'def f' in extractor('official')(response)
    assert extractor('inspect_evals')(response) == 'text\n\nimport numpy as np\ndef f():\n    return 1'
    assert extractor('opencompass')(response) == '\ndef f():\n    return 1\n'
    # no ```python block: OpenCompass takes nothing, the official rule takes the whole answer
    bare = 'def f():\n    return 1'
    assert extractor('opencompass')(bare) == '' and extractor('official')(bare) == bare
    with pytest.raises(ConfigError):
        InferConfig(extraction='mine')


def test_the_request_temperature_is_the_models_else_the_datasets_else_none():
    model = OpenAIChatModel(path='m', key='sk-x', base_url='http://127.0.0.1:9/v1')
    own = OpenAIChatModel(path='m', key='sk-x', base_url='http://127.0.0.1:9/v1', temperature=0.3)
    token = ANSWER_TEMPERATURE.set(0.7)
    try:
        assert model._temperature() == {'temperature': 0.7} and own._temperature() == {'temperature': 0.3}
        ANSWER_TEMPERATURE.set(None)
        assert model._temperature() == {} and own._temperature() == {'temperature': 0.3}
    finally:
        ANSWER_TEMPERATURE.reset(token)
    assert model._temperature() == {'temperature': 0.0}          # outside a run: the official 0


@pytest.mark.parametrize('mode, total, prefilled_status', [('skipped', 3, 'skipped'), ('failed', 4, 'fail'),
                                                             ('scored', 4, 'pass')])
def test_how_the_prefilled_steps_count(official_data, tmp_path, mode, total, prefilled_status):
    dataset = build_dataset(dict(path=str(official_data), split='test', sample_ids=['76']))
    steps = dataset.problems[0].steps
    assert [s.step_id for s in steps] == ['76.1', '76.2', '76.3', '76.4'] and steps[2].prefilled
    empty = tmp_path / 'targets.h5'
    h5py.File(empty, 'w').close()
    result = SciCodeEvaluator(timeout=60, prefilled_steps=mode).evaluate(dataset, {}, Targets('custom', empty))
    records = {s['step_id']: s['status'] for s in result['problems'][0]['steps']}
    assert result['subproblem_total'] == total and records.pop('76.3') == prefilled_status
    assert set(records.values()) == {'parse_error'}             # no answers were given
    assert result['subproblem_correct'] == (1 if mode == 'scored' else 0)


def test_the_docs_table_is_the_protocols_table():
    text = (ROOT / 'docs' / 'protocols.md').read_text()
    names = list(protocols.PROTOCOLS)
    assert '| knob | ' + ' | '.join(f'`{n}`' for n in names) + ' |' in text
    for knob in protocols.KNOBS:
        cells = ['any' if (v := protocols.PROTOCOLS[n]['values'][knob.name]) == protocols.ANY else value_text(v)
                 for n in names]
        assert f'| `{knob.name}` | ' + ' | '.join(cells) + ' |' in text, knob.name


def _finished_run(tmp_path, dataset):
    from opencompass_scicode.config import dump_config
    run = tmp_path / 'w' / '20260101_000000'
    (run / 'configs').mkdir(parents=True)
    (run / 'predictions').mkdir()
    dump_config({'models': [dict(type='ReferenceModel', abbr='reference')], 'datasets': [dataset]},
                run / 'configs' / '20260101_000000.py')
    return run


def test_a_regrade_changes_scoring_knobs_only_and_names_what_it_kept(tmp_path):
    from opencompass_scicode.config.regrade import regrade_config
    run = _finished_run(tmp_path, protocols.apply(entry(abbr='val', split='validation')))
    cfg, label = regrade_config(run, flags={'timeout': 30, 'environments': ['2024', 'current']})
    assert label == 'official+timeout=30+environments=2024,current'
    assert protocols.record(cfg['datasets'][0])['name'] == label
    with pytest.raises(ConfigError) as info:
        regrade_config(run, protocol='nemo_skills')
    assert "split (the run's: 'validation', nemo_skills's: 'all')" in str(info.value)
    assert 'with_bg' in str(info.value) and '--scoring-only' in info.value.fix
    cfg, label = regrade_config(run, protocol='nemo_skills', scoring_only=True)
    regraded = cfg['datasets'][0]
    assert label == 'nemo_skills' and regraded['split'] == 'validation' and regraded['with_bg'] is False
    assert regraded['eval_cfg']['evaluator']['timeout'] == 30
    assert protocols.record(regraded)['name'] == 'nemo_skills+split=validation+with_bg=False'
    # the scoring knobs of the same protocol as the run: nothing to refuse
    assert regrade_config(run, protocol='official_inspect')[0]['datasets'][0]['eval_cfg']['evaluator'][
        'prefilled_steps'] == 'failed'
    with pytest.raises(ConfigError):
        regrade_config(tmp_path)                               # not a run
