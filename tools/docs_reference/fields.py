"""The options of a config entry's class: name, type, default, allowed values, read from the typed
record the config check holds the entry against (`utils.options.options_record`).

That record is the class's constructor made a pydantic model (each parameter a field, its
annotation the type, its default the class's own), or the class itself where it is a record
already (InferConfig, config/records.py's sections). The allowed values are those of a
`Literal[...]` annotation, which the check refuses anything outside of; a description is a
field's own (`Field(description=...)`). Nothing here is written twice: a class that changes an
option changes the reference with it.
"""
from dataclasses import dataclass
from typing import Any, Optional

from opencompass_scicode.utils.options import allowed_values, options_record, type_text


@dataclass(frozen=True)
class Option:
    name: str
    type: str                   # in the config check's words ('any' where the option is not annotated)
    required: bool
    default: Any                # meaningless when required
    choices: Optional[tuple]    # the values accepted, where the record accepts only some
    description: str = ''       # the field's description, where the record gives one


def options(cls):
    """The options a config entry of `cls` takes, in the order the class declares them."""
    out = []
    for name, info in options_record(cls).model_fields.items():
        required = info.is_required()
        default = None if required else info.get_default(call_default_factory=True)
        out.append(Option(info.alias or name, type_text(info.annotation), required, default,
                          allowed_values(info.annotation) or None, info.description or ''))
    return out


def open_ended(cls):
    """True when the class takes any keyword (**kwargs): the config check then lets unknown keys by."""
    return options_record(cls).model_config.get('extra') == 'allow'
