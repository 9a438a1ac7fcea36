"""Checks a loaded config before any work starts.

Every error names the config file, the key (as a path such as
`datasets[1].infer_cfg.mode`) and what to do.
"""
import difflib

from ..datasets.scicode import SPLITS
from ..errors import ConfigError
from ..datasets.chain import PREFILLED_MODES
from .naming import dataset_abbr, model_abbr
from ..registry import check_kwargs, resolve_type

INFER_MODES = ('naive', 'chat', 'tool_use')
TOP_LEVEL = ('models', 'datasets', 'summarizer', 'work_dir', 'runner', 'partitioner')

_NONE = type(None)
DATASET_KEYS = {
    'type': None, 'abbr': (str,), 'path': (str,), 'split': (str,), 'with_bg': (bool,),
    'sample_ids': (list, tuple, _NONE), 'h5py_file': (str, _NONE),
    'reader_cfg': (dict,), 'infer_cfg': (dict,), 'eval_cfg': (dict,),
}
READER_KEYS = {'verify_sha256': (bool,), 'prepare': (bool,)}
INFER_KEYS = {'mode': (str,), 'max_out_len': (int, _NONE), 'tool_use_max_loops': (int,),
              'code_timeout_seconds': (int, float)}
EVAL_KEYS = {'evaluator': (dict,)}
EVALUATOR_TYPES = {
    'timeout': (int, float), 'max_workers': (int, _NONE), 'prefilled_mode': (str,),
    'simps_shim': (bool,), 'max_output_bytes': (int,), 'executor': (str,),
    'memory_limit_mb': (int, _NONE), 'max_processes': (int, _NONE), 'max_file_mb': (int, _NONE),
    'isolate_network': (bool,), 'restrict_files': (bool,), 'drop_privileges': (bool,),
}


def _type_names(types):
    return ' or '.join('None' if t is _NONE else t.__name__ for t in types)


def _check_keys(cfg, schema, key, what):
    for name, value in cfg.items():
        if name not in schema:
            close = difflib.get_close_matches(name, list(schema), n=1)
            hint = f'did you mean {close[0]!r}? ' if close else ''
            raise ConfigError(f'{name!r} is not a {what} option', key=f'{key}.{name}',
                              fix=f'{hint}valid options: {", ".join(schema)}')
        types = schema[name]
        if types is None:
            continue
        # bool is an int in Python; do not let True pass as a number.
        if isinstance(value, bool) and bool not in types:
            ok = False
        else:
            ok = isinstance(value, types)
        if not ok:
            raise ConfigError(f'must be {_type_names(types)}, got {type(value).__name__} {value!r}',
                              key=f'{key}.{name}', fix=f'set {name} to a {_type_names(types)}')


def _positive(cfg, name, key):
    value = cfg.get(name)
    if value is not None and not value > 0:
        raise ConfigError(f'must be positive, got {value!r}', key=f'{key}.{name}')


