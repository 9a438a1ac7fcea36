"""OpenCompass's command line: `--datasets/--models/--summarizer NAME`, `--hf-path ...`.

`run.py --datasets scicode_validation --models reference` builds the config from the
named files (named.py), as OpenCompass's run.py does: a dataset file gives every
variable whose name ends in `_datasets` (or in SUFFIX, for `NAME/SUFFIX`), a
model file its `models`, a summarizer file its `summarizer`. `--hf-path PATH`
with the `--hf-*` flags adds one HuggingFace-type model, served per task by
`--hf-backend` (vllm unless named). With a config file too, what the flags name
replaces that part of the config. Flags keep OpenCompass's spelling and meaning,
except where its default deviates from the official harness (`--max-out-len`:
256 there, 4096 here) - a note says so. OpenCompass's flags that mean nothing
here are refused by name (flags.py, which lists every flag of OpenCompass's run.py).
"""
import shlex
from pathlib import Path
from typing import Optional

from mmengine.config import Config, DictAction

from ...errors import ConfigError
from ...utils.secrets import redact_config
from ...config.loader import load_config
from .entries import Notes, adopt
from .named import config_roots, find_config
from .flags import add_refused_arguments, refuse_flags
from .names import OpenCompassName
from .placeholders import resolve_placeholders
from .servers import BACKENDS

# --max-out-len not given: the --hf-path model's token limit. OpenCompass's command line gives 256, too
# few for most SciCode answers; a dataset's own inferencer max_out_len still comes first, as there.
DEFAULT_MAX_OUT_LEN = 4096
MAX_OUT_LEN_NOTE = (f"--max-out-len not given: the model's limit is {DEFAULT_MAX_OUT_LEN} tokens per answer, used "
                    f"where a dataset's inferencer sets none (OpenCompass's scicode_gen sets 4096; "
                    f"scicode_gen_62c139 none); OpenCompass's command line gives 256, which cuts most SciCode "
                    f"answers short (pass --max-out-len 256 to match it)")
HF_FLAGS = ('model_kwargs', 'generation_kwargs', 'max_out_len', 'max_seq_len', 'batch_size', 'stop_words',
            'min_out_len')


def add_arguments(parser) -> None:
    """Add to `parser` (an argparse parser) OpenCompass's flags for building a config without a
    config file, and those refused here."""
    group = parser.add_argument_group(
        'OpenCompass-style', 'build the config from named files and flags, as OpenCompass\'s run.py does '
                             '(with a config file, what they name replaces that part of it)')
    group.add_argument('--datasets', nargs='+', metavar='NAME',
                       help='dataset configs NAME.py under datasets/ of --config-dir, OpenCompass\'s configs and '
                            'this package\'s; OpenCompass\'s names (scicode_gen, ...) mean its test-split configs')
    group.add_argument('--models', nargs='+', metavar='NAME', help='model configs NAME.py under models/')
    group.add_argument('--summarizer', metavar='NAME', help='summarizer config NAME.py under summarizers/ '
                                                            '(scicode: OpenCompass\'s)')
    group.add_argument('--config-dir', metavar='DIR',
                       help='search DIR/datasets, DIR/models, DIR/summarizers first (default ./configs), then '
                            'OpenCompass\'s own configs, then this package\'s')
    group.add_argument('--config-verbose', action='store_true', help='print the config, as translated')
    group.add_argument('--dataset-num-runs', type=int, metavar='N',
                       help='N samples of every problem of the --datasets datasets, scored as pass@k')
    group.add_argument('--dump-eval-details', nargs='?', const=True, default=True, metavar='BOOL',
                       type=lambda text: text.lower() != 'false',
                       help='always on: results files hold every step\'s verdict')
    group.add_argument('--dump-res-length', action='store_true',
                       help='always on: prediction records carry their token counts')
    group.add_argument('--hf-path', metavar='PATH', help='a HuggingFace model (name, directory or .gguf file), '
                                                         'served per task')
    group.add_argument('--hf-type', choices=('chat', 'base'), default='chat', help='chat (default) or base')
    group.add_argument('--hf-num-gpus', type=int, default=1, metavar='N', help='GPUs of the model (default 1)')
    group.add_argument('--hf-backend', '-a', '--accelerator', dest='hf_backend', choices=tuple(BACKENDS),
                       help='the server of HuggingFace-type models (default vllm)')
    group.add_argument('--model-kwargs', nargs='+', action=DictAction, default={}, metavar='K=V',
                       help='server flags, e.g. trust_remote_code=True tensor_parallel_size=2')
    group.add_argument('--generation-kwargs', nargs='+', action=DictAction, default={}, metavar='K=V',
                       help='request settings, e.g. temperature=0.7 top_p=0.95')
    group.add_argument('--max-out-len', type=int, metavar='N',
                       help=f'the model\'s token limit per answer (default {DEFAULT_MAX_OUT_LEN}; a dataset\'s own '
                            f'inferencer max_out_len comes first)')
    group.add_argument('--min-out-len', type=int, metavar='N', help='the least tokens per answer (min_tokens)')
    group.add_argument('--max-seq-len', type=int, metavar='N', help="the server's context length")
    group.add_argument('--batch-size', type=int, metavar='N', help='requests in flight (default 8)')
    group.add_argument('--stop-words', nargs='+', default=[], metavar='WORD', help='stop sequences')
    add_refused_arguments(parser)


