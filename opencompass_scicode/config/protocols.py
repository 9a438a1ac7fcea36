"""Each dataset entry's protocol filled in: the knobs it leaves out take its protocol's values
(`protocol=`, default 'official'; see protocols/), at their usual keys, before the config is
checked, dumped or split into tasks. An unknown protocol stops the run here, before any work."""
from typing import TypeVar

from ..errors import ConfigError
from ..protocols import apply

Cfg = TypeVar('Cfg')      # a dict or an mmengine Config: whichever it was given


def fill_protocols(cfg: Cfg, file=None) -> Cfg:
    """Fill in every dataset entry's protocol knobs of `cfg` (in place) and give `cfg` back; entries
    that are not dicts are left for validation to name. `file`: the config file, for errors."""
    datasets = cfg.get('datasets')
    if not isinstance(datasets, (list, tuple)):
        return cfg
    filled = []
    for i, entry in enumerate(datasets):
        if not isinstance(entry, dict):
            filled.append(entry)
            continue
        try:
            filled.append(apply(entry, key=f'datasets[{i}].protocol'))
        except ConfigError as exc:
            raise exc.within(file=file) from None
    cfg['datasets'] = filled
    return cfg
