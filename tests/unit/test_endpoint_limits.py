"""What the planner gives each inference task: whether it holds a runner slot (only an API model
without a server and without GPUs holds none), and its share of its endpoint's request limits
(the config's `endpoints`), so that the models asking one base_url never ask more of it together
than the user allows."""
import json

import pytest

from helpers import TINY_PROBLEMS, make_data_dir
from opencompass_scicode.config import validate_config
from opencompass_scicode.errors import ConfigError
from opencompass_scicode.partitioners import NaivePartitioner, NumWorkerPartitioner
from opencompass_scicode.partitioners.limits import check_endpoints, task_limits
from opencompass_scicode.utils.workdir import RunDir

URL = 'http://gpu-node:8000/v1'
OTHER = 'http://other:8000/v1'
SERVE = ['vllm', 'serve', 'm', '--port', '{port}']


def api(abbr, base_url=URL, **kw):
    return dict(type='OpenAIChatModel', abbr=abbr, path=f'org/{abbr}', base_url=base_url, **kw)


@pytest.fixture
def datasets(tmp_path):
    data = make_data_dir(tmp_path / 'data', TINY_PROBLEMS)
    return [dict(abbr='t', type='SciCodeDataset', path=str(data), split='validation', verify_sha256=False)]


def plan(tmp_path, models, datasets, endpoints=None, partitioner=None):
    """{task name: (spec, the model entry of its task file)} of the inference stage."""
    cfg = {'models': models, 'datasets': datasets}
    if endpoints is not None:
        cfg['endpoints'] = endpoints
    run_dir = RunDir(tmp_path / 'w', 'run').create()
    specs = (partitioner or NaivePartitioner()).partition(cfg, run_dir, 'infer')
    return {s.name: (s, json.loads(open(s.config_path).read()).get('model')) for s in specs}


def test_only_an_api_model_without_a_server_or_gpus_holds_no_slot(tmp_path, datasets):
    models = [api('plain'), dict(type='OpenAIChatModel', abbr='served', path='m', server=dict(command=SERVE)),
              api('gpu', run_cfg=dict(num_gpus=1)), dict(type='ReferenceModel', abbr='ref'),
              dict(type='mine.OpenAIChatModel', abbr='mine', path='m', base_url=URL)]
    tasks = plan(tmp_path, models, datasets)
    assert {name: spec.takes_slot for name, (spec, _) in tasks.items()} == {
        'infer/plain': False, 'infer/served': True, 'infer/gpu': True, 'infer/ref': True, 'infer/mine': True}


def test_an_endpoints_limits_are_shared_out_among_the_models_asking_it(tmp_path, datasets):
    models = [api('a'), api('b'), api('own', max_concurrency=1, query_per_second=1.0),
              api('slash', base_url=URL + '/'), api('elsewhere', base_url=OTHER)]
    endpoints = [dict(base_url=URL, max_concurrency=16, query_per_second=8.0)]
    tasks = plan(tmp_path, models, datasets, endpoints)
    limits = {name.split('/')[1]: (entry.get('max_concurrency'), entry.get('query_per_second'))
              for name, (_, entry) in tasks.items()}
    # 4 models ask URL (with or without its trailing slash): 16 / 4 and 8 / 4 each, the model's
    # own limit where lower; another endpoint's model keeps its entry as it was
    assert limits == {'a': (4, 2.0), 'b': (4, 2.0), 'own': (1, 1.0), 'slash': (4, 2.0), 'elsewhere': (None, None)}
    # without `endpoints` every model keeps its own (the type's default, 8, where it gives none)
    alone = plan(tmp_path / 'alone', models, datasets)
    assert all(entry == next(m for m in models if m['abbr'] == name.split('/')[1])
               for name, (_, entry) in alone.items())