def _hf_model(args, notes):
    name = Path(args.hf_path).name
    stem = name.rsplit('.', 1)[0] if Path(args.hf_path).is_file() else name
    kind = 'HuggingFacewithChatTemplate' if args.hf_type == 'chat' else 'HuggingFaceBaseModel'
    entry = dict(type=OpenCompassName(f'opencompass.models.{kind}', '--hf-type'), abbr=f'{stem}_hf',
                 path=args.hf_path, model_kwargs=dict(args.model_kwargs),
                 generation_kwargs=dict(args.generation_kwargs), run_cfg=dict(num_gpus=args.hf_num_gpus))
    for flag in ('max_out_len', 'max_seq_len', 'batch_size', 'stop_words'):
        if getattr(args, flag):
            entry[flag] = getattr(args, flag)
    if args.min_out_len:
        entry['generation_kwargs'].setdefault('min_new_tokens', args.min_out_len)
    if args.max_out_len is None:
        entry['max_out_len'] = DEFAULT_MAX_OUT_LEN
        notes.add(MAX_OUT_LEN_NOTE)
    return entry


def _variables(found, backend, notes):
    """The variables of a named config: its file loaded, or the stand-in's, types resolved."""
    if found.path is None:
        return resolve_placeholders(found.stand_in)
    lines = []
    cfg = load_config(found.path, backend=backend, notes=lines)
    for line in lines:
        notes.add(line)
    return cfg


def _entries(kind, names, roots, backend, notes, num_runs=None):
    """The entries of the named files, each file's in its own shape translated, with its name on errors;
    datasets with `num_runs` samples of every problem (--dataset-num-runs: their n and k)."""
    found_all = []
    for name in names:
        # NAME/SUFFIX: the variables of NAME ending in SUFFIX (datasets) or named SUFFIX (summarizer)
        stem, suffix = (name, '') if name.endswith('.py') or Path(name).is_file() else name.partition('/')[::2]
        found, hidden = find_config(stem, kind, roots)
        if hidden:
            notes.add(f'{name}: {found} is used; also found (not used): {", ".join(map(str, hidden))}')
        cfg = _variables(found, backend, notes)
        if kind == 'datasets':
            wanted = suffix or '_datasets'
            keys = [k for k in cfg.keys() if k.endswith(wanted) and isinstance(cfg[k], (list, tuple))]
            entries = [d for k in keys for d in cfg[k]]
        elif kind == 'models':
            entries = list(cfg.get('models') or [])
        else:
            entries = [cfg[suffix or 'summarizer']] if (suffix or 'summarizer') in cfg else []
        if not entries:
            what = {'datasets': f'no variable ending in {suffix or "_datasets"!r}', 'models': 'no `models`',
                    'summarizers': f'no {suffix or "summarizer"!r}'}[kind]
            raise ConfigError(f'{what} in this file', file=found,
                              fix=f'name a {kind[:-1]} config file (it defines {what[3:]})')
        key = 'summarizer' if kind == 'summarizers' else kind
        part = Config({key: entries[0] if kind == 'summarizers' else entries})
        try:
            lines = adopt(part, backend=backend)
        except ConfigError as exc:
            raise exc.within(file=found) from None
        for line in lines:
            notes.add(line)
        if num_runs:        # as OpenCompass sets each entry's n and k; here, translated: n samples, pass@n
            part[key] = [dict(entry, infer_cfg=dict(entry.get('infer_cfg') or {}, n=num_runs),
                              eval_cfg=dict(entry.get('eval_cfg') or {}, pass_at_k=[num_runs]))
                         for entry in part[key]]
        found_all += [part[key]] if kind == 'summarizers' else list(part[key])
    return found_all


