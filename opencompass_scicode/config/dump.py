"""Writes configs as plain Python files that `Config.fromfile` reads back."""
from ..utils.plain import to_plain
from ..utils.writes import write_whole


def dump_config(cfg, path) -> None:
    """Write `cfg` (a dict or an mmengine Config) to `path` as a plain Python file that
    `Config.fromfile` reads back; names imported into the config are left out."""
    import types
    from mmengine.config import Config
    data = {}
    for key, value in cfg.items() if isinstance(cfg, dict) else cfg.to_dict().items():
        if key.startswith('_') or isinstance(value, (types.ModuleType, types.FunctionType, type)):
            continue   # names imported into the config file, not settings
        data[key] = to_plain(value)
    # whole or not at all: the temporary file is renamed over `path` once written (it keeps the
    # suffix, which tells mmengine the format)
    write_whole(path, Config(data).dump())      # Python text: the path ends in .py
