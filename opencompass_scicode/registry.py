"""What a `type=` names: short names and their resolution, nothing else.

A class registers itself where it lives (`@register`). Nothing is imported to
register it: the first time a short name is looked up and not yet known, the
packages of `LOCATIONS` are imported, and then their modules one by one, until
the name is registered (mmengine's lazy locations). A new model type is thus one
file in `models/`. `type` may also be a class or a dotted import path.

What a class needs the layers above to know (a model's request limits, whether
it only asks an endpoint, what its tasks may import early) and how a config
entry becomes its constructor's options are the class's own attributes and
class methods; `type_attribute` reads them and `build` calls them.
This sits below every layer: it names the packages it searches, and imports them
only when asked.
"""
import importlib
import pkgutil
from typing import Any, Callable, Optional, TypeVar

from .errors import ConfigError, did_you_mean
from .utils.options import check_options

# Packages whose classes register themselves, searched in this order.
LOCATIONS = ('opencompass_scicode.models', 'opencompass_scicode.datasets', 'opencompass_scicode.evaluation',
             'opencompass_scicode.summarizers', 'opencompass_scicode.runners', 'opencompass_scicode.partitioners')

# The type of an entry that names none: a dataset entry is SciCode's, its evaluator SciCode's.
DEFAULT_TYPES = {'dataset': 'SciCodeDataset', 'evaluator': 'SciCodeEvaluator'}

_CLASSES: dict = {}           # short name -> class
_searched: set = set()        # modules of LOCATIONS imported so far

T = TypeVar('T')


def register(cls: Optional[T] = None, *, name: Optional[str] = None) -> Any:
    """Decorator: make `cls` usable as `type='<its name>'` (or `name`) in configs.
    Takes the class, gives it back unchanged."""
    def add(klass: T) -> T:
        short = name or klass.__name__
        known = _CLASSES.get(short)
        if known is not None and type_name(known) != type_name(klass):
            raise ValueError(f'{short!r} is registered already, by {type_name(known)}')
        _CLASSES[short] = klass
        return klass
    return add if cls is None else add(cls)


def _search(short: Optional[str]) -> None:
    """Import LOCATIONS (packages first, then their modules) until `short` is registered;
    everything when `short` is None."""
    for package in LOCATIONS:
        if package not in _searched:
            importlib.import_module(package)
            _searched.add(package)
        if short is not None and short in _CLASSES:
            return
        modules = [f'{package}.{m.name}' for m in pkgutil.iter_modules(importlib.import_module(package).__path__)
                   if not m.ispkg and not m.name.startswith('_')]
        for module in modules:
            if module in _searched:
                continue
            importlib.import_module(module)
            _searched.add(module)
            if short is not None and short in _CLASSES:
                return


def registered() -> dict:
    """{short name: class} of every class that registers itself (imports every location)."""
    _search(None)
    return dict(sorted(_CLASSES.items()))


def _registered_class(short: str) -> Optional[type]:
    if short not in _CLASSES:
        _search(short)
    return _CLASSES.get(short)


def type_name(obj: Any) -> str:
    """The import path of a class (a string is taken as one already)."""
    if isinstance(obj, str):
        return obj
    return f'{obj.__module__}.{obj.__qualname__}'


def resolve_type(spec: Any, key: str = 'type') -> Callable:
    """The class (or callable) a `type=` value names: itself, a short name or an import path.
    Raises ConfigError, at `key`, for what names nothing."""
    if not isinstance(spec, str):
        if callable(spec):
            return spec
        raise ConfigError(f'{spec!r} is not a class or import path', key=key)
    if '.' not in spec:
        cls = _registered_class(spec)
        if cls is None:
            names = registered()
            raise ConfigError(f'unknown type {spec!r}', key=key,
                              fix=f'{did_you_mean(spec, names)}use a class, a dotted import path, or one of '
                                  f'{", ".join(names)}')
        return cls
    module_name, _, attr = spec.rpartition('.')
    try:
        module = importlib.import_module(module_name)
        return getattr(module, attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f'cannot import {spec!r} ({exc})', key=key,
                          fix='check the spelling of the class and that its package is installed')


def type_attribute(spec: Any, attribute: str, default: Any = None) -> Any:
    """A class attribute of the type `spec` names (a model's `request_limits`, say); `default`
    for a type without it, or one that cannot be imported (building the entry says why)."""
    try:
        cls = resolve_type(spec)
    except ConfigError:
        return default
    return getattr(cls, attribute, default)


def entry_options(cls: Any, entry: dict, key: str = '') -> dict:
    """The constructor options of a config entry (its keys but `type`), as `cls` takes them:
    a class may say how (a classmethod `entry_options(entry, key)`, e.g. a dataset's
    `reader_cfg`), else every key is an option."""
    own = getattr(cls, 'entry_options', None)
    if own is not None:
        return own(entry, key)
    return {k: v for k, v in entry.items() if k != 'type'}


def build(cfg: dict, key: str = '', kind: Optional[str] = None, **extra: Any) -> Any:
    """Instantiate the type `cfg['type']` names (DEFAULT_TYPES[kind] where it names none) with
    the entry's options plus `extra`; a ConfigError at `key` for a bad entry."""
    if not isinstance(cfg, dict) or ('type' not in cfg and kind not in DEFAULT_TYPES):
        raise ConfigError('must be a dict with a `type` key', key=key)
    cfg = dict(cfg)
    if kind in DEFAULT_TYPES:
        cfg.setdefault('type', DEFAULT_TYPES[kind])
    cls = resolve_type(cfg['type'], key=f'{key}.type' if key else 'type')
    kwargs = entry_options(cls, cfg, key)
    kwargs.update(extra)
    check_options(cls, kwargs, key or cls.__name__)
    try:
        return cls(**kwargs)
    except ConfigError as exc:
        raise exc.within(key=key) from None


# ------------------------------------------------ the entries of a config
def build_model(cfg: dict, key: str = 'model') -> Any:
    """The model a `models` entry declares."""
    return build(cfg, key=key)


def build_dataset(cfg: dict, key: str = 'dataset') -> Any:
    """The dataset a `datasets` entry declares (SciCodeDataset where it names no type)."""
    return build(cfg, key=key, kind='dataset')


def evaluator_cfg(dataset_cfg: dict) -> dict:
    """A dataset entry's evaluator entry, as its dataset type reads it (`evaluator_entry`), with
    the default evaluator type where it names none."""
    cls = type_attribute(dataset_cfg.get('type', DEFAULT_TYPES['dataset']), 'evaluator_entry')
    cfg = dict(cls(dataset_cfg) if cls is not None else
               (dataset_cfg.get('eval_cfg') or {}).get('evaluator') or {})
    cfg.setdefault('type', DEFAULT_TYPES['evaluator'])
    return cfg


def build_evaluator(dataset_cfg: dict, key: str = 'dataset.eval_cfg.evaluator') -> Any:
    """The evaluator of a dataset entry, built with what its dataset tells it (`evaluator_options`:
    SciCode's gives its prefilled_mode, which results files keep and `-r` compares)."""
    dataset = build_dataset(dataset_cfg)
    told = getattr(dataset, 'evaluator_options', dict)()
    return build(evaluator_cfg(dataset_cfg), key=key, **told)
