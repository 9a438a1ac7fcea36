import os
import shutil
import textwrap

import pytest

from helpers import ROOT, run_cli
from opencompass_scicode.config import load_config, validate_config
from opencompass_scicode.errors import ConfigError

DEFAULT = ROOT / 'configs' / 'eval_scicode.py'


def write(tmp_path, text, name='cfg.py'):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def error_of(path):
    with pytest.raises(ConfigError) as info:
        validate_config(load_config(path), file=path)
    return str(info.value)


def test_default_config_loads_and_validates():
    cfg = load_config(DEFAULT)
    validate_config(cfg, file=DEFAULT)
    assert [d['abbr'] for d in cfg['datasets']] == ['scicode_validation',
                                                    'scicode_validation_with_background']
    assert cfg['models'][0]['abbr'] == 'reference'
    assert cfg['datasets'][0]['eval_cfg']['evaluator']['timeout'] == 1800


def test_base_inheritance_overrides_models_and_keeps_datasets(tmp_path):
    path = write(tmp_path, f'''
        from opencompass_scicode.models import DummyModel
        _base_ = [{str(DEFAULT)!r}]
        models = [dict(type=DummyModel, abbr='dummy')]
        work_dir = 'outputs/elsewhere'
    ''')
    cfg = load_config(path)
    validate_config(cfg, file=path)
    assert [m['abbr'] for m in cfg['models']] == ['dummy']
    assert len(cfg['datasets']) == 2 and cfg['work_dir'] == 'outputs/elsewhere'


def test_base_with_relative_path_and_dict_merge(tmp_path):
    (tmp_path / 'base.py').write_text("x = dict(a=1, b=2)\nmodels = []\n")
    path = write(tmp_path, "_base_ = './base.py'\nx = dict(b=3)\n")
    cfg = load_config(path)
    assert cfg['x'] == {'a': 1, 'b': 3}


def test_unknown_dataset_key_names_file_key_and_fix(tmp_path):
    path = write(tmp_path, f'''
        _base_ = [{str(DEFAULT)!r}]
        datasets = [dict(abbr='x', split='validation', splt='test')]
    ''')
    msg = error_of(path)
    assert str(path) in msg and 'datasets[0].splt' in msg and "did you mean 'split'" in msg


@pytest.mark.parametrize('entry, key, says', [
    ("with_bg='yes'", 'datasets[0].with_bg', 'must be bool'),                     # wrong type
    ("split='dev'", 'datasets[0].split', "'validation', 'test', 'all'"),          # unknown split
    # what each class accepts, from its signature and annotations:
    ("eval_cfg=dict(evaluator=dict(type='SciCodeEvaluator', timeout='5'))",
     'datasets[0].eval_cfg.evaluator.timeout', 'must be number'),
    ("eval_cfg=dict(evaluator=dict(type='SciCodeEvaluator', max_workers=0))",
     'datasets[0].eval_cfg.evaluator.max_workers', 'must be positive'),
    ("infer_cfg=dict(mode='agentic')", 'datasets[0].infer_cfg.mode', "'naive', 'chat', 'tool_use'"),
    ("infer_cfg=dict(tool_use_max_loops=0)", 'datasets[0].infer_cfg.tool_use_max_loops', 'must be positive'),
    ("infer_cfg=dict(code_timeout_seconds=True)", 'datasets[0].infer_cfg.code_timeout_seconds', 'must be number'),
    ("reader_cfg=dict(verify_sha=False)", 'datasets[0].reader_cfg.verify_sha', "did you mean 'verify_sha256'"),
    ("sample_ids=[1.5]", 'datasets[0].sample_ids', 'problem ids must be strings'),
])
def test_bad_dataset_value(tmp_path, entry, key, says):
    path = write(tmp_path, f'''
        _base_ = [{str(DEFAULT)!r}]
        datasets = [dict(abbr='x', {entry})]
    ''')
    msg = error_of(path)
    assert key in msg and says in msg


def test_every_mode_a_config_may_name_is_one_inference_implements():
    from opencompass_scicode.inference.modes import GENERATORS
    from opencompass_scicode.inference.settings import MODES
    assert tuple(GENERATORS) == MODES


