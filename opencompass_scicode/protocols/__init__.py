"""Protocols: named, complete records of how a SciCode number is made (the step set, prompts,
extraction, limits, scoring environments, generation defaults), each knob with where its value
was read. `protocol='opencompass'` on a dataset entry takes OpenCompass's; explicit keys override
it and the record names the difference (`opencompass+timeout=1800`).

Pure data and a few functions over it: importable from every layer that reads dataset entries.
"""
from .knobs import ANY, BY_NAME, KNOBS, Knob
from .record import apply, check_name, fingerprint, honest_name, knob_values, overrides, record, values_of
from .table import DEFAULT, PROTOCOLS

__all__ = ['ANY', 'BY_NAME', 'DEFAULT', 'KNOBS', 'Knob', 'PROTOCOLS', 'apply', 'check_name', 'fingerprint',
           'honest_name', 'knob_values', 'overrides', 'record', 'values_of']
