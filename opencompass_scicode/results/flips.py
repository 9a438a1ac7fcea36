"""How a step's verdict changed between two results, and why, in one line.

Two records of the same step (two runs, two models, two results sets of one run) are judged on
their status, and when both fail on how: the failure's category, its exception class, its test
and its value (where the failing comparison differs first and by how much). `change` says
`fixed`, `broken`, `changed` (failing both times, differently) or `unchanged`.

`reason` says why a changed step changed: the first of REASONS that has something to say. Each
reason is a small function of the two sides; a new kind of difference (a per-environment
verdict, a protocol's name) is one more function in that list, placed where it should win.
A side is what `side` reads from a step's record, its problem's earlier steps and its results
file: hashes of the code, the targets' digest, the verdict settings, the scoring environments
and their verdicts, the protocol, and so on. Nothing here opens a file.
"""
import hashlib
from typing import Any

# Evaluator settings that can change a verdict (a results file's `evaluator`), as the reasons name them.
VERDICT_SETTINGS = ('timeout', 'memory_limit_mb', 'max_processes', 'max_file_mb', 'max_output_bytes',
                    'isolate_network', 'restrict_files', 'drop_privileges', 'simps_shim', 'prefilled_mode',
                    'prefilled_steps')


def _digest(text):
    return hashlib.sha256(text.strip().encode('utf-8')).hexdigest()[:16] if text and text.strip() else None


def field(obj, name, default=None) -> Any:
    """A field of a record as a results file's JSON holds it (a dict) or as it is read (a typed
    record, results/schema.py); `default` where it has none."""
    value = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
    return default if value is None else value


def code_of(record) -> str | None:
    """The code a step record's answer ran (a whole program where one was given), or None."""
    answer = field(record, 'answer', {})
    return field(answer, 'program') or field(answer, 'code')


def side(record, earlier, results) -> dict[str, Any]:
    """What the reasons compare of one side: `record` (a step's entry in a results file, answer
    and all), `earlier` (the entries of the steps before it in its problem, same sample) and
    `results` (its results file, or just its top-level fields); each a dict or a typed record."""
    difference = field(field(record, 'comparison', {}), 'difference', {})
    settings = field(results, 'evaluator', {})
    protocol = field(results, 'protocol', {})
    return {
        'status': field(record, 'status'), 'category': field(record, 'category') or field(record, 'status'),
        'error_type': field(record, 'error_type'), 'failed_test': field(record, 'failed_test'),
        'value': (difference.get('path'), difference.get('max_abs_diff'), difference.get('shape_mismatch'),
                  difference.get('length_mismatch')),
        'code': _digest(code_of(record)),
        'earlier': _digest('\n'.join(code_of(e) or '' for e in earlier)),
        'targets': field(record, 'targets_digest'), 'targets_kind': field(results, 'targets'),
        'settings': {k: settings.get(k) for k in VERDICT_SETTINGS if k in settings},
        'environments': field(results, 'scored_with', {}),      # environment -> its library versions
        'environment_rule': settings.get('environment_rule', 'any'),
        'environment_verdicts': field(record, 'environment_verdicts', {}),
        'protocol': protocol.get('name'), 'extraction': (protocol.get('knobs') or {}).get('extraction'),
        'origin': field(record, 'origin'), 'duration_s': field(record, 'duration_s'),
    }


def _failure(s):
    return (s['category'], s['error_type'], s['failed_test'], s['value'])


def change(a, b) -> str:
    """'fixed', 'broken', 'changed' (both fail, differently) or 'unchanged', from a to b."""
    if (a['status'] == 'pass') != (b['status'] == 'pass'):
        return 'fixed' if b['status'] == 'pass' else 'broken'
    if a['status'] != b['status'] or (a['status'] != 'pass' and _failure(a) != _failure(b)):
        return 'changed'
    return 'unchanged'


def _verdict(s):
    return s['status'] if s['status'] == 'pass' or s['category'] == s['status'] else f'{s["status"]} ({s["category"]})'


# ------------------------------------------------------------ the reasons, in order
def _no_code(a, b):
    missing = [name for name, s in (('A', a), ('B', b)) if s['code'] is None]
    if missing:
        return f'no code on {" and ".join(missing)}'


def _different_code(a, b):
    if a['code'] != b['code']:
        extracted = (f' (code extraction {a["extraction"]} against {b["extraction"]})'
                     if a['extraction'] and b['extraction'] and a['extraction'] != b['extraction'] else '')
        return 'different code' + extracted


def _different_earlier_code(a, b):
    if a['earlier'] != b['earlier']:
        inherited = [f'{name}: inherited from step {s["origin"].get("from_step")}' for name, s in (('A', a), ('B', b))
                     if isinstance(s['origin'], dict) and s['origin'].get('kind') == 'inherited'
                     and s['origin'].get('from_step')]
        return 'same code, different earlier steps' + (f' ({"; ".join(inherited)})' if inherited else '')


def _timeout(a, b):
    timed_out = [s for s in (a, b) if s['status'] == 'timeout']
    if len(timed_out) == 1:
        other = b if timed_out[0] is a else a
        limits = (a['settings'].get('timeout'), b['settings'].get('timeout'))
        said = f' (limit {limits[0]:g} s against {limits[1]:g} s)' if None not in limits and limits[0] != limits[1] \
            else ''
        return f'same code, timeout against {_verdict(other)}{said}'


def _targets(a, b):
    if a['targets'] and b['targets'] and a['targets'] != b['targets']:
        kinds = f' ({a["targets_kind"]} against {b["targets_kind"]})' if a['targets_kind'] != b['targets_kind'] else ''
        return f'targets only (the targets digest differs{kinds})'


def _settings(a, b):
    keys = sorted(k for k in set(a['settings']) | set(b['settings']) if a['settings'].get(k) != b['settings'].get(k))
    if keys:
        return 'settings only: ' + ', '.join(f'{k} {a["settings"].get(k)} against {b["settings"].get(k)}'
                                             for k in keys)


def _environment(a, b):
    one, two = a['environments'], b['environments']
    if not one or not two or one == two:
        return None
    if set(one) != set(two):
        return f'environment only: {_scored_in(a)} against {_scored_in(b)}'
    changed = sorted({(lib, str(one[env].get(lib)), str(two[env].get(lib))) for env in one
                      for lib in set(one[env]) | set(two[env]) if one[env].get(lib) != two[env].get(lib)})
    return 'environment only: ' + ', '.join(f'{lib} {x} against {y}' for lib, x, y in changed)


def _scored_in(s):
    """`2024+current (any: passes in 2024)`, or `current`."""
    names = '+'.join(s['environments'])
    if len(s['environments']) < 2:
        return names
    passed = [env for env, v in s['environment_verdicts'].items() if v.get('status') == 'pass']
    said = f'passes in {"+".join(passed)}' if passed else 'passes in none'
    return f'{names} ({s["environment_rule"]}: {said})'


def _protocol(a, b):
    if a['protocol'] and b['protocol'] and a['protocol'] != b['protocol']:
        return f'protocol only: {a["protocol"]} against {b["protocol"]}'


def _same_everything(a, b):
    return 'same code, targets and settings: the step itself varies (randomness, time or the machine)'


REASONS = [_no_code, _different_code, _different_earlier_code, _timeout, _targets, _environment, _settings,
           _protocol, _same_everything]


def reason(a, b) -> str:
    """Why a step changed from side `a` to side `b` (see `side`), in one line."""
    for rule in REASONS:
        said = rule(a, b)
        if said:
            return said
    return ''