def test_evaluator_option_checked(tmp_path):
    path = write(tmp_path, f'''
        from opencompass_scicode.evaluation import SciCodeEvaluator
        _base_ = [{str(DEFAULT)!r}]
        datasets = [dict(abbr='x', eval_cfg=dict(evaluator=dict(type=SciCodeEvaluator, timout=5)))]
    ''')
    msg = error_of(path)
    assert 'datasets[0].eval_cfg.evaluator.timout' in msg and "did you mean 'timeout'" in msg
    path = write(tmp_path, f'''
        from opencompass_scicode.evaluation import SciCodeEvaluator
        _base_ = [{str(DEFAULT)!r}]
        datasets = [dict(abbr='x', eval_cfg=dict(evaluator=dict(type=SciCodeEvaluator,
                                                               prefilled_mode='half')))]
    ''', name='c2.py')
    assert 'prefilled_mode' in error_of(path)


def test_unknown_model_option_and_unknown_type(tmp_path):
    path = write(tmp_path, '''
        from opencompass_scicode.models import DummyModel
        datasets = [dict(abbr='x')]
        models = [dict(type=DummyModel, temprature=0)]
    ''')
    msg = error_of(path)
    assert 'models[0].temprature' in msg
    path = write(tmp_path, "datasets = [dict(abbr='x')]\nmodels = [dict(type='NoSuchModel')]\n", 'c3.py')
    assert 'models[0].type' in error_of(path)


def test_misspelled_top_level_key(tmp_path):
    path = write(tmp_path, "datasets = [dict(abbr='x')]\nmodles = [dict(type='DummyModel')]\n")
    msg = error_of(path)
    assert "no `models` defined" in msg and "did you mean 'models'" in msg


def test_missing_config_and_missing_base(tmp_path):
    with pytest.raises(ConfigError, match='does not exist'):
        load_config(tmp_path / 'nope.py')
    path = write(tmp_path, "_base_ = ['./missing.py']\n")
    with pytest.raises(ConfigError, match='missing.py'):
        load_config(path)


def test_duplicate_abbr(tmp_path):
    path = write(tmp_path, "datasets = [dict(abbr='x'), dict(abbr='x')]\nmodels = [dict(type='DummyModel')]\n")
    assert 'datasets[1].abbr' in error_of(path)


def test_config_is_dumped_and_reloaded_with_types_as_import_paths(tmp_path):
    from opencompass_scicode.config import dump_config
    from opencompass_scicode.registry import build_model
    cfg = load_config(DEFAULT)
    dump_config(cfg, tmp_path / 'dumped.py')
    again = load_config(tmp_path / 'dumped.py')
    type_path = again['models'][0]['type']
    assert isinstance(type_path, str) and type_path.startswith('opencompass_scicode.models.')
    assert build_model(again['models'][0]).abbr == 'reference'


def test_good_options_pass_the_same_checks(tmp_path):
    path = write(tmp_path, f'''
        _base_ = [{str(DEFAULT)!r}]
        datasets = [dict(abbr='x', sample_ids=['1', 3], reader_cfg=dict(verify_sha256=False),
                         infer_cfg=dict(mode='tool_use', code_timeout_seconds=30, tool_use_max_loops=4),
                         eval_cfg=dict(evaluator=dict(type='SciCodeEvaluator', timeout=60.5,
                                                      max_workers=None)))]
    ''')
    validate_config(load_config(path), file=path)


def test_unnamed_models_are_named_by_their_own_rule(tmp_path):
    from opencompass_scicode.config import fill_abbrs
    path = write(tmp_path, f'''
        _base_ = [{str(DEFAULT)!r}]
        models = [dict(type='OpenAIChatModel', path='org/model-a', key='ENV'),
                  dict(type='OpenAIChatModel', path='org/model-b', key='ENV'),
                  dict(type='GeneratedCodeModel', path='/somewhere/gen_dir'),
                  dict(type='DummyModel')]
    ''')
    cfg = load_config(path)
    validate_config(cfg, file=path)
    assert [m['abbr'] for m in fill_abbrs(cfg)['models']] == ['model-a', 'model-b', 'gen_dir', 'dummy']
    from opencompass_scicode.models import DummyModel, GeneratedCodeModel
    assert DummyModel().abbr == 'dummy' and GeneratedCodeModel('/somewhere/gen_dir').abbr == 'gen_dir'


