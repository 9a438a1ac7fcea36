"""Loads mmengine-style Python configs, including `_base_` over read_base() files.

A file without `_base_` is read by mmengine's Config.fromfile: as plain
Python, or in its lazy-import mode when it uses read_base() or imports a
module mmengine counts as third-party. mmengine refuses a `_base_` chain whose
files use lazy-import mode, yet that is how our configs are written. So
`_base_` is handled here: bases are loaded (each with _load), then the
child's body runs as plain Python, as mmengine runs files with `_base_` (after
the same `{{...}}` substitutions, with `_base_` bound to the merged bases and
the names of any read_base() block bound first), and its variables are merged
over the bases with mmengine's merge rules (dicts merge key by key,
`_delete_=True` replaces, lists are replaced).

A file whose read_base() imports reach another harness's modules (`opencompass.configs.*`:
every OpenCompass eval config does) is run the same way, without bases: mmengine would resolve
such a module through an installed OpenCompass package, and stop without one. Here the module
is read where the harness's dialect finds it (config/dialects.py; the face installs
adapters/opencompass/: OpenCompass's own file where there is one, else this package's stand-in
for SciCode's dataset and summarizer configs). This module imports no adapter.

Every file gets mmengine's `{{fileDirname}}` and `{{$VAR:default}}`
substitutions, also those mmengine reads in lazy-import mode (where it makes
none). What this takes of mmengine's private parts is in mmengine_private.py.

An exception raised while a config file runs is reported with the file and
line it came from, which may be a base.
"""
import ast
import builtins
import os
import re
import types
from pathlib import Path

from mmengine.config import Config, ConfigDict
from mmengine.utils import get_installed_path

from ..errors import ConfigError
from . import dialects, mmengine_private

BASE_KEY = '_base_'

LAZY_FIX = ('move that line to a config that starts from this one with `_base_ = [...]` (run as '
            'plain Python), or into a function here that imports with a plain `import module` '
            'line (mmengine leaves those real)')


def _parse(path, source):
    try:
        return ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise ConfigError(f'SyntaxError: {exc.msg}', file=path, line=exc.lineno,
                          fix='fix the Python syntax of the config file')


def _base_node(tree):
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == BASE_KEY):
            return node
    return None


def _base_paths(path, node):
    try:
        bases = ast.literal_eval(node.value)
    except ValueError:
        raise ConfigError('must be a string or a list of strings', file=path, key=BASE_KEY)
    paths = []
    for base in [bases] if isinstance(bases, str) else list(bases):
        base_path = (path.parent / base).resolve()
        if not base_path.is_file():
            raise ConfigError(f'base config {base!r} not found at {base_path}', file=path,
                              key=BASE_KEY, fix='paths in _base_ are relative to the config file')
        paths.append(base_path)
    return paths


def _is_read_base(node):
    if not isinstance(node, ast.With) or len(node.items) != 1:
        return False
    call = node.items[0].context_expr
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            and call.func.id == 'read_base')


def _read_base_source(path, node):
    """What `from <module> import ...` inside read_base() reads: a file, resolved as mmengine
    resolves it, or for a module of another harness (`opencompass.configs.*`) what its dialect
    finds (OpenCompass's file, or the variables of a stand-in)."""
    if not isinstance(node, ast.ImportFrom) or node.module is None:
        raise ConfigError('read_base() holds only `from .file import name` lines', file=path,
                          line=node.lineno)
    parts = node.module.split('.')
    dialect = None if node.level else dialects.owner(node.module)
    if dialect is not None:
        return dialect.module_source(node.module, file=path, line=node.lineno)
    if node.level:
        root = path.parent.joinpath(*['..'] * (node.level - 1))
    else:
        try:
            root, parts = Path(get_installed_path(parts[0])), parts[1:]
        except Exception:           # pkg_resources' DistributionNotFound and its kin
            raise ConfigError(f'read_base(): {node.module}: no installed package {parts[0]!r}', file=path,
                              line=node.lineno, fix='install it, or import the file relatively '
                                                    '(from .file import name)') from None
    file = root.joinpath(*parts[:-1], parts[-1] + '.py').resolve()
    if not file.is_file():
        raise ConfigError(f'read_base(): {file} not found', file=path, line=node.lineno,
                          fix='relative imports in read_base() start at the config file')
    return file


