"""What made each number: the protocol table and the steps whose verdicts differ between scoring
environments, from the results files (their `protocol`, `scored_with`, `targets_sha256` and
`environment_differences`; protocols/, environments/).

The protocols table has one row per model and dataset: the protocol's name (it names every knob
that differs from the protocol it is called after), the fingerprint of all its knobs, the
versions of Python and the libraries that scored the steps, and the targets' sha256. When every
number of a run shares one protocol name, a note says it under the tables too (`protocol:
official ...`).
"""
from typing import Any

from .layouts import UNRECORDED, protocol_name
from .results_files import is_results

LIBRARIES = ('python', 'numpy', 'scipy', 'sympy', 'h5py')


def _results(cfg, collected):
    for m in cfg['models']:
        for ds in cfg['datasets']:
            value = collected.get((m['abbr'], ds['abbr']))
            if is_results(value):
                yield m['abbr'], ds['abbr'], value


def scored_with_text(scored_with) -> str:
    """`2024: python 3.11.7, numpy 1.26.4, ...; current: ...` (one environment: without its name)."""
    parts = []
    for env, versions in (scored_with or {}).items():
        text = ', '.join(f'{lib} {versions[lib]}' for lib in LIBRARIES if versions.get(lib))
        parts.append(text if len(scored_with) == 1 else f'{env}: {text}')
    return '; '.join(parts) or UNRECORDED


def protocols(cfg, collected) -> tuple[list[str], list[list[Any]]]:
    """(header, rows): model, dataset, protocol, fingerprint, scored with, targets sha256."""
    rows = [[m, d, protocol_name(r), (r.protocol or {}).get('fingerprint', UNRECORDED),
             scored_with_text(r.scored_with), r.targets_sha256 or UNRECORDED]
            for m, d, r in _results(cfg, collected)]
    return ['model', 'dataset', 'protocol', 'fingerprint', 'scored with', 'targets sha256'], rows


def environment_differences(cfg, collected) -> tuple[list[str], list[list[Any]]]:
    """(header, rows): each step whose verdicts differ between the environments it was scored in."""
    rows = []
    for m, d, r in _results(cfg, collected):
        for step in r.environment_differences or ():
            verdicts = step['verdicts']
            rows.append([m, d, step['step_id'] + (f' (sample {step["sample"]})' if step.get('sample') is not None
                                                  else ''),
                         ', '.join(f'{env}: {v["status"]}' for env, v in verdicts.items()), step.get('status', '')])
    return ['model', 'dataset', 'step', 'verdict per environment', 'counted as'], rows


def protocol_note(cfg, collected) -> str | None:
    """`protocol: official (fingerprints ...; scored with ...)` when every result shares one protocol
    name; else a note that the protocol column tells them apart. None without results."""
    found = list(_results(cfg, collected))
    if not found:
        return None
    names = sorted({protocol_name(r) for _, _, r in found})
    if len(names) > 1:
        return ('protocols differ between these numbers (' + ', '.join(names) + '): each row\'s protocol '
                'column names it, the protocols table its knobs\' fingerprint; docs/protocols.md')
    prints = sorted({(r.protocol or {}).get('fingerprint', UNRECORDED) for _, _, r in found})
    scored = sorted({scored_with_text(r.scored_with) for _, _, r in found})
    digests = sorted({r.targets_sha256 or UNRECORDED for _, _, r in found})
    return (f'protocol: {names[0]} (fingerprint {", ".join(prints)}; scored with {" | ".join(scored)}; '
            f'targets sha256 {", ".join(digests)})')
