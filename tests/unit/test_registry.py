"""Registration where the class lives: a new model type is one file, found by its short name."""
import sys
import textwrap

import pytest

from opencompass_scicode import registry
from opencompass_scicode.errors import ConfigError
from opencompass_scicode.partitioners.limits import asks_endpoint, task_limits

MODEL_FILE = '''
from opencompass_scicode.models.base import BaseModel, Generation
from opencompass_scicode.registry import register


@register
class EchoModel(BaseModel):
    """Answers every step with its own prompt."""
    api_only = True
    request_limits = {'max_concurrency': 6, 'query_per_second': 2.0}
    warm_imports = ('json',)

    def __init__(self, base_url: str, abbr: str = None, max_concurrency: int = None,
                 query_per_second: float = None):
        super().__init__(abbr)
        self.base_url = base_url

    def generate(self, request):
        return Generation(text=request.prompt)
'''


@pytest.fixture
def plugin_package(tmp_path, monkeypatch):
    """A package holding one model file and nothing else, searched as models/ is."""
    package = tmp_path / 'echo_models'
    package.mkdir()
    (package / '__init__.py').write_text('')          # imports nothing: the file alone registers
    (package / 'echo.py').write_text(textwrap.dedent(MODEL_FILE))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, 'LOCATIONS', registry.LOCATIONS + ('echo_models',))
    yield package
    registry._CLASSES.pop('EchoModel', None)
    registry._searched.difference_update({'echo_models', 'echo_models.echo'})
    for name in ('echo_models', 'echo_models.echo'):
        sys.modules.pop(name, None)


def test_a_model_in_a_file_of_its_own_is_a_short_name_with_its_metadata(plugin_package):
    assert 'EchoModel' not in registry._CLASSES                  # nothing imported it yet
    model = registry.build_model({'type': 'EchoModel', 'base_url': 'http://127.0.0.1:9/v1', 'abbr': 'echo',
                                  'run_cfg': {'num_gpus': 0}})
    assert type(model).__module__ == 'echo_models.echo' and model.abbr == 'echo'
    entry = {'type': 'EchoModel', 'base_url': 'http://127.0.0.1:9/v1'}
    # what the planner reads of it without building one
    assert asks_endpoint(entry) == 'http://127.0.0.1:9/v1'
    assert (task_limits(entry, shards=2)['max_concurrency'], task_limits(entry)['query_per_second']) == (3, 2.0)
    assert registry.type_attribute('EchoModel', 'warm_imports') == ('json',)
    assert 'EchoModel' in registry.registered()
    # its options are checked like any other's, in the config's words
    with pytest.raises(ConfigError, match='base_urll'):
        registry.build_model({'type': 'EchoModel', 'base_urll': 'x'}, key='models[0]')


def test_every_shipped_short_name_resolves_to_a_class_that_registered_itself():
    names = registry.registered()
    assert {'ReferenceModel', 'OpenAIChatModel', 'SciCodeDataset', 'SciCodeEvaluator', 'SciCodeSummarizer',
            'LocalRunner', 'SlurmRunner', 'NaivePartitioner', 'NumWorkerPartitioner'} <= set(names)
    for name, cls in names.items():
        assert registry.resolve_type(name) is cls and cls.__name__ == name


def test_a_misspelt_or_unknown_type_is_refused_with_the_names_there_are():
    with pytest.raises(ConfigError) as exc:
        registry.resolve_type('OpenAIChatModl', key='models[0].type')
    assert "did you mean 'OpenAIChatModel'" in str(exc.value) and 'models[0].type' in str(exc.value)
    with pytest.raises(ConfigError, match='cannot import'):
        registry.resolve_type('nowhere.Model')
    # metadata of a type that names nothing is the default: building the entry says why
    assert registry.type_attribute('nowhere.Model', 'api_only', False) is False


def test_one_name_cannot_be_taken_by_two_classes():
    class ReferenceModel:                      # another class of the same name
        pass
    with pytest.raises(ValueError, match="'ReferenceModel' is registered already"):
        registry.register(ReferenceModel)
    assert registry.resolve_type('ReferenceModel').__module__ == 'opencompass_scicode.models.reference'


def test_a_dataset_entry_keeps_its_rules_in_its_class():
    ds = registry.build_dataset({'split': 'validation', 'reader_cfg': {'sample_ids': ['1']},
                                 'infer_cfg': {'mode': 'naive'}})
    assert type(ds).__name__ == 'SciCodeDataset' and ds.sample_ids == ['1']
    old_place = {'split': 'validation', 'eval_cfg': {'evaluator': {'prefilled_mode': 'full'}}}
    assert registry.build_dataset(old_place).prefilled_mode == 'full'
    assert registry.build_evaluator(old_place).prefilled_mode == 'full'
    with pytest.raises(ConfigError, match='differ'):
        registry.build_dataset(dict(old_place, prefilled_mode='official'))
