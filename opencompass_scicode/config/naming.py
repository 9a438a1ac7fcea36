"""Names of models and datasets: they name every output file.

Each kind of entry has one rule for the name it gets without an `abbr`: the
dataset's (datasets/scicode.py) and the model class's own `default_abbr`.
`fill_abbrs` writes them into the config once, so every later reader takes
`abbr` as it is.
"""
from ..datasets.scicode import default_dataset_abbr
from ..registry import resolve_type


def dataset_abbr(cfg):
    return cfg.get('abbr') or default_dataset_abbr(cfg.get('split', 'validation'), cfg.get('with_bg', False),
                                                   cfg.get('targets', 'official'))


def model_abbr(cfg):
    if cfg.get('abbr'):
        return cfg['abbr']
    cls = resolve_type(cfg['type'])
    options = {k: v for k, v in cfg.items() if k != 'type'}
    if hasattr(cls, 'default_abbr'):
        return cls.default_abbr(**options)
    return getattr(cls, '__name__', 'model').lower()


def fill_abbrs(cfg):
    """Give every model and dataset entry its abbr (in place)."""
    cfg['models'] = [dict(m, abbr=model_abbr(m)) for m in cfg['models']]
    cfg['datasets'] = [dict(d, abbr=dataset_abbr(d)) for d in cfg['datasets']]
    return cfg
