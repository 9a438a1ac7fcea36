"""Names of models and datasets: they name every output file."""
from ..datasets.scicode import default_dataset_abbr
from .registry import resolve_type


def dataset_abbr(cfg):
    return cfg.get('abbr') or default_dataset_abbr(cfg.get('split', 'validation'), cfg.get('with_bg', False))


def model_abbr(cfg):
    if cfg.get('abbr'):
        return cfg['abbr']
    cls = resolve_type(cfg['type'])
    return getattr(cls, '__name__', 'model').replace('Model', '').lower() or 'model'
