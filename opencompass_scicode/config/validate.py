"""Checks a loaded config before any work starts.

Every error names the config file, the key (as a path such as
`datasets[1].infer_cfg.mode`) and what to do. What an entry accepts is read
from the class it names (its constructor's parameters and their annotations),
and the cheap objects are built here so that their own checks run too.
A key still accepted in its old place gives a note (returned, for the
command line to print).
"""

from ..errors import ConfigError, close_matches, did_you_mean
from ..partitioners.limits import asks_endpoint, check_endpoints, endpoint_sharing
from ..registry import build, build_dataset, check_kwargs, evaluator_cfg, resolve_type
from .naming import dataset_abbr, model_abbr

DATASET_SECTIONS = ('reader_cfg', 'infer_cfg', 'eval_cfg')
MOVED_PREFILLED_MODE = ('eval_cfg.evaluator.prefilled_mode: now a dataset key (prefilled_mode=...), read by '
                        'prompts and scoring alike; still taken from the evaluator')
STAGE_KEYS = ('partitioner', 'runner')      # of the `infer` and `eval` sections


def _unknown(name, known, key, what):
    hint = did_you_mean(name, known)
    raise ConfigError(f'{name!r} is not a {what} option', key=f'{key}.{name}',
                      fix=f'{hint}valid options: {", ".join(known)}')


def _section(cfg, name, key=None):
    value = cfg.get(name) or {}
    if not isinstance(value, dict):
        raise ConfigError(f'must be a dict, got {type(value).__name__}', key=f'{key}.{name}' if key else name)
    return value


def _old_prefilled_mode(cfg, key):
    """True where the entry sets prefilled_mode in its old place, the evaluator. The evaluator's
    own checks run first then: a wrong value is named at the key it was written at."""
    evaluator = _section(cfg, 'eval_cfg', key).get('evaluator')
    if not (isinstance(evaluator, dict) and 'prefilled_mode' in evaluator):
        return False
    build(evaluator_cfg(cfg), key=f'{key}.eval_cfg.evaluator')
    return True


def validate_dataset(cfg, key):
    """True where the entry sets prefilled_mode in its old place (a note says it moved)."""
    if not isinstance(cfg, dict):
        raise ConfigError(f'must be a dict, got {type(cfg).__name__}', key=key)
    cls = resolve_type(cfg.get('type', 'SciCodeDataset'), key=f'{key}.type')
    options = {k: v for k, v in cfg.items() if k != 'type' and k not in DATASET_SECTIONS}
    check_kwargs(cls, options, key)
    reader = _section(cfg, 'reader_cfg', key)
    check_kwargs(cls, reader, f'{key}.reader_cfg')
    moved = _old_prefilled_mode(cfg, key)
    build_dataset(cfg, key=key)                 # lazy: reads no file yet; refuses two prefilled_modes
    # Here, not at the top: partitioners load this package for its dumps, and must not load models.
    from ..inference.settings import InferConfig
    infer = _section(cfg, 'infer_cfg', key)
    check_kwargs(InferConfig, infer, f'{key}.infer_cfg')
    try:
        InferConfig.of(infer)
    except ConfigError as exc:
        raise exc.within(key=f'{key}.infer_cfg') from None
    eval_cfg = _section(cfg, 'eval_cfg', key)
    for name in eval_cfg:
        if name not in ('evaluator', 'pass_at_k'):
            _unknown(name, ['evaluator', 'pass_at_k'], f'{key}.eval_cfg', 'eval_cfg')
    ks = eval_cfg.get('pass_at_k', [])
    if not isinstance(ks, (list, tuple)) or not all(isinstance(k, int) and not isinstance(k, bool) and k > 0
                                                    for k in ks):
        raise ConfigError(f'must be a list of positive whole numbers, got {ks!r}', key=f'{key}.eval_cfg.pass_at_k',
                          fix='e.g. pass_at_k=[1, 5, 10] (k above infer_cfg n is left out)')
    evaluator = eval_cfg.get('evaluator')
    if evaluator is not None and 'type' not in evaluator:
        raise ConfigError('needs a `type` (e.g. SciCodeEvaluator)', key=f'{key}.eval_cfg.evaluator')
    build(evaluator_cfg(cfg), key=f'{key}.eval_cfg.evaluator')
    return moved


