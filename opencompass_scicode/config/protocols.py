"""Each dataset entry's protocol filled in: the knobs it leaves out take its protocol's values
(`protocol=`, default 'official'; see protocols/), at their usual keys, before the config is
checked, dumped or split into tasks. An unknown protocol stops the run here, before any work."""
from ..errors import ConfigError
from ..protocols import apply


def fill_protocols(cfg, file=None):
    """Fill in every dataset entry's protocol knobs (in place); entries that are not dicts are
    left for validation to name."""
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