def test_stage_sections_choose_partitioner_and_runner(tmp_path):
    from opencompass_scicode.cli import parse_args
    from opencompass_scicode.launch.plan import build_stage
    from opencompass_scicode.partitioners import NaivePartitioner
    from opencompass_scicode.runners import LocalRunner

    class OnePerModel(NaivePartitioner):
        pass

    cfg = {'runner': dict(type=LocalRunner, max_num_workers=1),
           'infer': dict(runner=dict(type=LocalRunner, max_num_workers=3)),
           'eval': dict(partitioner=dict(type=OnePerModel))}
    args = parse_args(['cfg.py'])
    partitioner, runner = build_stage(cfg, 'infer', args)
    assert type(partitioner) is NaivePartitioner and runner.max_num_workers == 3
    partitioner, runner = build_stage(cfg, 'eval', args)
    assert type(partitioner) is OnePerModel and runner.max_num_workers == 1
    assert build_stage(cfg, 'targets', args)[0].__class__ is OnePerModel   # targets belong to evaluation
    assert build_stage(cfg, 'infer', parse_args(['cfg.py', '--max-num-workers', '5']))[1].max_num_workers == 5


def test_stage_section_keys_are_checked(tmp_path):
    path = write(tmp_path, f'''
        _base_ = [{str(DEFAULT)!r}]
        infer = dict(runer=dict(type='LocalRunner'))
    ''')
    msg = error_of(path)
    assert 'infer.runer' in msg and "did you mean 'runner'" in msg
    path = write(tmp_path, f'''
        _base_ = [{str(DEFAULT)!r}]
        eval = dict(runner=dict(type='LocalRunner', max_workers=2))
    ''', name='c2.py')
    assert 'eval.runner.max_workers' in error_of(path)
def line_of(path, text):
    """1-based number of the line of `path` that contains `text`."""
    (number,) = [i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line]
    return number


def load_error(path):
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return str(info.value)


def test_base_config_body_is_plain_python(tmp_path):
    # In a virtualenv mmengine counts the standard library as third-party, so there
    # `import copy` alone made it read this body in lazy-import mode, where
    # copy.deepcopy is a placeholder that cannot be called; `os` does it everywhere.
    (tmp_path / 'base.py').write_text(f"_base_ = [{str(DEFAULT)!r}]\nx = dict(a=1, b=dict(c=2))\n")
    path = write(tmp_path, '''
        import copy
        import os
        from opencompass_scicode.models import DummyModel
        _base_ = ['./base.py']
        dummy = dict(type=DummyModel, abbr='dummy')
        models = [dummy, dict(copy.deepcopy(dummy), abbr='dummy2')]
        x = dict(b=dict(d=os.path.join('a', 'b'), file=os.path.basename(__file__)))
        work_dir = _base_.work_dir + '_' + str(len(_base_.datasets))
    ''')
    cfg = load_config(path)
    validate_config(cfg, file=path)
    assert [m['abbr'] for m in cfg['models']] == ['dummy', 'dummy2']
    assert cfg['x'] == {'a': 1, 'b': {'c': 2, 'd': os.path.join('a', 'b'), 'file': 'cfg.py'}}
    assert [d['abbr'] for d in cfg['datasets']] == ['scicode_validation',
                                                    'scicode_validation_with_background']
    assert cfg['work_dir'] == 'outputs/default_2'


def test_base_config_may_also_use_read_base(tmp_path):
    (tmp_path / 'parts').mkdir()
    (tmp_path / 'parts' / 'dummy.py').write_text(
        "from opencompass_scicode.models import DummyModel\n"
        "dummy_models = [dict(type=DummyModel, abbr='dummy')]\n")
    path = write(tmp_path, f'''
        from mmengine.config import read_base
        _base_ = [{str(DEFAULT)!r}]
        with read_base():
            from .parts.dummy import dummy_models
        models = dummy_models + [dict(dummy_models[0], abbr='dummy2')]
    ''')
    cfg = load_config(path)
    validate_config(cfg, file=path)
    assert [m['abbr'] for m in cfg['models']] == ['dummy', 'dummy2']
    assert len(cfg['datasets']) == 2


