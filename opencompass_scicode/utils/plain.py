"""Config values as plain data, for task files, dumps and summaries."""
from typing import Any


def to_plain(obj: Any) -> Any:
    """`obj` with every class (or function) replaced by its import path, so that it can be
    dumped as JSON or Python; dicts, lists and tuples are copied, other values kept."""
    if isinstance(obj, dict):
        return {k: to_plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [to_plain(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(to_plain(v) for v in obj)
    if isinstance(obj, type) or callable(obj) and hasattr(obj, '__qualname__'):
        return f'{obj.__module__}.{obj.__qualname__}'
    return obj
