"""Names of models and datasets: they name every output file.

Each kind of entry has one rule for the name it gets without an `abbr`: the
dataset's (datasets/scicode.py) and the model class's own `default_abbr`.
`fill_abbrs` writes them into the config once, so every later reader takes
`abbr` as it is.
"""
from typing import TypeVar

from ..datasets.scicode import default_dataset_abbr
from ..registry import resolve_type

Cfg = TypeVar('Cfg')      # a dict or an mmengine Config: whichever it was given


def dataset_abbr(cfg: dict) -> str:
    """The name of a `datasets` entry: its `abbr`, else the one its split, background and targets give."""
    return cfg.get('abbr') or default_dataset_abbr(cfg.get('split', 'validation'), cfg.get('with_bg', False),
                                                   cfg.get('targets', 'official'))


def model_abbr(cfg: dict) -> str:
    """The name of a `models` entry: its `abbr`, else its class's `default_abbr` of the entry's options."""
    if cfg.get('abbr'):
        return cfg['abbr']
    cls = resolve_type(cfg['type'])
    options = {k: v for k, v in cfg.items() if k != 'type'}
    if hasattr(cls, 'default_abbr'):
        return cls.default_abbr(**options)
    return getattr(cls, '__name__', 'model').lower()


def fill_abbrs(cfg: Cfg) -> Cfg:
    """Give every model and dataset entry of `cfg` its abbr (in place); gives `cfg` back."""
    cfg['models'] = [dict(m, abbr=model_abbr(m)) for m in cfg['models']]
    cfg['datasets'] = [dict(d, abbr=dataset_abbr(d)) for d in cfg['datasets']]
    return cfg