PLAIN = "datasets = [dict(abbr='x')]\nmodels = [dict(type='DummyModel')]\nwork_dir = foo\n"
READ_BASE = '''from mmengine.config import read_base

with read_base():
    from .models.dummy import models
datasets = [dict(abbr='x')]
work_dir = foo
'''


@pytest.mark.parametrize('kind', ['plain', 'base', 'read_base'])
def test_name_error_names_file_line_and_message(tmp_path, kind):
    if kind == 'read_base':
        shutil.copytree(ROOT / 'configs' / 'models', tmp_path / 'models')
    text = {'plain': PLAIN, 'base': f"_base_ = [{str(DEFAULT)!r}]\n\n" + PLAIN, 'read_base': READ_BASE}[kind]
    path = write(tmp_path, text)
    msg = load_error(path)
    assert msg == f"{path}, line {line_of(path, 'foo')}: NameError: name 'foo' is not defined"


@pytest.mark.parametrize('kind', ['base', 'read_base'])
def test_error_in_a_base_file_names_that_file_and_line(tmp_path, kind):
    (tmp_path / 'parts').mkdir()
    base = tmp_path / 'parts' / 'broken.py'
    base.write_text("from opencompass_scicode.models import DummyModel\n\n"
                    "models = [dict(type=DummyModel, abbr=undefined_name)]\n")
    if kind == 'base':
        path = write(tmp_path, "_base_ = ['parts/broken.py']\nwork_dir = 'x'\n")
    else:
        path = write(tmp_path, "from mmengine.config import read_base\n\n"
                               "with read_base():\n    from .parts.broken import models\n")
    msg = load_error(path)
    assert msg.startswith(f"{base}, line 3: NameError: name 'undefined_name' is not defined")


@pytest.mark.parametrize('code, says', [
    ('steps = int(np.sqrt(16))', 'numpy.sqrt'),                     # calls an imported function
    ('tau = np.pi * 2', "unsupported operand type(s) for *: 'LazyAttr' and 'int'"),
])
def test_lazy_import_mode_failure_says_what_to_change(tmp_path, code, says):
    shutil.copytree(ROOT / 'configs' / 'models', tmp_path / 'models')
    path = write(tmp_path, READ_BASE.replace('work_dir = foo', code).replace(
        'from mmengine', 'import numpy as np\nfrom mmengine'))
    msg = load_error(path)
    assert msg.startswith(f'{path}, line {line_of(path, code)}: ') and says in msg
    assert 'lazy-import mode' in msg and '_base_' in msg and '\n  fix: ' in msg
    # What the fix says works: the same line in a config that uses `_base_`.
    path = write(tmp_path, f"import numpy as np\n_base_ = ['cfg.py']\n{code}\n", name='child.py')
    (tmp_path / 'cfg.py').write_text(READ_BASE.replace('work_dir = foo\n', ''))
    assert load_config(path)['models'][0]['abbr'] == 'dummy'
    # ... and so does a function that imports with a plain `import` line, here.
    function = 'def root(v):\n    import numpy\n    return int(numpy.sqrt(v))\nsteps = root(16)'
    path = write(tmp_path, READ_BASE.replace('work_dir = foo', function), name='function.py')
    assert load_config(path)['steps'] == 4


def test_a_price_is_checked(tmp_path, monkeypatch):
    path = write(tmp_path, f'''
        _base_ = [{str(DEFAULT)!r}]
        models = [dict(type='OpenAIChatModel', path='m', key='ENV', price=dict(input=1.0, outptu=2.0))]
    ''')
    cfg = load_config(path)
    validate_config(cfg, file=path)          # a model is built only before inference
    from opencompass_scicode.registry import build_model
    monkeypatch.setenv('OPENAI_API_KEY', 'x')
    with pytest.raises(ConfigError, match='price must be dict'):
        build_model(cfg['models'][0])