def _require_list(cfg, name):
    if name not in cfg:
        present = [k for k in cfg.keys() if not k.startswith('_')]
        close = close_matches(name, present)
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


RUN_CFG_KEYS = ('num_gpus', 'num_procs')


def _typed_entry(value, key, planning=()):
    """A `dict(type=..., ...)` entry whose options the named class accepts (`planning`: keys that
    are for the plan, not the class)."""
    if not isinstance(value, dict) or 'type' not in value:
        raise ConfigError('must be a dict with a `type`', key=key)
    cls = resolve_type(value['type'], key=f'{key}.type')
    check_kwargs(cls, {k: v for k, v in value.items() if k != 'type' and k not in planning}, key)


def _run_cfg(model, key):
    """run_cfg=dict(num_gpus=..., num_procs=...): what the model's tasks ask of a cluster."""
    run_cfg = model.get('run_cfg')
    if run_cfg is None:
        return
    if not isinstance(run_cfg, dict):
        raise ConfigError('must be a dict, e.g. dict(num_gpus=1, num_procs=1)', key=f'{key}.run_cfg')
    for name, value in run_cfg.items():
        if name not in RUN_CFG_KEYS:
            _unknown(name, RUN_CFG_KEYS, f'{key}.run_cfg', '`run_cfg`')
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ConfigError(f'must be a whole number >= 0, got {value!r}', key=f'{key}.run_cfg.{name}')


def validate_config(cfg, file=None):
    """Raise ConfigError (with the file) on the first problem found; else the notes on keys
    accepted in an old place."""
    try:
        models = _require_list(cfg, 'models')
        datasets = _require_list(cfg, 'datasets')
        for i, model in enumerate(models):
            _typed_entry(model, f'models[{i}]', planning=('run_cfg',))
            _run_cfg(model, f'models[{i}]')
        moved = [f'datasets[{i}]' for i, dataset in enumerate(datasets)
                 if validate_dataset(dataset, f'datasets[{i}]')]
        _unique([model_abbr(m) for m in models], 'models')
        _unique([dataset_abbr(d) for d in datasets], 'datasets')
        for name in ('summarizer', 'runner', 'partitioner'):
            if cfg.get(name) is not None:
                _typed_entry(cfg[name], name)
        if cfg.get('summarizer') is not None:
            build(dict(cfg['summarizer']), key='summarizer')    # its own checks (layout=...), before any work
        for stage in ('infer', 'eval'):
            for name, value in _section(cfg, stage).items():
                if name not in STAGE_KEYS:
                    _unknown(name, STAGE_KEYS, stage, f'`{stage}` section')
                if value is not None:
                    _typed_entry(value, f'{stage}.{name}')
        unused = _endpoints(cfg, models)
        if not isinstance(cfg.get('agentcompass_outputs', False), bool):
            raise ConfigError('must be True or False (True: AgentCompass\'s files too, beside ours)',
                              key='agentcompass_outputs')
        if 'work_dir' in cfg and not isinstance(cfg['work_dir'], str):
            raise ConfigError('must be a string path', key='work_dir')
    except ConfigError as exc:
        raise exc.within(file=file) from None
    notes = [f'endpoints: no API model with a base_url of {url} in `models`; its limits apply to nothing'
             for url in unused]
    if not moved:
        return notes
    more = f' and {len(moved) - 4} more)' if len(moved) > 4 else ')'
    return [f'{MOVED_PREFILLED_MODE} ({", ".join(moved[:4])}{more}', *notes]


def _endpoints(cfg, models):
    """`endpoints` checked, one inference task per model (the partitioner checks again with its
    shards); the endpoints no model asks."""
    limits = check_endpoints(cfg.get('endpoints'))
    endpoint_sharing(models, limits, tasks_per_model=1)
    asked = {asks_endpoint(model) for model in models}
    return [url for url in limits if url not in asked]