def test_shards_of_models_on_one_endpoint_share_its_limits_too(tmp_path, datasets):
    models = [api('a'), api('b', max_concurrency=2)]
    tasks = plan(tmp_path, models, datasets, [dict(base_url=URL, max_concurrency=8)],
                 NumWorkerPartitioner(num_worker=2))
    shares = {name: entry['max_concurrency'] for name, (spec, entry) in tasks.items() if entry}
    # 2 models x 2 shards: 8 / 4 each; b's own 2 over its 2 shards is lower
    assert shares == {'infer/a/part0of2': 2, 'infer/a/part1of2': 2, 'infer/b/part0of2': 1, 'infer/b/part1of2': 1}
    # 4 tasks but 3 requests at once: refused, though one task per model would fit
    with pytest.raises(ConfigError, match='allows 3 requests at once, but 4 inference tasks') as caught:
        plan(tmp_path / 'few', models, datasets, [dict(base_url=URL, max_concurrency=3)],
             NumWorkerPartitioner(num_worker=2))
    assert caught.value.key == 'endpoints[0].max_concurrency' and 'raise it to 4' in caught.value.fix
    plan(tmp_path / 'one', models, datasets, [dict(base_url=URL, max_concurrency=3)])


def test_task_limits_alone():
    entry = api('a', max_concurrency=10)
    assert task_limits(entry, 1, {'max_concurrency': 40}, sharing=4)['max_concurrency'] == 10
    assert task_limits(entry, 2, {'max_concurrency': 40}, sharing=8)['max_concurrency'] == 5
    # the type's default gives way to the endpoint's share, above it or below
    assert task_limits(api('d'), 1, {'max_concurrency': 64}, sharing=2)['max_concurrency'] == 32
    assert task_limits(api('d'), 1, {'max_concurrency': 4}, sharing=2)['max_concurrency'] == 2
    # an endpoint without a rate leaves the model's rate as it was
    assert task_limits(api('q', query_per_second=3.0), 1, {'max_concurrency': 4})['query_per_second'] == 3.0


@pytest.mark.parametrize('endpoints, key, says', [
    (dict(base_url=URL), 'endpoints', 'must be a list of dicts'),
    (['http://h/v1'], 'endpoints[0]', 'must be a dict'),
    ([dict(max_concurrency=4)], 'endpoints[0].base_url', 'needs a base_url'),
    ([dict(base_url=URL)], 'endpoints[0]', 'sets no limit'),
    ([dict(base_url=URL, max_concurency=4)], 'endpoints[0].max_concurency', "did you mean 'max_concurrency'"),
    ([dict(base_url=URL, max_concurrency=0)], 'endpoints[0].max_concurrency', 'positive'),
    ([dict(base_url=URL, max_concurrency=2.5)], 'endpoints[0].max_concurrency', 'whole number'),
    ([dict(base_url=URL, query_per_second=-1)], 'endpoints[0].query_per_second', 'positive'),
    ([dict(base_url=URL, max_concurrency=4), dict(base_url=URL + '/', max_concurrency=8)],
     'endpoints[1].base_url', 'given twice'),
])
def test_a_wrong_endpoints_entry_is_refused_naming_its_key(endpoints, key, says):
    with pytest.raises(ConfigError) as caught:
        check_endpoints(endpoints)
    assert caught.value.key == key and says in str(caught.value) and caught.value.fix


def test_the_config_check_refuses_too_small_an_endpoint_and_notes_one_no_model_asks(datasets):
    cfg = {'models': [api('a'), api('b'), api('c')], 'datasets': datasets,
           'endpoints': [dict(base_url=URL, max_concurrency=2)]}
    with pytest.raises(ConfigError, match='allows 2 requests at once, but 3 inference tasks') as caught:
        validate_config(cfg, file='cfg.py')
    assert caught.value.file == 'cfg.py'
    cfg['endpoints'] = [dict(base_url=URL, max_concurrency=3), dict(base_url=OTHER, query_per_second=1)]
    assert validate_config(cfg) == [f'endpoints: no API model with a base_url of {OTHER} in `models`; '
                                    f'its limits apply to nothing']
    cfg['endpoints'] = cfg['endpoints'][:1]
    assert validate_config(cfg) == []
