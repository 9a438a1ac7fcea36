"""Checks a loaded config before any work starts.

Every error names the config file, the key (as a path such as
`datasets[1].infer_cfg.mode`) and what to do. What an entry accepts is its
typed record: the options record of the class it names (utils/options.py:
its constructor's parameters, annotations and defaults) and the records of
the sections between (records.py); the cheap objects are built here so that
their own checks run too.
A key still accepted in its old place gives a note (returned, for the
command line to print).
"""

from ..errors import ConfigError, close_matches
from ..partitioners.limits import asks_endpoint, check_endpoints, endpoint_sharing
from ..registry import build, build_dataset, evaluator_cfg, resolve_type
from ..utils.options import check_options
from .naming import dataset_abbr, model_abbr
from .records import ConfigFile, EvalCfg, RunCfg, StageSection

DATASET_SECTIONS = ('reader_cfg', 'infer_cfg', 'eval_cfg')
MOVED_PREFILLED_MODE = ('eval_cfg.evaluator.prefilled_mode: now a dataset key (prefilled_mode=...), read by '
                        'prompts and scoring alike; still taken from the evaluator')


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


def validate_dataset(cfg: dict, key: str) -> bool:
    """Check the dataset entry `cfg` found at `key`; raise ConfigError on a problem. True where the
    entry sets prefilled_mode in its old place (a note says it moved)."""
    if not isinstance(cfg, dict):
        raise ConfigError(f'must be a dict, got {type(cfg).__name__}', key=key)
    cls = resolve_type(cfg.get('type', 'SciCodeDataset'), key=f'{key}.type')
    options = {k: v for k, v in cfg.items() if k != 'type' and k not in DATASET_SECTIONS}
    check_options(cls, options, key)
    reader = _section(cfg, 'reader_cfg', key)
    check_options(cls, reader, f'{key}.reader_cfg')
    moved = _old_prefilled_mode(cfg, key)
    build_dataset(cfg, key=key)                 # lazy: reads no file yet; refuses two prefilled_modes
    # Here, not at the top: partitioners load this package for its dumps, and must not load models.
    from ..inference.settings import InferConfig
    check_options(InferConfig, _section(cfg, 'infer_cfg', key), f'{key}.infer_cfg')
    eval_cfg = dict(_section(cfg, 'eval_cfg', key))
    if isinstance(eval_cfg.get('pass_at_k'), tuple):
        eval_cfg['pass_at_k'] = list(eval_cfg['pass_at_k'])
    check_options(EvalCfg, eval_cfg, f'{key}.eval_cfg')
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


def _typed_entry(value, key, planning=()):
    """A `dict(type=..., ...)` entry whose options the named class accepts (`planning`: keys that
    are for the plan, not the class)."""
    if not isinstance(value, dict) or 'type' not in value:
        raise ConfigError('must be a dict with a `type`', key=key)
    cls = resolve_type(value['type'], key=f'{key}.type')
    check_options(cls, {k: v for k, v in value.items() if k != 'type' and k not in planning}, key)


def _run_cfg(model, key):
    """run_cfg=dict(num_gpus=..., num_procs=...): what the model's tasks ask of a cluster."""
    run_cfg = model.get('run_cfg')
    if run_cfg is None:
        return
    if not isinstance(run_cfg, dict):
        raise ConfigError('must be a dict, e.g. dict(num_gpus=1, num_procs=1)', key=f'{key}.run_cfg')
    check_options(RunCfg, run_cfg, f'{key}.run_cfg')


def validate_config(cfg, file=None) -> list[str]:
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
            section = _section(cfg, stage)
            check_options(StageSection, section, stage)
            for name, value in section.items():
                if value is not None:
                    _typed_entry(value, f'{stage}.{name}')
        unused = _endpoints(cfg, models)
        # the file's own keys as a whole (what no entry's check above covers: work_dir, agentcompass_outputs)
        check_options(ConfigFile, {name: cfg[name] for name in ConfigFile.model_fields if name in cfg}, None)
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
