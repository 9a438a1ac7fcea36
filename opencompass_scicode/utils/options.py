"""The typed record of what a configurable class accepts, and its checks in the config's words.

A config entry `dict(type=X, a=1, ...)` is checked against X's options record:
a pydantic model made from X's constructor (each parameter a field, its
annotation the field's type, its default the field's default), or X itself
where X is a record already (InferConfig). The default of each setting is
written once, in the class; the record reads it from there, and so does the
reference the documentation generates (`options_schema`).

The record checks the shape (unknown keys, types, required keys); ranges
stay with the classes (utils/checks.py), which check them as they are built.
Every error is a ConfigError in the config's own form: the key, what is
wrong, the fix, and "did you mean" for a misspelt key.
"""
import collections.abc
import inspect
import typing
from functools import lru_cache
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from ..errors import ConfigError, did_you_mean


def _parameters(cls: Any) -> dict:
    """The constructor's parameters; None where they cannot be read (then anything is taken)."""
    try:
        return dict(inspect.signature(cls).parameters)
    except (TypeError, ValueError):
        return None


def _hints(cls: Any) -> dict:
    try:
        return typing.get_type_hints(cls.__init__ if isinstance(cls, type) else cls)
    except Exception:
        return {}


@lru_cache(maxsize=None)
def options_record(cls: Any) -> type:
    """The pydantic model of the options `cls` accepts (cls itself if it is one)."""
    if isinstance(cls, type) and issubclass(cls, BaseModel):
        return cls
    params, hints = _parameters(cls), _hints(cls)
    open_ended = params is None or any(p.kind is p.VAR_KEYWORD for p in params.values())
    params = params or {}
    fields = {}
    for name, param in params.items():
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            continue
        annotation = hints.get(name, Any)
        default = ... if param.default is param.empty else param.default
        # a name BaseModel uses itself (e.g. `copy`, `json`) is kept as the alias of another
        if hasattr(BaseModel, name):
            fields[f'option_{name}'] = (annotation, Field(default, alias=name))
        else:
            fields[name] = (annotation, default)
    config = ConfigDict(extra='allow' if open_ended else 'forbid', strict=True, arbitrary_types_allowed=True,
                        protected_namespaces=(), populate_by_name=False)
    return create_model(f'{getattr(cls, "__name__", "Entry")}Options', __config__=config, **fields)


def accepted_options(cls: Any) -> list:
    """The names of the options `cls` accepts, in its constructor's order."""
    record = options_record(cls)
    return [info.alias or name for name, info in record.model_fields.items()]


def allowed_values(annotation: Any) -> tuple:
    """The values a `Literal[...]` annotation (or an optional one) allows; () for any other."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return allowed_values(args[0])
    if origin is typing.Literal:
        return tuple(args)
    if origin is typing.Union:
        return tuple(value for arg in args for value in allowed_values(arg))
    return ()


def type_text(annotation: Any) -> str:
    """An annotation in a config writer's words: 'number', 'str or None', 'list of whole number'...
    (what an error says is wanted, and what the reference lists). A Literal is its values' type:
    the values themselves are `allowed_values`."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return type_text(args[0])
    if origin is typing.Union or (origin is not None and getattr(origin, '__name__', '') == 'UnionType'):
        parts = [type_text(a) for a in args if a is not type(None)]
        return ' or '.join(dict.fromkeys(parts + (['None'] if type(None) in args else [])))
    if origin is typing.Literal:
        return ' or '.join(dict.fromkeys(type_text(type(value)) for value in args))
    if annotation in (None, type(None)):
        return 'None'
    if annotation is typing.Any:
        return 'any'
    if annotation is float:
        return 'number'         # an int is taken too
    if annotation is int:
        return 'whole number'
    if origin in (list, tuple, set, collections.abc.Sequence) and args:
        return f'list of {type_text(args[0])}'
    if origin is dict and len(args) == 2 and args[0] is str:
        return 'dict' if args[1] is typing.Any else f'dict of {type_text(args[1])}'
    return getattr(origin or annotation, '__name__', str(annotation))


def _at(key: Optional[str], name: str) -> str:
    """The key of option `name` of the entry at `key` (None: the config file's top level)."""
    return f'{key}.{name}' if key else name


