"""A run's models, checked against its datasets before any request is sent.

Here, next to the inference loop, because these are its rules: which models can answer which
split, which generation modes need a chat model, when samples would all be the same answer,
and which settings make earlier predictions stale (engine.py) when a run goes on with -r.
"""
from ..errors import ConfigError
from ..predictions import PredictionStore
from ..registry import build_model
from .engine import check_stale, infer_settings
from .modes import requires_chat
from .settings import InferConfig


def ready_models(model_cfgs, datasets, dataset_cfgs):
    """The models of the config's entries, each checked against every dataset (`datasets`, built
    from `dataset_cfgs`) it will answer."""
    models = []
    for i, m_cfg in enumerate(model_cfgs):
        model = build_model(m_cfg, key=f'models[{i}]')
        models.append(model)
        for j, dataset in enumerate(datasets):
            try:
                model.check_dataset(dataset)
            except ConfigError as exc:
                raise ConfigError(f'model {model.abbr!r} cannot run dataset {dataset.abbr!r}: '
                                  f'{exc.message}', key=f'datasets[{j}].{exc.key or "split"}',
                                  fix=exc.fix) from None
            check_mode(model, dataset_cfgs[j], key=f'datasets[{j}].infer_cfg')
    return models


def check_mode(model, dataset_cfg, key):
    """The dataset's generation settings (infer_cfg) are ones `model` can answer."""
    infer = InferConfig.of(dataset_cfg.get('infer_cfg'))
    if requires_chat(infer.mode) and not model.supports_chat:
        raise ConfigError(f'mode {infer.mode!r} needs a chat model; {type(model).__name__} '
                          f'({model.abbr!r}) only answers single prompts', key=f'{key}.mode',
                          fix="use mode='naive' with this model, or an OpenAIChatModel")
    if infer.n > 1 and getattr(model, 'temperature', None) == 0:
        raise ConfigError(f'n={infer.n} samples of model {model.abbr!r} at temperature 0 would be the '
                          f'same answer {infer.n} times', key=f'{key}.n',
                          fix='give the model a temperature above 0 (e.g. 0.8), or leave n at 1')


def check_stale_predictions(run_dir, models, datasets, dataset_cfgs, discard=False):
    """-r with changed settings: stop before any request, naming what changed; with `discard`
    (--discard-stale), set the old predictions aside instead. Before any task starts: the
    shards of a sharded inference read the run's predictions file before their own part, and
    would otherwise go on from (and merge back) what was made with the old settings."""
    for model in models:
        for ds_cfg, dataset in zip(dataset_cfgs, datasets):
            store = PredictionStore(run_dir.predictions_path(model.abbr, dataset.abbr))
            check_stale(store, infer_settings(model, dataset, ds_cfg.get('infer_cfg') or {}), discard=discard)


def torn_records(run_dir, models, datasets):
    """-r: a note for each record a crash cut short (predictions/store.py's torn lines) whose step
    has no whole record since, in the run's predictions files and the parts of its shards. The
    store ignores such lines, so inference asks those steps again; saying so explains the extra
    requests and shows the run did not fail on them."""
    notes = []
    for model in models:
        for dataset in datasets:
            final = run_dir.predictions_path(model.abbr, dataset.abbr)
            for path in [final, *sorted(run_dir.part_path(final, '*').parent.glob('*.jsonl'))]:
                store = PredictionStore(path)
                torn = store.torn()
                if not torn:
                    continue
                latest = store.load()
                for number, key in torn:
                    if key is not None and key in latest and not latest[key].error:
                        continue            # answered again since
                    step = f'step {key}' if key else 'its step'
                    notes.append(f'{path}: line {number} was cut short (a crash while it was written); '
                                 f'that record is ignored and {step} is asked again')
    return notes
