"""What a `type=` names, and the objects config entries declare.

`type` is a class, a dotted import path or a registered short name. This sits
below every layer: tasks build the objects their task file declares, and run.py
builds them to check a config before any work starts.
"""
import importlib
import inspect
import typing

from .errors import ConfigError, did_you_mean

# Short names usable as `type='ReferenceModel'` in configs.
REGISTRY = {
    'ReferenceModel': 'opencompass_scicode.models.ReferenceModel',
    'DummyModel': 'opencompass_scicode.models.DummyModel',
    'GeneratedCodeModel': 'opencompass_scicode.models.GeneratedCodeModel',
    'OpenCompassPredictions': 'opencompass_scicode.models.OpenCompassPredictions',
    'OpenAIChatModel': 'opencompass_scicode.models.OpenAIChatModel',
    'SciCodeDataset': 'opencompass_scicode.datasets.SciCodeDataset',
    'SciCodeEvaluator': 'opencompass_scicode.evaluation.SciCodeEvaluator',
    'SciCodeSummarizer': 'opencompass_scicode.summarizers.SciCodeSummarizer',
    'LocalRunner': 'opencompass_scicode.runners.LocalRunner',
    'SlurmRunner': 'opencompass_scicode.runners.SlurmRunner',
    'NaivePartitioner': 'opencompass_scicode.partitioners.NaivePartitioner',
    'NumWorkerPartitioner': 'opencompass_scicode.partitioners.NumWorkerPartitioner',
    'SizePartitioner': 'opencompass_scicode.partitioners.SizePartitioner',
}

# A registered model's request limits when its entry gives none. The model class takes its
# defaults from here, and the planner reads them here too (partitioners/base.py divides them
# among a model's shards) without importing the class: partitioners never load models.
REQUEST_LIMITS = {
    'OpenAIChatModel': {'max_concurrency': 8, 'query_per_second': None},
}

# Model types that only ask an endpoint over the network: without a server of their own
# (server=) and without GPUs, their inference task spends its time waiting for answers, takes no
# slot of the runner and, on a cluster, asks for one CPU it may share (runners/base.py, slurm.py).
# Types not listed (local engines, a user's own classes) keep their slot.
API_MODELS = ('OpenAIChatModel',)

# What an inference task of a registered model type imports beside the task's own code, that a
# warm launcher may import before the task starts (runners/warm.py): the API SDK, imported by the
# model only when it is built. Nothing that must not cross a fork (a GPU runtime) goes here.
WARM_IMPORTS = {
    'OpenAIChatModel': ('opencompass_scicode.models.openai_api', 'openai'),
}


def type_name(obj):
    if isinstance(obj, str):
        return obj
    return f'{obj.__module__}.{obj.__qualname__}'


def resolve_type(spec, key='type'):
    if not isinstance(spec, str):
        if callable(spec):
            return spec
        raise ConfigError(f'{spec!r} is not a class or import path', key=key)
    path = REGISTRY.get(spec, spec)
    module_name, _, attr = path.rpartition('.')
    if not module_name:
        raise ConfigError(f'unknown type {spec!r}', key=key,
                          fix=f'use a class, a dotted import path, or one of {", ".join(REGISTRY)}')
    try:
        module = importlib.import_module(module_name)
        return getattr(module, attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f'cannot import {path!r} ({exc})', key=key,
                          fix='check the spelling of the class and that its package is installed')


def registered_name(spec):
    """The short name `spec` (a class, an import path or a short name) is registered under; None
    for other types. A path may name the module that defines the class (task files hold those,
    e.g. `opencompass_scicode.models.openai_api.OpenAIChatModel`). Imports nothing."""
    path = spec if isinstance(spec, str) else type_name(spec)
    if path in REGISTRY:
        return path
    for name, registered in REGISTRY.items():
        package = registered.rpartition('.')[0]
        if path == registered or (path.startswith(package + '.') and path.rpartition('.')[2] == name):
            return name
    return None


def request_limits(spec):
    """{'max_concurrency': ..., 'query_per_second': ...} by default for the model type `spec`
    names; {} for a type without request limits, or one not registered."""
    return dict(REQUEST_LIMITS.get(registered_name(spec), {}))


def is_api_model(spec):
    """Whether the model type `spec` names only asks an endpoint (API_MODELS). Imports nothing."""
    return registered_name(spec) in API_MODELS


def warm_imports(spec):
    """Modules an inference task of the model type `spec` names may have imported for it (WARM_IMPORTS)."""
    return list(WARM_IMPORTS.get(registered_name(spec), ()))


def _accepts(annotation, value):
    """Does `value` fit a parameter annotated `annotation`? Unknown annotations accept anything."""
    if annotation is inspect.Parameter.empty or annotation is typing.Any:
        return True
    if annotation is None or annotation is type(None):
        return value is None
    if typing.get_origin(annotation) is typing.Union:
        return any(_accepts(arg, value) for arg in typing.get_args(annotation))
    origin = typing.get_origin(annotation) or annotation
    if not isinstance(origin, type):
        return True
    if isinstance(value, bool) and origin is not bool:
        return False                  # True is an int to Python, not to a config reader
    if origin is float:
        return isinstance(value, (int, float))
    return isinstance(value, origin)