def _read_base_names(path, block):
    """What the imports of a read_base() block bind, from the files (or stand-ins) they name."""
    names = {}
    for node in block.body:
        source = _read_base_source(path, node)
        base = ConfigDict(source if isinstance(source, dict) else _plain_dict(_load(source)))
        for alias in node.names:
            if alias.name == '*':
                names.update(base)
            elif alias.name in base:
                names[alias.asname or alias.name] = base[alias.name]
            else:
                raise ConfigError(f'read_base(): {node.module} defines no {alias.name!r}',
                                  file=path, line=node.lineno)
    return names


def _substituted(path):
    """The file's text after mmengine's `{{fileDirname}}`, `{{$VAR:default}}` and
    `{{_base_.key}}` substitutions, and the placeholders of the last."""
    try:
        return mmengine_private.substituted_source(path)
    except Exception as exc:
        raise ConfigError(f'could not be loaded: {_describe(exc)}', file=path)


def _config_frame(exc):
    """The innermost traceback entry in code of a config file, or None.

    Config files run through exec with namespaces that have no `__name__`
    (here and in mmengine, plain and lazy), unlike any imported module.
    """
    found, tb = None, exc.__traceback__
    while tb is not None:
        if '__name__' not in tb.tb_frame.f_globals:
            found = tb
        tb = tb.tb_next
    return found


def _called_placeholder(exc):
    """The dotted name mmengine's lazy-import mode stood in for, if calling it raised `exc`.

    LazyObject and LazyAttr refuse calls with a RuntimeError that has no message.
    """
    tb = exc.__traceback__
    if not isinstance(exc, RuntimeError) or tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    if tb.tb_frame.f_code.co_name != '__call__':
        return None
    return mmengine_private.placeholder_name(tb.tb_frame.f_locals.get('self'))


def _describe(exc):
    text = str(exc)
    return f'{type(exc).__name__}: {text}' if text else type(exc).__name__


def _execution_error(exc, path):
    """A ConfigError for an exception raised while loading `path`: where it happened and why."""
    tb = _config_frame(exc)
    if tb is None:
        return ConfigError(f'could not be loaded: {_describe(exc)}', file=path)
    where = dict(file=os.path.normpath(tb.tb_frame.f_code.co_filename), line=tb.tb_lineno)
    called = _called_placeholder(exc)
    if called:
        return ConfigError(f'calling {called}(...) raised a bare RuntimeError: mmengine reads '
                           f'this file in lazy-import mode, where imported names are placeholders',
                           fix=LAZY_FIX, **where)
    if re.search(r'\bLazy(Object|Attr)\b', str(exc)):
        return ConfigError(f'{_describe(exc)} (mmengine reads this file in lazy-import mode, '
                           f'where imported names are placeholders)', fix=LAZY_FIX, **where)
    return ConfigError(_describe(exc), **where)


def _fromfile(path):
    try:
        with mmengine_private.lazy_reads_substituted():     # as mmengine substitutes plain files
            return Config.fromfile(str(path), format_python_code=False)
    except ConfigError:
        raise
    except FileNotFoundError as exc:
        raise ConfigError(f'file not found ({exc})', file=path,
                          fix='check the path (relative paths in read_base/_base_ start at the config file)')
    except Exception as exc:
        raise _execution_error(exc, path)


def _plain_dict(cfg):
    """The config as plain dicts and lists; placeholders still in it become dotted names."""
    return cfg.to_dict(keep_imported=True)


def _merged(child, base):
    """`child` merged over `base` (dicts) by the rules of mmengine's `_base_`: dicts merge key by
    key, `_delete_=True` replaces, other values (lists too) are replaced."""
    cfg = Config(base)
    cfg.merge_from_dict(child, allow_list_keys=False)   # top-level keys are names: no dots to split
    return {key: cfg[key] for key in cfg}


