"""The config of a re-grade: a finished run's datasets under another protocol, or with other
scoring knobs, scored again from its saved answers (`opencompass-scicode regrade RUN_DIR`).

Only knobs of the scoring phase (protocols/knobs.py) may change: the step timeout and memory,
the scoring environments and their rule, the extraction rule, how the prefilled steps count, the
simps shim. A protocol whose knobs of the answers (split, background, prompt form, prefilled
code in the prompts, token limit, temperature, samples, targets and problems) differ from those
the run's answers were made with would need new answers: it is refused, naming each such knob,
unless `scoring_only` asks to score these answers with its scoring knobs; the record then names
the answers' knobs as the differences they are (`opencompass+mode=naive+...`).

The re-grade goes beside the run, in `RUN_DIR/regrades/<label>/` (launch/regrade.py runs it).
"""
from pathlib import Path

from ..errors import ConfigError
from ..protocols import BY_NAME, KNOBS, PROTOCOLS, apply, check_name, knob_values, overrides
from ..protocols.record import value_text
from .loader import load_config
from .protocols import fill_protocols

REGRADES = 'regrades'
PROTOCOL_NAMES = tuple(PROTOCOLS)
# Scoring knobs a re-grade may set on the command line, and how their text becomes a value.
FLAG_KNOBS = ('timeout', 'memory_limit_mb', 'environments', 'environment_rule', 'extraction',
              'prefilled_steps', 'simps_shim')


def run_config_path(run_root) -> Path:
    """The merged config a run dumped (configs/<timestamp>.py); ConfigError if it is not a run."""
    run_root = Path(run_root)
    path = run_root / 'configs' / f'{run_root.name}.py'
    if not path.is_file() or not (run_root / 'predictions').is_dir():
        raise ConfigError(f'{run_root} is not a finished run of this package (no configs/{run_root.name}.py '
                          f'and predictions/ there)',
                          fix='give the run directory <work_dir>/<timestamp> that run.py printed')
    return path


def _place(entry, knob):
    """The dict of `entry` that holds `knob` (the entry, its infer_cfg or its evaluator)."""
    if knob.section == 'dataset':
        return entry
    if knob.section == 'infer_cfg':
        return entry['infer_cfg']
    return entry['eval_cfg']['evaluator']


def needs_new_answers(entry: dict, protocol: str) -> list[tuple]:
    """[(knob, the run's value, the protocol's)] of the knobs of the answers that differ."""
    run = knob_values(entry)
    answers = {k.name: run[k.name] for k in KNOBS if k.phase == 'answers' and k.name in run}
    wanted = PROTOCOLS[protocol]['values']
    return [(name, value, wanted[name]) for name, value in overrides(protocol, answers).items()]


def regraded_entry(entry: dict, protocol, flags: dict, scoring_only: bool) -> dict:
    """The dataset entry (applied) scored under `protocol` with the scoring `flags`; ConfigError
    where the protocol needs new answers and `scoring_only` is off."""
    entry = apply(entry)
    protocol = check_name(protocol or entry['protocol'], key='--protocol')
    changed = needs_new_answers(entry, protocol) if protocol != entry['protocol'] else []
    if changed and not scoring_only:
        lines = ', '.join(f'{name} (the run\'s: {run!r}, {protocol}\'s: {want!r})' for name, run, want in changed)
        raise ConfigError(f'dataset {entry["abbr"]!r}: protocol {protocol!r} needs new answers: {lines}',
                          key='--protocol',
                          fix=f'run the protocol anew (protocol={protocol!r} on the dataset), or add --scoring-only '
                              f'to score these answers with {protocol}\'s scoring knobs (the record names the '
                              f'answers\' knobs it keeps)')
    run = knob_values(entry)
    out = apply({**entry, 'protocol': protocol})      # a copy; explicit keys of the run stay for now
    values = PROTOCOLS[protocol]['values']
    for knob in KNOBS:
        place = _place(out, knob)
        if knob.phase == 'answers' and knob.name in run:
            place[knob.name] = run[knob.name]          # as the answers were made, whatever the protocol says
        if knob.phase == 'scoring' and protocol != entry['protocol']:
            place[knob.name] = list(values[knob.name]) if isinstance(values[knob.name], tuple) else values[knob.name]
        if knob.name in flags:
            place[knob.name] = flags[knob.name]
    return out


def flag_values(args) -> dict:
    """{knob: value} of the scoring flags given on the command line (`args`, parsed by argparse)."""
    out = {}
    for name in FLAG_KNOBS:
        value = getattr(args, name, None)
        if value is None:
            continue
        if name == 'environments':
            value = [v.strip() for v in value.split(',') if v.strip()]
        elif name == 'simps_shim':
            value = value == 'on'
        out[name] = value
    return out


def label_of(protocol: str, flags: dict) -> str:
    """The folder name of a re-grade: its protocol and the scoring flags given."""
    text = protocol + ''.join(f'+{k}={value_text(v)}' for k, v in flags.items())
    return text.replace('/', '_')


def regrade_config(run_root, protocol=None, flags=None, scoring_only=False) -> tuple[dict, str]:
    """(config, label): the config of the run in `run_root` with every dataset re-graded under
    `protocol` (None: each dataset's own) and the scoring `flags` (see above), and the name of the
    re-grade's folder."""
    flags = dict(flags or {})
    for name in flags:
        if BY_NAME[name].phase != 'scoring':       # the flags are scoring knobs; kept honest here too
            raise ConfigError(f'{name} changes the answers', key=f'--{name}')
    cfg = load_config(run_config_path(run_root))
    cfg = {k: cfg[k] for k in cfg.keys()}
    fill_protocols(cfg, file=run_config_path(run_root))
    cfg['datasets'] = [regraded_entry(d, protocol, flags, scoring_only) for d in cfg['datasets']]
    base = protocol or (cfg['datasets'][0].get('protocol', 'official') if cfg['datasets'] else 'official')
    cfg.pop('work_dir', None)
    return cfg, label_of(base, flags)
