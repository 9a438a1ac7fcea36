"""A dataset entry under a protocol: the protocol's knobs filled in where the entry sets none, and
the record of what made its numbers.

`apply(entry)` gives every knob the entry leaves out the protocol's value, at the knob's own key
(knobs.py), so that prompts, requests, step programs and limits read it as any other setting.
A key the entry sets explicitly stays; the record then names itself with the difference
(`official+timeout=300`). Applying twice gives the same entry, so task files, resumed runs and
re-grades can apply it again.

`record(entry, answers)` is what a results file keeps: the protocol's name as the numbers were
made, the knobs (those of the answers taken from the settings they were made with), and a short
fingerprint of all of them.
"""
import hashlib
import json
from typing import Any

from ..errors import ConfigError, did_you_mean
from .knobs import ANY, BY_NAME, KNOBS, TOOL_ONLY, UNSET
from .table import DEFAULT, PROTOCOLS

EVALUATOR = 'SciCodeEvaluator'


def check_name(name, key='protocol') -> str:
    """`name` if it names a protocol; else a ConfigError listing them all (before any work)."""
    if isinstance(name, str) and name in PROTOCOLS:
        return name
    names = ', '.join(PROTOCOLS)
    hint = did_you_mean(name, list(PROTOCOLS)) if isinstance(name, str) else ''
    raise ConfigError(f'unknown protocol {name!r}', key=key,
                      fix=f'{hint}use one of {names} (docs/protocols.md shows them side by side)')


def values_of(name) -> dict[str, Any]:
    """The knob values of protocol `name`; ConfigError for an unknown name."""
    return PROTOCOLS[check_name(name)]['values']


def _is_ours(evaluator):
    """Only our evaluator takes the scoring knobs (a user's own evaluator keeps its options)."""
    kind = evaluator.get('type', EVALUATOR)
    path = kind if isinstance(kind, str) else f'{getattr(kind, "__module__", "")}.{getattr(kind, "__name__", "")}'
    return path == EVALUATOR or path.endswith('.' + EVALUATOR)


def _sections(entry):
    """The entry with its infer_cfg and eval_cfg.evaluator copied (to fill in without touching the
    caller's), and those two dicts."""
    entry = dict(entry)
    infer = dict(entry.get('infer_cfg') or {})
    eval_cfg = dict(entry.get('eval_cfg') or {})
    evaluator = dict(eval_cfg.get('evaluator') or {'type': EVALUATOR})
    entry['infer_cfg'], eval_cfg['evaluator'], entry['eval_cfg'] = infer, evaluator, eval_cfg
    return entry, {'dataset': entry, 'infer_cfg': infer, 'evaluator': evaluator}


def apply(entry, key='protocol') -> dict[str, Any]:
    """The dataset entry with the protocol's knobs filled in where it sets none (a new dict)."""
    name = check_name(entry.get('protocol', DEFAULT), key=key)
    values = PROTOCOLS[name]['values']
    entry, places = _sections(entry)
    entry['protocol'] = name
    ours = _is_ours(places['evaluator'])
    for knob in KNOBS:
        value = values[knob.name]
        place = places[knob.section]
        if value == ANY or _given(knob, places) or (knob.section == 'evaluator' and not ours):
            continue
        place[knob.name] = list(value) if isinstance(value, tuple) else value
    return entry


# Keys still read at an older place (SciCodeDataset.entry_options): set there, they count as set.
OLD_PLACES = {'prefilled_mode': 'evaluator'}


def _given(knob, places):
    old = OLD_PLACES.get(knob.name)
    return knob.name in places[knob.section] or (old is not None and knob.name in places[old])


def knob_values(entry, answers=None) -> dict[str, Any]:
    """{knob: value} as `entry` (after apply) sets them; `answers`: the settings the answers were
    made with (the predictions' settings), which win for the knobs of the answers."""
    _, places = _sections(entry)
    out = {}
    for knob in KNOBS:
        place = places[knob.section]
        old = places.get(OLD_PLACES.get(knob.name), {})
        value = place.get(knob.name, old.get(knob.name, _class_default(knob.name)))
        if answers and knob.phase == 'answers' and knob.name in answers:
            value = answers[knob.name]
        out[knob.name] = list(value) if isinstance(value, tuple) else value
    if out.get('mode') != 'tool_use':
        for name in TOOL_ONLY:
            out.pop(name, None)
    return out


def _class_default(name):
    """A knob the entry does not hold: the official value (what the classes default to)."""
    value = PROTOCOLS[DEFAULT]['values'][name]
    return UNSET[name] if value == ANY else value


def overrides(name, values) -> dict[str, Any]:
    """{knob: value} of `values` that differ from protocol `name`'s."""
    own = PROTOCOLS[check_name(name)]['values']
    diff = {}
    for knob, value in values.items():
        expected = own[knob]
        if expected == ANY:
            continue
        if _plain(value) != _plain(expected):
            diff[knob] = value
    return diff


def _plain(value):
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def value_text(value) -> str:
    """A knob's value as it appears in a protocol's name (`timeout=300`, `none`)."""
    if isinstance(value, (list, tuple)):
        return ','.join(map(str, value))
    if value is None:
        return 'none'
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def honest_name(name, values) -> str:
    """`name`, with each knob that differs from the protocol's: `official+timeout=300`."""
    diff = overrides(name, values)
    return name + ''.join(f'+{knob}={value_text(value)}' for knob, value in diff.items())


def fingerprint(values) -> str:
    """8 hex digits over every knob's value: equal fingerprints, equal protocols."""
    blob = json.dumps({k: _plain(v) for k, v in values.items()}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode('utf-8')).hexdigest()[:8]


def record(entry, answers=None) -> dict[str, Any]:
    """The protocol record of a results file: {'name', 'base', 'fingerprint', 'knobs', 'overrides',
    'reproduces'} for the (applied) dataset entry and the settings its answers were made with."""
    base = check_name(entry.get('protocol', DEFAULT))
    values = knob_values(entry, answers)
    return {'name': honest_name(base, values), 'base': base, 'fingerprint': fingerprint(values),
            'knobs': values, 'overrides': overrides(base, values),
            'reproduces': PROTOCOLS[base]['reproduces']}


def phase_of(knob) -> str:
    """The phase knob `knob` acts in: `answers` or `scoring`."""
    return BY_NAME[knob].phase
