"""Every private part of mmengine the config loader relies on, in one place, behind a version check.

mmengine has no public API for these (0.10.x):

- The `{{fileDirname}}`-style, `{{$VAR:default}}` and `{{_base_.key}}` substitutions
  (Config._substitute_predefined_vars, _substitute_env_variables, _pre_substitute_base_vars,
  _substitute_base_vars). The loader runs `_base_` files itself (mmengine refuses `_base_` over
  lazy-import files) and must substitute them as mmengine does.
- In lazy-import mode (read_base(), third-party imports) mmengine substitutes nothing, in the file
  and in the files its read_base() imports. It reads them with the `open` it finds in the globals
  of mmengine.config.config, while `ConfigDict.lazy` is True (set for that parse only); so
  lazy_reads_substituted() puts an `open` there that hands back the substituted text.
- The dotted name a LazyObject stands for: the name after `import` is kept only in `_imported`
  (`str()` and `.module` cannot tell `from tqdm import tqdm` from `import tqdm`).

tests/unit/test_mmengine_private.py checks each against the installed mmengine. TESTED is the range of
versions that passed it; setup.cfg pins the same. check_version() refuses any other version, so
that a changed private part fails with a clear message instead of loading configs wrongly.
"""
import builtins
import contextlib
import io
import os
import tempfile
from pathlib import Path
from typing import Iterator, Optional

import mmengine
import mmengine.config.config as config_module
from mmengine.config import Config, ConfigDict
from mmengine.config.lazy import LazyAttr, LazyObject
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from ..errors import ConfigError

# 0.10.0 to 0.10.7 have the same private parts; mmengine-lite 0.10.6 alone cannot be imported
# without torch (its registry imports it), which this package does not need.
TESTED = '>=0.10,!=0.10.6,<0.11'


def check_version() -> None:
    """ConfigError unless the installed mmengine is in TESTED."""
    try:
        ok = SpecifierSet(TESTED).contains(Version(mmengine.__version__), prereleases=True)
    except InvalidVersion:
        ok = False
    if not ok:
        raise ConfigError(f'mmengine {mmengine.__version__} is installed; the config loader was tested '
                          f'with mmengine-lite{TESTED} only (it relies on parts of mmengine that may '
                          f'change between versions)',
                          fix=f'pip install "mmengine-lite{TESTED}"')


def _substituted(path, base_vars):
    """(text of `path` after mmengine's substitutions, `{{_base_.key}}` placeholders or None)."""
    with tempfile.TemporaryDirectory(prefix='scicode-config-') as tmp:
        out = os.path.join(tmp, Path(path).name)
        Config._substitute_predefined_vars(str(path), out)
        Config._substitute_env_variables(out, out)
        placeholders = Config._pre_substitute_base_vars(out, out) if base_vars else None
        return Path(out).read_text(encoding='utf-8'), placeholders


def substituted_source(path) -> tuple[str, Optional[dict]]:
    """The text of a file with `_base_`, substituted as mmengine does, and the placeholders left
    for `{{_base_.key}}` (for substitute_base_vars, once the bases are merged)."""
    return _substituted(path, base_vars=True)


def substitute_base_vars(cfg: dict, placeholders: dict, bases: dict) -> dict:
    """`cfg` (a dict) with the placeholders of substituted_source replaced by values of `bases`."""
    return Config._substitute_base_vars(cfg, placeholders, bases)


@contextlib.contextmanager
def lazy_reads_substituted() -> Iterator[None]:
    """While active, the config files mmengine reads in lazy-import mode come with the
    `{{fileDirname}}` and `{{$VAR:default}}` substitutions plain mode makes (none of their paths
    changes: `__file__`, relative imports and error locations stay those of the real files).
    Not thread-safe: it swaps a module global, as loading a config is done by one thread."""
    busy = False

    def open_(file, mode='r', *args, **kwargs):
        nonlocal busy
        if busy or not ConfigDict.lazy or mode != 'r' or not str(file).endswith('.py'):
            return builtins.open(file, mode, *args, **kwargs)
        busy = True                 # mmengine's substitution reads the file with this `open` too
        try:
            return io.StringIO(_substituted(file, base_vars=False)[0])
        finally:
            busy = False

    config_module.open = open_
    try:
        yield
    finally:
        del config_module.open


def placeholder_name(value) -> Optional[str]:
    """The dotted name a lazy-import placeholder stands for (`numpy.pi` for `np.pi` or
    `from numpy import pi`; `numpy` for `import numpy as np`), or None for any other value."""
    if isinstance(value, LazyAttr):
        return f'{value.module}.{value.name}'
    if isinstance(value, LazyObject):
        imported = vars(value)['_imported']     # vars(): a LazyObject makes up any missing attribute
        return f'{value.module}.{imported}' if imported else value.module
    return None