@pytest.mark.parametrize('where, entry, key, says', [
    # numbers out of range, refused with the key, the range and an example (the first three used to plan and run)
    ('model', 'max_concurrency=-1', 'models[0].max_concurrency', 'must be positive (a whole number >= 1), got -1'),
    ('model', 'query_per_second=0', 'models[0].query_per_second', 'must be positive (a number > 0 or None), got 0'),
    ('model', 'retries=-1', 'models[0].retries', 'must be 0 or more (a whole number >= 0), got -1'),
    ('model', 'max_concurrency=2.5', 'models[0].max_concurrency', 'a whole number'),
    ('model', 'timeout=0', 'models[0].timeout', 'must be positive'),
    ('model', 'max_retry_wait=-3', 'models[0].max_retry_wait', '0 or more'),
    ('model', 'temperature=-0.5', 'models[0].temperature', '0 or more'),
    ('model', 'max_out_len=0', 'models[0].max_out_len', 'must be positive'),
    ('runner', 'max_num_workers=0', 'runner.max_num_workers', 'must be positive'),
    ('runner', 'max_num_workers=-2', 'runner.max_num_workers', 'must be positive'),
    ('dataset', 'infer_cfg=dict(n=0)', 'datasets[0].infer_cfg.n', 'must be positive'),
    ('dataset', 'infer_cfg=dict(max_out_len=-1)', 'datasets[0].infer_cfg.max_out_len', 'must be positive'),
])
def test_numbers_out_of_range_stop_before_any_work(tmp_path, where, entry, key, says):
    model = "dict(type='OpenAIChatModel', abbr='api', path='m', base_url='http://127.0.0.1:9/v1', key='sk-x'"
    parts = {'model': f"models = [{model}, {entry})]",
             'runner': f"models = [{model})]\nrunner = dict(type='LocalRunner', {entry})",
             'dataset': f"models = [{model})]\ndatasets = [dict(abbr='x', {entry})]"}
    path = tmp_path / 'cfg.py'
    path.write_text(f'_base_ = [{str(DEFAULT)!r}]\n{parts[where]}\n')
    proc = run_cli([path, '--dry-run', '-w', tmp_path / 'w'], timeout=120)
    msg = ' '.join(proc.stderr.split())
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert key in msg and says in msg and 'fix: e.g.' in msg, msg
    assert not (tmp_path / 'w').exists()


def test_numbers_in_range_are_taken():
    from opencompass_scicode.models import OpenAIChatModel
    from opencompass_scicode.runners import LocalRunner
    model = OpenAIChatModel(path='m', base_url='http://127.0.0.1:9/v1', key='sk-x', max_concurrency=1,
                            query_per_second=0.5, retries=0, max_retry_wait=0, temperature=0, max_out_len=1)
    assert (model.max_concurrency, model.query_per_second, model.retries) == (1, 0.5, 0)
    assert LocalRunner(max_num_workers=3).max_num_workers == 3


# `{{$VAR:default}}` and `{{fileDirname}}` in a file that is plain Python (mmengine substitutes
# them) or read in lazy-import mode (an import of a third-party module: mmengine does not).
SUBSTITUTED = '''
_model = '{{$SCICODE_TEST_MODEL:org/default-model}}'
models = [dict(type='DummyModel', abbr='m-' + _model.split('/')[-1], path=_model, where='{{fileDirname}}')]
'''
IMPORTS = {'plain': '', 'lazy': 'from opencompass_scicode.models import DummyModel\n'}
LOADS = {'directly': None,
         'through read_base': 'from mmengine.config import read_base\n\n'
                              'with read_base():\n    from .parts.model import models\n',
         'through _base_': "_base_ = ['parts/model.py']\n"}


@pytest.mark.parametrize('how', list(LOADS))
@pytest.mark.parametrize('kind', list(IMPORTS))
@pytest.mark.parametrize('value, abbr', [(None, 'm-default-model'), ('org/from-env', 'm-from-env')])
def test_substitutions_happen_however_a_file_is_loaded(tmp_path, monkeypatch, how, kind, value, abbr):
    (tmp_path / 'parts').mkdir()
    part = tmp_path / 'parts' / 'model.py'
    part.write_text(IMPORTS[kind] + SUBSTITUTED)
    if value is None:
        monkeypatch.delenv('SCICODE_TEST_MODEL', raising=False)
    else:
        monkeypatch.setenv('SCICODE_TEST_MODEL', value)
    path = part if LOADS[how] is None else write(tmp_path, LOADS[how])
    model = load_config(path)['models'][0]
    assert (model['abbr'], model['path'], model['where']) == (abbr, value or 'org/default-model',
                                                              str(part.parent))
