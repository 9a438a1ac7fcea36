"""mmengine's lazy-import placeholders of `opencompass.*` names, swapped for OpenCompassNames.

In lazy-import mode (a file that uses read_base() or imports a third-party
module), `from opencompass.models import OpenAI` binds a LazyObject that imports
the module the first time the value is read. The values are walked here through
plain dict/list access, which reads a placeholder without building it, and each
`opencompass.*` one is replaced where it sits; so are `type=` strings that name
`opencompass.*` (OpenCompass's dumped configs write types as strings). Other
placeholders (this package's classes, numpy, ...) are left to mmengine.
"""
from typing import Any

from ...config.mmengine_private import placeholder_name
from .names import OpenCompassModule, OpenCompassName, is_opencompass, resolve


def _swap(value, key, as_type):
    dotted = placeholder_name(value)
    if dotted is not None:
        if not is_opencompass(dotted):
            return value
        return resolve(dotted, location=value.location, key=key)
    if isinstance(value, OpenCompassModule):
        return resolve(value.__name__, key=key)            # a module where a value belongs
    if as_type and is_opencompass(value) and not isinstance(value, OpenCompassName):
        return resolve(value, key=key)
    return value


def resolve_placeholders(value: Any, key: str = '', as_type: bool = False) -> Any:
    """`value` with every `opencompass.*` placeholder (and `type='opencompass....'`) in it
    replaced by its OpenCompassName; dicts and lists are changed in place. ConfigError for a
    name the table lacks."""
    if isinstance(value, dict):
        for name, item in list(dict.items(value)):
            new = resolve_placeholders(item, f'{key}.{name}' if key else str(name), as_type=name == 'type')
            if new is not item:
                dict.__setitem__(value, name, new)
        return value
    if isinstance(value, list):
        for i, item in enumerate(value):
            new = resolve_placeholders(item, f'{key}[{i}]')
            if new is not item:
                value[i] = new
        return value
    if type(value) is tuple:
        return tuple(resolve_placeholders(item, f'{key}[{i}]') for i, item in enumerate(value))
    return _swap(value, key, as_type)
