"""Builds the objects a config declares from `dict(type=..., **kwargs)` entries."""
from ..errors import ConfigError
from .naming import dataset_abbr, model_abbr
from .registry import check_kwargs, resolve_type, to_plain


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


# ------------------------------------------------ the objects a config declares
def build_model(cfg, key='model'):
    return build(cfg, key=key, drop=('abbr',), abbr=model_abbr(cfg))


def build_dataset(cfg, key='dataset'):
    cfg = dict(cfg)
    cfg.setdefault('type', 'SciCodeDataset')
    reader = dict(cfg.get('reader_cfg') or {})
    return build(cfg, key=key, drop=('reader_cfg', 'infer_cfg', 'eval_cfg', 'abbr'),
                 abbr=dataset_abbr(cfg), **reader)


def evaluator_cfg(dataset_cfg):
    cfg = dict((dataset_cfg.get('eval_cfg') or {}).get('evaluator') or {})
    cfg.setdefault('type', 'SciCodeEvaluator')
    return cfg


def build_evaluator(dataset_cfg, key='dataset.eval_cfg.evaluator'):
    return build(evaluator_cfg(dataset_cfg), key=key)


def prefilled_mode(dataset_cfg):
    """One setting for prompts and test programs: the evaluator's."""
    return evaluator_cfg(dataset_cfg).get('prefilled_mode', 'official')


def dump_config(cfg, path):
    """Write a config as a plain Python file that `Config.fromfile` reads back."""
    import types
    from mmengine.config import Config
    data = {}
    for key, value in cfg.items() if isinstance(cfg, dict) else cfg.to_dict().items():
        if key.startswith('_') or isinstance(value, (types.ModuleType, types.FunctionType, type)):
            continue   # names imported into the config file, not settings
        data[key] = to_plain(value)
    Config(data).dump(str(path))
