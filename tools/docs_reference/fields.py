"""The options of a config entry's class: name, type, default, allowed values, as the config
check reads them.

Today an entry's options are its class's constructor parameters and their annotations: what
`registry.check_kwargs` holds a config entry against (`inspect.signature` and
`typing.get_type_hints`). A class that is a pydantic model (the typed config records) is read
from its `model_fields` instead, descriptions included; nothing else here changes then.

Allowed values come from a `Literal[...]` annotation. Until the classes carry those, `CHOICES`
names the constant each class checks a value against (its `__post_init__` or `__init__`
refuses anything else): the values shown are read from that constant, and a name that no longer
exists stops the build.
"""
import enum
import importlib
import inspect
import typing
from dataclasses import dataclass
from typing import Any, Optional

# (class name, option) -> 'module:CONSTANT' whose values (a tuple, or a dict's keys) the class
# accepts for that option. A Literal annotation on the option takes precedence.
CHOICES = {
    ('SciCodeDataset', 'split'): 'opencompass_scicode.datasets.scicode:SPLITS',
    ('SciCodeDataset', 'prefilled_mode'): 'opencompass_scicode.datasets.chain:PREFILLED_MODES',
    ('SciCodeDataset', 'targets'): 'opencompass_scicode.datasets.scicode:TARGETS_MODES',
    ('SciCodeEvaluator', 'prefilled_mode'): 'opencompass_scicode.datasets.chain:PREFILLED_MODES',
    ('SciCodeEvaluator', 'executor'): 'opencompass_scicode.sandbox.executor:EXECUTORS',
    ('SciCodeSummarizer', 'layout'): 'opencompass_scicode.summarizers.layouts:LAYOUTS',
    ('InferConfig', 'mode'): 'opencompass_scicode.inference.settings:MODES',
    ('InferConfig', 'extraction'): 'opencompass_scicode.inference.extract:EXTRACTIONS',
    ('SciCodeDataset', 'protocol'): 'opencompass_scicode.protocols.table:PROTOCOLS',
    ('SciCodeEvaluator', 'prefilled_steps'): 'opencompass_scicode.evaluation.evaluator:PREFILLED_STEPS',
    ('SciCodeEvaluator', 'environments'): 'opencompass_scicode.environments.build:NAMES',
    # besides 'any' and 'all', the name of one of the environments scored in
    ('SciCodeEvaluator', 'environment_rule'): 'opencompass_scicode.evaluation.environments:RULES',
}
# Options whose allowed values the class checks inline, with no constant to read (listed so that
# tests/unit/test_docs_reference.py knows them): (class name, option) -> the values.
INLINE_CHOICES = {
    ('OpenAIChatModel', 'api'): ('chat', 'responses'),
}


@dataclass(frozen=True)
class Option:
    name: str
    type: str                   # as the config check names it ('' where the option is not annotated)
    required: bool
    default: Any                # meaningless when required
    choices: Optional[tuple]    # the values accepted, where the class accepts only some
    description: str = ''       # from a typed record's field; '' for a plain class


def read_constant(path):
    """The values of 'module:NAME' (a dict gives its keys)."""
    module, _, name = path.partition(':')
    try:
        value = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise LookupError(f'CHOICES names {path}, which no longer exists ({exc}); '
                          f'update tools/docs_reference/fields.py') from None
    return tuple(value)


def type_text(annotation):
    """An annotation in the words of the reference: `int`, `str` or `None`, `'a'` or `'b'`."""
    if annotation is inspect.Parameter.empty:
        return ''
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return type_text(args[0])
    if origin is typing.Union or (origin is not None and getattr(origin, '__name__', '') == 'UnionType'):
        parts = [type_text(a) for a in args if a is not type(None)]
        return ' or '.join(parts + (['None'] if type(None) in args else []))
    if origin is typing.Literal:
        return ' or '.join(repr(a) for a in args)
    if annotation is None or annotation is type(None):
        return 'None'
    if annotation is typing.Any:
        return 'any'
    if annotation is float:
        return 'number'         # an int is accepted too (registry._accepts)
    if origin is not None:
        inner = ', '.join(type_text(a) for a in args if a is not Ellipsis)
        name = getattr(origin, '__name__', str(origin))
        return f'{name}[{inner}]' if inner else name
    return getattr(annotation, '__name__', str(annotation))


def _literal_values(annotation):
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _literal_values(args[0])
    if origin is typing.Literal:
        return tuple(args)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return tuple(member.value for member in annotation)
    if origin is typing.Union:
        values = [v for a in args for v in (_literal_values(a) or ())]
        return tuple(values) or None
    return None


def _choices(cls, name, annotation):
    literal = _literal_values(annotation)
    if literal:
        return literal
    if (cls.__name__, name) in CHOICES:
        return read_constant(CHOICES[cls.__name__, name])
    return INLINE_CHOICES.get((cls.__name__, name))


def _from_pydantic(cls):
    out = []
    for name, info in cls.model_fields.items():
        required = info.is_required()
        default = None
        if not required:
            default = info.default_factory() if info.default_factory is not None else info.default
        out.append(Option(info.alias or name, type_text(info.annotation), required, default,
                          _choices(cls, name, info.annotation), info.description or ''))
    return out


def _from_signature(cls):
    params = inspect.signature(cls).parameters
    try:
        hints = typing.get_type_hints(cls.__init__ if isinstance(cls, type) else cls)
    except Exception:           # as registry.check_kwargs: annotations it cannot read check nothing
        hints = {}
    out = []
    for name, param in params.items():
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            continue
        annotation = hints.get(name, inspect.Parameter.empty)
        required = param.default is param.empty
        out.append(Option(name, type_text(annotation), required, None if required else param.default,
                          _choices(cls, name, annotation)))
    return out


def options(cls):
    """The options a config entry of `cls` takes, in the order the class declares them."""
    if hasattr(cls, 'model_fields'):            # a pydantic model: a typed config record
        return _from_pydantic(cls)
    return _from_signature(cls)


def open_ended(cls):
    """True when the class takes any keyword (**kwargs): the config check then lets unknown keys by."""
    if hasattr(cls, 'model_fields'):
        return (getattr(cls, 'model_config', {}) or {}).get('extra') == 'allow'
    return any(p.kind is p.VAR_KEYWORD for p in inspect.signature(cls).parameters.values())
