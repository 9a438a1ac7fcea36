"""The private parts of mmengine that config/mmengine_private.py relies on are there and do what it
expects, and an mmengine outside the tested range is refused. A failure here after an mmengine
upgrade: adapt mmengine_private.py to what changed, then widen TESTED and setup.cfg together."""
import configparser
import inspect

import mmengine
import mmengine.config.config as config_module
import pytest
from mmengine.config import Config
from mmengine.config.lazy import LazyObject
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from helpers import ROOT
from opencompass_scicode.config import load_config
from opencompass_scicode.config.mmengine_private import (TESTED, check_version, lazy_reads_substituted,
                                                         placeholder_name)
from opencompass_scicode.errors import ConfigError

# Config's private functions mmengine_private.py calls -> the parameters it passes, in order.
PRIVATE = {
    '_substitute_predefined_vars': ['filename', 'temp_config_name'],
    '_substitute_env_variables': ['filename', 'temp_config_name'],
    '_pre_substitute_base_vars': ['filename', 'temp_config_name'],
    '_substitute_base_vars': ['cfg', 'base_var_dict', 'base_cfg'],
}


def changed(names):
    """Which of `names` (name -> parameters) Config lacks or takes other parameters for."""
    found = []
    for name, params in names.items():
        func = getattr(Config, name, None)
        if func is None:
            found.append(f'Config.{name} is missing')
        elif list(inspect.signature(func).parameters) != params:
            found.append(f'Config.{name}{inspect.signature(func)}: expected ({", ".join(params)})')
    return found


def test_the_private_functions_used_exist_with_the_parameters_passed():
    assert changed(PRIVATE) == []


def test_a_missing_or_changed_private_function_is_reported(monkeypatch):
    monkeypatch.delattr(Config, '_substitute_base_vars')
    monkeypatch.setattr(Config, '_substitute_env_variables', staticmethod(lambda text: text))
    assert changed(PRIVATE) == ['Config._substitute_env_variables(text): expected (filename, temp_config_name)',
                                'Config._substitute_base_vars is missing']


def test_placeholders_name_what_they_stand_for():
    np = LazyObject('numpy', location='cfg.py, line 1')
    assert placeholder_name(LazyObject('numpy', 'pi')) == 'numpy.pi'       # from numpy import pi
    assert placeholder_name(LazyObject('tqdm', 'tqdm')) == 'tqdm.tqdm'     # from tqdm import tqdm
    assert placeholder_name(np) == 'numpy'                                  # import numpy as np
    assert placeholder_name(np.linalg.norm) == 'numpy.linalg.norm'          # np.linalg.norm
    assert placeholder_name(LazyObject(['a.b', 'a.c'])) == 'a'              # import a.b; import a.c
    assert placeholder_name('numpy.pi') is None


def test_a_placeholder_without_the_expected_attribute_fails_loudly():
    renamed = LazyObject('numpy', 'pi')
    vars(renamed)['_name'] = vars(renamed).pop('_imported')    # as if mmengine renamed it
    with pytest.raises(KeyError):
        placeholder_name(renamed)


LAZY = '''from mmengine.config import read_base
with read_base():
    from .part import value
'''


def test_lazy_import_mode_substitutes_only_through_lazy_reads_substituted(tmp_path, monkeypatch):
    # mmengine reads these files with the `open` of its module's globals: none of its own there.
    assert 'open' not in vars(config_module)
    (tmp_path / 'part.py').write_text("value = '{{$SCICODE_TEST_VALUE:default}}/{{fileBasename}}'\n")
    (tmp_path / 'cfg.py').write_text(LAZY)
    monkeypatch.setenv('SCICODE_TEST_VALUE', 'set')
    # Without it, nothing is substituted. If this fails, mmengine substitutes in lazy-import mode
    # itself now, and lazy_reads_substituted() may go.
    assert Config.fromfile(str(tmp_path / 'cfg.py'))['value'] == '{{$SCICODE_TEST_VALUE:default}}/{{fileBasename}}'
    with lazy_reads_substituted():
        assert Config.fromfile(str(tmp_path / 'cfg.py'))['value'] == 'set/part.py'
    assert 'open' not in vars(config_module)


@pytest.mark.parametrize('version', [mmengine.__version__, '0.10.0', '0.10.7'])
def test_a_tested_mmengine_is_accepted(monkeypatch, version):
    monkeypatch.setattr(mmengine, '__version__', version)
    check_version()
    assert load_config(ROOT / 'configs' / 'eval_scicode.py')['models'][0]['abbr'] == 'reference'


@pytest.mark.parametrize('version', ['0.11.0', '0.11.0rc1', '1.0.0', '0.9.1', '0.10.6', 'unknown'])
def test_an_untested_mmengine_is_refused_naming_it_and_the_fix(monkeypatch, version):
    monkeypatch.setattr(mmengine, '__version__', version)
    with pytest.raises(ConfigError) as info:
        load_config(ROOT / 'configs' / 'eval_scicode.py')
    msg = str(info.value)
    assert f'mmengine {version} is installed' in msg and f'fix: pip install "mmengine-lite{TESTED}"' in msg


def required(setup_cfg):
    """The version range setup.cfg's install_requires gives mmengine-lite."""
    parser = configparser.ConfigParser()
    parser.read_string(setup_cfg)
    lines = parser['options']['install_requires'].split('\n')
    (line,) = [line for line in lines if line.strip().startswith('mmengine-lite')]
    return Requirement(line.strip()).specifier


def test_setup_cfg_requires_the_tested_range():
    assert required((ROOT / 'setup.cfg').read_text()) == SpecifierSet(TESTED)
    # an unbounded requirement, as it was, is told apart
    assert required('[options]\ninstall_requires =\n    mmengine-lite>=0.10\n') != SpecifierSet(TESTED)