def validate_dataset(cfg, key):
    if not isinstance(cfg, dict):
        raise ConfigError(f'must be a dict, got {type(cfg).__name__}', key=key)
    _check_keys(cfg, DATASET_KEYS, key, 'dataset')
    resolve_type(cfg.get('type', 'SciCodeDataset'), key=f'{key}.type')
    split = cfg.get('split', 'validation')
    if split not in SPLITS:
        raise ConfigError(f'unknown split {split!r}', key=f'{key}.split',
                          fix=f'use one of {", ".join(map(repr, SPLITS))}')
    for pid in cfg.get('sample_ids') or []:
        if not isinstance(pid, (str, int)) or isinstance(pid, bool):
            raise ConfigError(f'problem ids must be strings like "10", got {pid!r}',
                              key=f'{key}.sample_ids')
    _check_keys(cfg.get('reader_cfg', {}), READER_KEYS, f'{key}.reader_cfg', 'reader_cfg')
    infer_cfg = cfg.get('infer_cfg', {})
    _check_keys(infer_cfg, INFER_KEYS, f'{key}.infer_cfg', 'infer_cfg')
    if infer_cfg.get('mode', 'naive') not in INFER_MODES:
        raise ConfigError(f'unknown generation mode {infer_cfg["mode"]!r}', key=f'{key}.infer_cfg.mode',
                          fix=f'use one of {", ".join(map(repr, INFER_MODES))}')
    for name in ('max_out_len', 'tool_use_max_loops', 'code_timeout_seconds'):
        _positive(infer_cfg, name, f'{key}.infer_cfg')
    eval_cfg = cfg.get('eval_cfg', {})
    _check_keys(eval_cfg, EVAL_KEYS, f'{key}.eval_cfg', 'eval_cfg')
    evaluator = eval_cfg.get('evaluator')
    if evaluator is not None:
        ekey = f'{key}.eval_cfg.evaluator'
        if 'type' not in evaluator:
            raise ConfigError('needs a `type` (e.g. SciCodeEvaluator)', key=ekey)
        cls = resolve_type(evaluator['type'], key=f'{ekey}.type')
        kwargs = {k: v for k, v in evaluator.items() if k != 'type'}
        check_kwargs(cls, kwargs, ekey)
        _check_keys(kwargs, {**EVALUATOR_TYPES, **{k: None for k in kwargs if k not in EVALUATOR_TYPES}},
                    ekey, 'evaluator')
        for name in ('timeout', 'max_workers', 'max_output_bytes', 'memory_limit_mb', 'max_processes',
                     'max_file_mb'):
            _positive(kwargs, name, ekey)
        mode = kwargs.get('prefilled_mode', 'official')
        if mode not in PREFILLED_MODES:
            raise ConfigError(f'unknown prefilled_mode {mode!r}', key=f'{ekey}.prefilled_mode',
                              fix=f'use one of {", ".join(map(repr, PREFILLED_MODES))}')


def _require_list(cfg, name):
    if name not in cfg:
        present = [k for k in cfg.keys() if not k.startswith('_')]
        close = difflib.get_close_matches(name, present, n=1)
        hint = f'; found {close[0]!r}: did you mean {name!r}?' if close else ''
        raise ConfigError(f'no `{name}` defined{hint}', key=name,
                          fix=f'define {name} = [dict(type=..., ...), ...] or import one with read_base()')
    value = cfg[name]
    if not isinstance(value, (list, tuple)) or not value:
        raise ConfigError('must be a non-empty list of dicts', key=name)
    return value


def _unique(abbrs, name):
    seen = set()
    for i, abbr in enumerate(abbrs):
        if abbr in seen:
            raise ConfigError(f'abbr {abbr!r} is used twice', key=f'{name}[{i}].abbr',
                              fix='give each entry its own abbr; outputs are named after it')
        seen.add(abbr)


def validate_config(cfg, file=None):
    """Raise ConfigError (with the file) on the first problem found."""
    try:
        models = _require_list(cfg, 'models')
        datasets = _require_list(cfg, 'datasets')
        for i, model in enumerate(models):
            key = f'models[{i}]'
            if not isinstance(model, dict) or 'type' not in model:
                raise ConfigError('must be a dict with a `type`', key=key)
            cls = resolve_type(model['type'], key=f'{key}.type')
            check_kwargs(cls, {k: v for k, v in model.items() if k != 'type'}, key)
        for i, dataset in enumerate(datasets):
            validate_dataset(dataset, f'datasets[{i}]')
        _unique([model_abbr(m) for m in models], 'models')
        _unique([dataset_abbr(d) for d in datasets], 'datasets')
        for name in ('summarizer', 'runner', 'partitioner'):
            if name in cfg and cfg[name] is not None:
                sub = cfg[name]
                if not isinstance(sub, dict) or 'type' not in sub:
                    raise ConfigError('must be a dict with a `type`', key=name)
                cls = resolve_type(sub['type'], key=f'{name}.type')
                check_kwargs(cls, {k: v for k, v in sub.items() if k != 'type'}, name)
        if 'work_dir' in cfg and not isinstance(cfg['work_dir'], str):
            raise ConfigError('must be a string path', key='work_dir')
    except ConfigError as exc:
        raise exc.within(file=file) from None
