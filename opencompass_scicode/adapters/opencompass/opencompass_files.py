"""Where OpenCompass's own config files are, when they are anywhere: `opencompass.configs.*`.

Every OpenCompass eval config imports its parts as `from opencompass.configs.datasets....
import ...` inside read_base(). Those modules are read from, in order:
  1. the directory OPENCOMPASS_CONFIGS names (an OpenCompass checkout's `opencompass/configs`),
  2. the `configs/` of an installed OpenCompass (found, never imported),
  3. for SciCode's dataset and summarizer configs, the stand-ins of opencompass_settings.py.
A module none of them holds (a model config without OpenCompass) stops loading with the file
and line that import it, and what to do.
"""
import importlib.util
import os
from pathlib import Path
from typing import Optional, Union

from ...errors import ConfigError
from .names import PACKAGE
from .opencompass_settings import module_variables

ENV = 'OPENCOMPASS_CONFIGS'
CONFIGS = f'{PACKAGE}.configs'


def installed_configs() -> Optional[Path]:
    """The configs/ of an installed OpenCompass, or None (the package is located, not imported)."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or ()) if spec else ():
        if (Path(folder) / 'configs').is_dir():
            return Path(folder) / 'configs'
    return None


def configs_dir() -> Optional[Path]:
    """OpenCompass's configs directory: OPENCOMPASS_CONFIGS, else an installed OpenCompass's;
    None without either."""
    named = os.environ.get(ENV)
    if named:
        path = Path(named).expanduser()
        if not path.is_dir():
            raise ConfigError(f'{ENV}={named}: no such directory',
                              fix=f'point {ENV} at an OpenCompass checkout\'s opencompass/configs, or unset it')
        return path
    return installed_configs()


def module_source(module: str, file=None, line=None) -> Union[Path, dict]:
    """What `from <module> import ...` inside read_base() reads, for a module under
    `opencompass.configs`: the file's Path in OpenCompass's configs, else the stand-in's variables
    (a dict). ConfigError (naming `file` and `line`, the importing place) when neither exists."""
    relative = module[len(CONFIGS) + 1:] if module.startswith(CONFIGS + '.') else None
    if relative is None:
        raise ConfigError(f'read_base(): {module} is not a config module of OpenCompass\'s',
                          file=file, line=line, fix=f'import OpenCompass\'s configs as {CONFIGS}.<folder>.<file>')
    folder = configs_dir()
    if folder is not None:
        path = folder.joinpath(*relative.split('.')).with_suffix('.py')
        if path.is_file():
            return path
    variables = module_variables(relative)
    if variables is not None:
        return variables
    where = f'{folder} has no {relative.replace(".", "/")}.py' if folder else 'OpenCompass is not installed here'
    raise ConfigError(f'read_base(): {module}: {where}, and of OpenCompass\'s configs this package stands in '
                      f'only for SciCode\'s datasets and summarizer', file=file, line=line,
                      fix=f'install OpenCompass (its config files are then read, never imported), or set {ENV} '
                          f'to a checkout\'s opencompass/configs, or copy the file beside this config and '
                          f'import it relatively (from .{relative.rpartition(".")[2]} import ...)')
