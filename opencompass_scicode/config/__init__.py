"""Config files: loading (`read_base`, `_base_`), checking, naming, and dumping for task files."""
from .dump import dump_config
from .loader import load_config
from .naming import dataset_abbr, fill_abbrs, model_abbr
from .protocols import fill_protocols
from .validate import validate_config

__all__ = ['dataset_abbr', 'dump_config', 'fill_abbrs', 'fill_protocols', 'load_config', 'model_abbr',
           'validate_config']
