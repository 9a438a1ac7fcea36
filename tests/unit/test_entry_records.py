"""Config entries are checked against typed records: each class's options record (made from its
constructor, its defaults the class's own) and the records of the sections between. Errors keep
the config's form (key, what is wrong, fix, "did you mean"); the records give the reference its
types and defaults."""
from typing import Optional

import pytest

from opencompass_scicode.config.records import ConfigFile, EvalCfg, RunCfg, StageSection
from opencompass_scicode.datasets.scicode import SciCodeDataset
from opencompass_scicode.errors import ConfigError
from opencompass_scicode.evaluation.evaluator import STEP_TIMEOUT_S, SciCodeEvaluator
from opencompass_scicode.inference.settings import InferConfig
from opencompass_scicode.utils.options import accepted_options, check_options, options_record, options_schema


class Widget:
    def __init__(self, size: int, ratio: float = 0.5, label: Optional[str] = None, json=None, **more):
        pass


class Closed:
    def __init__(self, size: int = 1):
        pass


def error(cls, options, key='widget'):
    with pytest.raises(ConfigError) as info:
        check_options(cls, options, key)
    return info.value


def test_a_classs_record_has_its_options_types_and_defaults():
    schema = options_schema(SciCodeEvaluator)
    assert schema['properties']['timeout']['default'] == STEP_TIMEOUT_S
    assert schema['properties']['memory_limit_mb']['default'] == 8192
    assert options_schema(InferConfig)['properties']['n']['default'] == 1
    assert accepted_options(Widget) == ['size', 'ratio', 'label', 'json']      # `json` kept as the class names it
    assert options_record(InferConfig) is InferConfig


def test_what_fits_passes():
    check_options(Widget, {'size': 3, 'ratio': 1, 'label': None, 'json': {'a': 1}, 'anything': 'else'}, 'w')
    check_options(EvalCfg, {'evaluator': {'type': 'SciCodeEvaluator'}, 'pass_at_k': [1, 5]}, 'e')
    check_options(RunCfg, {'num_gpus': 2}, 'r')


@pytest.mark.parametrize('cls, options, key, says', [
    (Closed, {'sise': 2}, 'widget.sise', "did you mean 'size'? accepted options: size"),
    (Widget, {'size': True}, 'widget.size', 'must be whole number, got bool True'),
    (Widget, {'size': 1, 'ratio': '0.5'}, 'widget.ratio', 'must be number, got str'),
    (Widget, {'size': 1, 'label': 3}, 'widget.label', 'must be str or None'),
    (Widget, {}, 'widget.size', "Widget needs 'size'"),
    (RunCfg, {'num_gpus': -1}, 'widget.num_gpus', 'must be a whole number >= 0, got -1'),
    (RunCfg, {'num_gpu': 1}, 'widget.num_gpu', "did you mean 'num_gpus'"),
    (EvalCfg, {'pass_at_k': [0]}, 'widget.pass_at_k', 'list of positive whole numbers'),
    (EvalCfg, {'evaluator': {'timeout': 5}}, 'widget.evaluator', 'needs a `type`'),
    (EvalCfg, {'evaluater': {}}, 'widget.evaluater', "did you mean 'evaluator'"),
    (StageSection, {'runer': {}}, 'widget.runer', "did you mean 'runner'"),
    (InferConfig, {'n': 0}, 'widget.n', 'must be positive'),
    (InferConfig, {'mode': 'agentic'}, 'widget.mode', "'naive', 'chat', 'tool_use'"),
    (SciCodeDataset, {'split': 'valdation'}, 'widget.split', "unknown split 'valdation'"),
    (SciCodeDataset, {'split': 'valdation'}, 'widget.split', "did you mean 'validation'? use one of 'validation', "
                                                             "'test', 'all'"),
    (SciCodeEvaluator, {'prefilled_mode': 'ful'}, 'widget.prefilled_mode', "unknown prefilled_mode 'ful'"),
    (SciCodeDataset, {'split': 3}, 'widget.split', 'must be str, got int 3'),
    (ConfigFile, {'models': [], 'datasets': [], 'work_dir': 1}, 'work_dir', 'must be str'),
])
def test_what_does_not_fit_is_refused_in_the_configs_words(cls, options, key, says):
    err = error(cls, options, key=None if cls is ConfigFile else 'widget')
    assert err.key == key and says in str(err) and err.fix



def test_the_config_files_defaults_are_its_records():
    assert ConfigFile.default('work_dir') == 'outputs/default'
    assert ConfigFile.default('runner') == {'type': 'LocalRunner'}
    ConfigFile.default('runner')['type'] = 'SlurmRunner'             # a fresh copy each time
    assert ConfigFile.default('runner') == {'type': 'LocalRunner'}
    assert ConfigFile.default('summarizer') == {'type': 'SciCodeSummarizer'}