def _load_as_plain_python(path):
    """A file with `_base_`, or whose read_base() imports reach `opencompass.configs.*`: run here."""
    source, base_vars = _substituted(path)
    tree = _parse(path, source)
    node = _base_node(tree)
    merged = {}
    for base_path in _base_paths(path, node) if node is not None else ():
        merged = _merged(_plain_dict(_load(base_path)), merged)
    namespace = {'__file__': str(path), BASE_KEY: ConfigDict(merged),
                 '__builtins__': _builtins(str(path))}
    body = []
    for stmt in tree.body:
        if _is_read_base(stmt):
            namespace.update(_read_base_names(path, stmt))
        elif stmt is not node:
            body.append(stmt)
    tree.body = body
    for sub in ast.walk(tree):
        if isinstance(sub, ast.ImportFrom) and sub.level:
            raise ConfigError('relative import outside `with read_base():`', file=path,
                              line=sub.lineno, fix='import other config files in a `with read_base():` '
                                                   'block or list them in `_base_`; this file runs as '
                                                   'plain Python, outside any package')
    try:
        exec(compile(tree, str(path), 'exec'), namespace)
    except Exception as exc:
        raise _execution_error(exc, path)
    child = {k: v for k, v in namespace.items()
             if k != BASE_KEY and not k.startswith('__')
             and not isinstance(v, (types.FunctionType, types.ModuleType))}
    child = mmengine_private.substitute_base_vars(child, base_vars, merged)
    return Config(_merged(child, merged), filename=str(path))


def _builtins(file):
    """Builtins for a config run as plain Python: each installed dialect's imports of its
    harness's modules (`opencompass.*`) give placeholders instead of importing the harness."""
    names = dict(vars(builtins))
    for dialect in dialects.installed():
        names = dialect.builtins(file, names)
    return names


def _resolve_placeholders(cfg, path):
    """Swap the config's placeholders of other harnesses (`opencompass.*`) for what each
    dialect resolves them to, where they sit."""
    if not dialects.installed():
        return
    # ConfigDict builds (imports) a placeholder when it is read, unless its `lazy` switch is on.
    lazy, ConfigDict.lazy = ConfigDict.lazy, True
    try:
        values = {key: cfg[key] for key in cfg}
    finally:
        ConfigDict.lazy = lazy
    before = dict(values)
    try:
        for dialect in dialects.installed():   # nested dicts and lists in place, the top level in `values`
            dialect.resolve_placeholders(values)
    except ConfigError as exc:
        raise exc.within(file=path) from None
    for key, value in values.items():
        if value is not before[key]:
            cfg[key] = value


def _load(path):
    path = Path(path).resolve()
    if not path.is_file():
        raise ConfigError('config file does not exist', file=path,
                          fix='pass the path of a Python config, e.g. configs/eval_scicode.py')
    if _base_node(_parse(path, path.read_text(encoding='utf-8'))) is None and not _reaches_a_dialect(path):
        cfg = _fromfile(path)
    else:
        cfg = _load_as_plain_python(path)
    _resolve_placeholders(cfg, path)
    return cfg


def _reaches_a_dialect(path, seen=None):
    """Whether the read_base() imports of `path`, or of the files it imports there (relatively),
    name an `opencompass.*` module. mmengine would look for an installed OpenCompass package (and
    stop without one); such files are run here instead, reading those modules where
    opencompass_files.py finds them."""
    seen = seen if seen is not None else set()
    if path in seen or not path.is_file():
        return False
    seen.add(path)
    tree = _parse(path, path.read_text(encoding='utf-8'))
    for block in (stmt for stmt in tree.body if _is_read_base(stmt)):
        for node in block.body:
            if not isinstance(node, ast.ImportFrom) or node.module is None:
                continue                    # mmengine refuses these, naming the line
            if not node.level and dialects.owner(node.module) is not None:
                return True
            if node.level:
                parts = node.module.split('.')
                file = path.parent.joinpath(*['..'] * (node.level - 1), *parts[:-1], parts[-1] + '.py')
                if _reaches_a_dialect(file.resolve(), seen):
                    return True
    return False


def load_config(path, backend=None, notes=None) -> Config:
    """Returns an mmengine Config; raises ConfigError naming the file (and line) on failure.

    With a dialect installed (config/dialects.py; run.py installs OpenCompass's), names of its
    harness in the file never import the harness, and entries in its shape come back in this
    package's shape (`backend`: the server of HuggingFace-type models that name none). What the
    user should know of that translation is appended to `notes` (a list), if given."""
    mmengine_private.check_version()
    cfg = _load(path)
    lines = []
    try:
        for dialect in dialects.installed():
            lines += dialect.adopt(cfg, backend=backend)
    except ConfigError as exc:
        raise exc.within(file=Path(path).resolve()) from None
    if notes is not None:
        notes.extend(lines)
    return cfg
