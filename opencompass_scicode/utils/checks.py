"""Numeric options, checked where each configurable class takes them, before any work.

One checker, so that every class refuses a bad number the same way: which key, what it got,
what range it wants and a valid example.
"""
from numbers import Real
from typing import Any

from ..errors import ConfigError


def check_number(key, value, *, at_least=None, above=None, whole=False, optional=False, example=None) -> Any:
    """`value` if it is a number in range (`at_least` <= value, `above` < value; `whole`: an int;
    `optional`: None allowed); otherwise ConfigError naming `key`, with `example` as the fix."""
    if value is None and optional:
        return value
    ok = isinstance(value, Real) and not isinstance(value, bool)
    if ok and whole:
        ok = float(value).is_integer()
    if ok and at_least is not None:
        ok = value >= at_least
    if ok and above is not None:
        ok = value > above
    if ok:
        return int(value) if whole else value
    kind = 'a whole number' if whole else 'a number'
    bounds = [f'>= {at_least}' if at_least is not None else '', f'> {above}' if above is not None else '']
    wanted = ' '.join([kind] + [b for b in bounds if b]) + (' or None' if optional else '')
    if above == 0 or (whole and at_least == 1):
        wanted = f'positive ({wanted})'
    elif at_least == 0:
        wanted = f'0 or more ({wanted})'
    raise ConfigError(f'must be {wanted}, got {value!r}', key=key,
                      fix=f'e.g. {key}={example!r}' if example is not None else None)