def check_options(cls: Any, options: dict, key: Optional[str]) -> None:
    """ConfigError unless `options` fit `cls`'s options record: an unknown key (with "did you mean"
    and the options it takes), a value of another type than the option's or not one of its
    allowed values, or a missing one. `key`: where the entry is (None: the top level)."""
    record = options_record(cls)
    try:
        record.model_validate(dict(options))
    except ValidationError as exc:
        raise _config_error(cls, record, options, exc.errors(), key) from None
    except ConfigError as exc:          # a record's own check (a range, a choice), seen from here
        raise exc.within(key=key) from None


def _config_error(cls: Any, record: type, options: dict, errors: list, key: str) -> ConfigError:
    name_of = getattr(cls, '__name__', 'this entry')
    accepted = accepted_options(cls)
    by_kind = {'unknown': [], 'type': [], 'missing': []}
    bounds, choices = {}, set()
    for error in errors:
        option = str(error['loc'][0]) if error['loc'] else ''
        kind = {'extra_forbidden': 'unknown', 'missing': 'missing'}.get(error['type'], 'type')
        by_kind[kind].append(option)
        if error['type'] in _BOUNDS:
            bounds.setdefault(option, (error['type'], error['ctx'], error['loc'][1:], error['input']))
        if error['type'] == 'literal_error' and len(error['loc']) == 1:
            choices.add(option)
    unknown = [name for name in options if name in by_kind['unknown']]
    if unknown:
        hint = did_you_mean(unknown[0], accepted)
        return ConfigError(f'{name_of} has no option {unknown[0]!r}', key=_at(key, unknown[0]),
                           fix=f'{hint}accepted options: {", ".join(accepted)}')
    wrong = [name for name in accepted if name in by_kind['type']]
    if wrong:
        name = wrong[0]
        field = record.model_fields.get(name) or record.model_fields[f'option_{name}']
        if name in bounds:
            return _out_of_range(name, key, *bounds[name])
        wanted, value = type_text(field.annotation), options[name]
        allowed = allowed_values(field.annotation)
        if name in choices and isinstance(value, type(allowed[0])):
            hint = did_you_mean(value, allowed) if isinstance(value, str) else ''
            return ConfigError(f'unknown {name} {value!r}', key=_at(key, name),
                               fix=f'{hint}use one of {", ".join(map(repr, allowed))}')
        return ConfigError(f'must be {wanted}, got {type(value).__name__} {value!r}', key=_at(key, name),
                           fix=f'give {name} a value of type {wanted}')
    missing = [name for name in accepted if name in by_kind['missing']]
    return ConfigError(f'{name_of} needs {", ".join(map(repr, missing))}', key=_at(key, missing[0]),
                       fix=f'add {missing[0]}=... to this entry')


# pydantic's range errors, and how a config writer reads each
_BOUNDS = {'greater_than_equal': ('ge', '>='), 'greater_than': ('gt', '>'), 'less_than_equal': ('le', '<='),
           'less_than': ('lt', '<')}


def _out_of_range(name: str, key: str, kind: str, ctx: dict, inner: tuple, value: Any) -> ConfigError:
    """`must be a whole number >= 0, got -1` for a value outside its option's range."""
    bound_name, sign = _BOUNDS[kind]
    bound = ctx[bound_name]
    whole = isinstance(value, int)
    where = _at(key, name) + ''.join(f'[{i}]' if isinstance(i, int) else f'.{i}' for i in inner)
    return ConfigError(f'must be {"a whole number" if whole else "a number"} {sign} {bound}, got {value!r}',
                       key=where, fix=f'give {name} a value {sign} {bound}')


def options_schema(cls: Any) -> dict:
    """The JSON Schema of what `cls` accepts: each option with its type and default."""
    try:
        return options_record(cls).model_json_schema()
    except Exception:               # an annotation JSON Schema cannot say (an arbitrary class)
        record = options_record(cls)
        return {'title': record.__name__, 'properties': {
            info.alias or name: {'default': None if info.is_required() else repr(info.default)}
            for name, info in record.model_fields.items()}}
