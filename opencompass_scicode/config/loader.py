"""Loads mmengine-style Python configs, including `_base_` over read_base() files.

mmengine refuses a `_base_` chain whose files use `read_base()` or import
classes (its lazy-import mode), yet that is how our configs are written. So
`_base_` is handled here: bases are loaded (each with Config.fromfile), then
the child's own assignments are merged over them with mmengine's merge rules
(dicts merge key by key, `_delete_=True` replaces, lists are replaced).
"""
import ast
import os
import tempfile
from pathlib import Path

from mmengine.config import Config

from ..errors import ConfigError

BASE_KEY = '_base_'


def _split_base(path):
    source = Path(path).read_text(encoding='utf-8')
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise ConfigError(f'syntax error on line {exc.lineno}: {exc.msg}', file=path,
                          fix='fix the Python syntax of the config file')
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == BASE_KEY):
            try:
                bases = ast.literal_eval(node.value)
            except ValueError:
                raise ConfigError('must be a string or a list of strings', file=path, key=BASE_KEY)
            bases = [bases] if isinstance(bases, str) else list(bases)
            lines = source.splitlines(keepends=True)
            # Blank the assignment, keeping line numbers for error messages.
            for i in range(node.lineno - 1, node.end_lineno):
                lines[i] = '\n'
            return bases, ''.join(lines)
    return [], source


def _fromfile(path, shown_as=None):
    shown_as = shown_as or path
    try:
        return Config.fromfile(str(path), format_python_code=False)
    except ConfigError:
        raise
    except FileNotFoundError as exc:
        raise ConfigError(f'file not found ({exc})', file=shown_as,
                          fix='check the path (relative paths in read_base/_base_ start at the config file)')
    except Exception as exc:
        raise ConfigError(f'could not be loaded: {type(exc).__name__}: {exc}', file=shown_as)


def _plain_dict(cfg):
    return {k: v for k, v in cfg._cfg_dict.to_dict().items()}


def load_config(path):
    """Returns an mmengine Config; raises ConfigError naming the file on failure."""
    path = Path(path).resolve()
    if not path.is_file():
        raise ConfigError('config file does not exist', file=path,
                          fix='pass the path of a Python config, e.g. configs/eval_scicode.py')
    bases, body = _split_base(path)
    if not bases:
        return _fromfile(path)
    merged = {}
    for base in bases:
        base_path = (path.parent / base).resolve()
        if not base_path.is_file():
            raise ConfigError(f'base config {base!r} not found at {base_path}', file=path,
                              key=BASE_KEY, fix='paths in _base_ are relative to the config file')
        merged = Config._merge_a_into_b(_plain_dict(load_config(base_path)), merged)
    # The child's own body is loaded from a sibling file so relative imports resolve.
    fd, tmp = tempfile.mkstemp(prefix=f'.{path.stem}_', suffix='.py', dir=path.parent)
    try:
        with os.fdopen(fd, 'w', encoding='utf-8') as fh:
            fh.write(body)
        child = _plain_dict(_fromfile(tmp, shown_as=path))
    finally:
        os.unlink(tmp)
    merged = Config._merge_a_into_b(child, merged)
    return Config(merged, filename=str(path))