def wants_opencompass_cli(args) -> bool:
    """Whether the parsed `args` name datasets, models, a summarizer or an --hf-path model: a
    config built from OpenCompass's flags."""
    return bool(args.datasets or args.models or args.summarizer or args.hf_path)


def _check_flags(args):
    refuse_flags(args)
    if args.dump_eval_details is False:
        raise ConfigError('--dump-eval-details False: not supported here: results files always hold every '
                          'step\'s verdict (they are what the summary is made from)')
    if args.dataset_num_runs is not None and not args.datasets:
        raise ConfigError('--dataset-num-runs applies to the datasets --datasets names (as in OpenCompass); '
                          'in a config file, give each dataset entry n= and k=')
    if not args.hf_path:
        given = [f'--{f.replace("_", "-")}' for f in HF_FLAGS if getattr(args, f)]
        if given or (args.hf_backend and not (args.config or args.models)):
            raise ConfigError(f'{", ".join(given) or "--hf-backend"} without --hf-path',
                              fix='add --hf-path PATH (the model these flags describe)')


def config_from_args(args) -> Optional[tuple[Config, str, list[str]]]:
    """(cfg, what to name in errors, notes) from the config file and/or OpenCompass's flags in the
    parsed `args`; None when neither is given. ConfigError on a refused or contradictory flag."""
    _check_flags(args)
    if args.config is None and not wants_opencompass_cli(args):
        return None
    notes = Notes()
    lines = []
    if args.config:
        cfg = load_config(args.config, backend=args.hf_backend, notes=lines)
    else:
        cfg = Config({})
    for line in lines:
        notes.add(line)
    if not wants_opencompass_cli(args):
        return cfg, args.config, notes.lines()
    roots = config_roots(args.config_dir)
    replaced = []
    if args.datasets:
        cfg['datasets'] = _entries('datasets', args.datasets, roots, args.hf_backend, notes,
                                   num_runs=args.dataset_num_runs)
        replaced.append('datasets')
    if args.models or args.hf_path:
        models = _entries('models', args.models, roots, args.hf_backend, notes) if args.models else []
        if args.hf_path:
            hf = Config({'models': [_hf_model(args, notes)]})
            for line in adopt(hf, backend=args.hf_backend):
                notes.add(line)
            models += list(hf['models'])
        cfg['models'] = models
        replaced.append('models')
    if args.summarizer:
        (cfg['summarizer'],) = _entries('summarizers', [args.summarizer], roots, args.hf_backend, notes)
        replaced.append('summarizer')
    if args.config:
        notes.add(f'{args.config}: its {" and ".join(replaced)} replaced by the command line\'s')
        return cfg, args.config, notes.lines()
    for part, flag in (('datasets', '--datasets NAME'), ('models', '--models NAME or --hf-path PATH')):
        if part not in cfg:
            raise ConfigError(f'no {part}: without a config file, the command line names them',
                              fix=f'add {flag} (or give a config file)')
    return cfg, 'the command line (--datasets/--models/--hf-path)', notes.lines()


def server_lines(cfg) -> list[str]:
    """For --dry-run: the exact command of each model server an inference task would start, its
    secrets (a key after --api-key, ...) shown as <redacted>."""
    models = redact_config({'models': list(cfg.get('models') or ())})['models']
    return [f'{m.get("abbr")}: its inference task starts {shlex.join(m["server"]["command"])}'
            for m in models if isinstance(m, dict) and m.get('server')]