def _type_text(annotation):
    if typing.get_origin(annotation) is typing.Union:
        return ' or '.join(_type_text(a) for a in typing.get_args(annotation))
    if annotation in (None, type(None)):
        return 'None'
    if annotation is float:
        return 'number'
    return getattr(typing.get_origin(annotation) or annotation, '__name__', str(annotation))


def check_kwargs(cls, kwargs, key):
    """Unknown keyword -> ConfigError listing what the class accepts; a value of another type
    than the parameter's annotation -> ConfigError naming both; a missing required one too."""
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return
    try:
        hints = typing.get_type_hints(cls.__init__ if isinstance(cls, type) else cls)
    except Exception:
        hints = {}
    open_ended = any(p.kind is p.VAR_KEYWORD for p in params.values())
    accepted = [n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    for name, value in kwargs.items():
        if name not in accepted:
            if open_ended:
                continue
            hint = did_you_mean(name, accepted)
            raise ConfigError(f'{cls.__name__} has no option {name!r}', key=f'{key}.{name}',
                              fix=f'{hint}accepted options: {", ".join(accepted)}')
        annotation = hints.get(name, inspect.Parameter.empty)
        if not _accepts(annotation, value):
            wanted = _type_text(annotation)
            raise ConfigError(f'must be {wanted}, got {type(value).__name__} {value!r}',
                              key=f'{key}.{name}', fix=f'give {name} a value of type {wanted}')
    missing = [n for n, p in params.items()
               if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
               and n not in kwargs]
    if missing:
        raise ConfigError(f'{cls.__name__} needs {", ".join(map(repr, missing))}',
                          key=f'{key}.{missing[0]}', fix=f'add {missing[0]}=... to this entry')


def to_plain(obj):
    """Config values as plain data: classes become import paths, so they can be dumped."""
    if isinstance(obj, dict):
        return {k: to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_plain(v) for v in obj) if isinstance(obj, list) else tuple(to_plain(v) for v in obj)
    if isinstance(obj, type) or callable(obj) and hasattr(obj, '__qualname__'):
        return type_name(obj)
    return obj


def build(cfg, key='', drop=(), **extra):
    """Instantiate `cfg['type']` with the other keys (minus `drop`) plus `extra`."""
    if not isinstance(cfg, dict) or 'type' not in cfg:
        raise ConfigError('must be a dict with a `type` key', key=key)
    kwargs = {k: v for k, v in cfg.items() if k != 'type' and k not in drop}
    kwargs.update(extra)
    cls = resolve_type(cfg['type'], key=f'{key}.type' if key else 'type')
    check_kwargs(cls, kwargs, key or cls.__name__)
    try:
        return cls(**kwargs)
    except ConfigError as exc:
        raise exc.within(key=key) from None


# ------------------------------------------------ the entries of a config
def build_model(cfg, key='model'):
    # run_cfg (num_gpus, num_procs) is what the model's tasks ask of a cluster, not a model setting
    return build(cfg, key=key, drop=('run_cfg',))


def build_dataset(cfg, key='dataset'):
    cfg = dict(cfg)
    cfg.setdefault('type', 'SciCodeDataset')
    reader = dict(cfg.get('reader_cfg') or {})
    old = evaluators_prefilled_mode(cfg, key)
    if old is not None:
        cfg['prefilled_mode'] = old
    return build(cfg, key=key, drop=('reader_cfg', 'infer_cfg', 'eval_cfg'), **reader)


def evaluator_cfg(dataset_cfg):
    cfg = dict((dataset_cfg.get('eval_cfg') or {}).get('evaluator') or {})
    cfg.setdefault('type', 'SciCodeEvaluator')
    return cfg


def build_evaluator(dataset_cfg, key='dataset.eval_cfg.evaluator'):
    """The entry's evaluator, given its dataset's prefilled_mode: it scores with the dataset's and
    records it with its settings (results files keep it, and `-r` compares it)."""
    mode = build_dataset(dataset_cfg).prefilled_mode
    return build(evaluator_cfg(dataset_cfg), key=key, prefilled_mode=mode)


def evaluators_prefilled_mode(dataset_cfg, key='dataset'):
    """`eval_cfg.evaluator.prefilled_mode`, where the dataset's `prefilled_mode` used to be set:
    still taken for the dataset's (None where not given), refused where the dataset gives
    another. Prompts and test programs read the one setting, the dataset's."""
    old = evaluator_cfg(dataset_cfg).get('prefilled_mode')
    own = dataset_cfg.get('prefilled_mode')
    if old is not None and own is not None and old != own:
        raise ConfigError(f'prefilled_mode {own!r} here and {old!r} at {key}.eval_cfg.evaluator.prefilled_mode '
                          f'differ; prompts and test programs read one setting, the dataset\'s',
                          key=f'{key}.prefilled_mode',
                          fix='keep prefilled_mode on the dataset and remove it from eval_cfg.evaluator '
                              '(its old place)')
    return old
