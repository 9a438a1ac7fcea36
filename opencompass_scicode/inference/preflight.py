"""A run's models, checked against its datasets before any request is sent.

Here, next to the inference loop, because these are its rules: which models can answer which
split, which generation modes need a chat model, when samples would all be the same answer,
and which settings make earlier predictions stale (engine.py) when a run goes on with -r.
"""
from typing import Any

from ..errors import ConfigError
from ..models.launchers import install_hint, missing_launcher
from ..predictions import PredictionStore
from ..registry import build_model
from .engine import check_stale, infer_settings
from .modes import requires_chat
from .settings import InferConfig


def installed_launchers(model_cfgs, dry_run=False, note=print) -> None:
    """Every model server a run would start can be started here: its program or module is
    installed (models/launchers.py). Before anything is fetched, regenerated or asked: ConfigError
    naming the model, what is missing and how to install it; a dry run only notes it."""
    for i, m_cfg in enumerate(model_cfgs):
        server = m_cfg.get('server') if isinstance(m_cfg, dict) else None
        command = server.get('command') if isinstance(server, dict) else None
        # a malformed command is refused, saying how, when the model is built
        missing = missing_launcher(command) if isinstance(command, (list, tuple)) and command else None
        if missing is None:
            continue
        what = (f'model {m_cfg.get("abbr")!r} is served by `{" ".join(map(str, command[:3]))} ...`, and '
                f'{missing} is not installed here')
        fix = f'{install_hint(missing)}; or serve the model yourself and give its URL (openai_api_base= or base_url=)'
        if dry_run:
            note(f'{what}: a run would stop here ({fix})')
            continue
        raise ConfigError(what, key=f'models[{i}].server', fix=fix)


def built_models(model_cfgs, dataset_cfgs, missing_key=None) -> list[Any]:
    """The models of the config's entries, each checked against the generation settings of every
    dataset entry it will answer: from the config alone, before any request or fetch.
    `missing_key(text)`, if given (a dry run), is told of a model without its API key, which is
    then left out of the checks instead of stopping them."""
    models = []
    for i, m_cfg in enumerate(model_cfgs):
        try:
            model = build_model(m_cfg, key=f'models[{i}]')
        except ConfigError as exc:
            if missing_key is None or exc.key != f'models[{i}].key':
                raise
            missing_key(f'{exc.message}: a run would stop here (fix: {exc.fix})')
            continue
        for j, ds_cfg in enumerate(dataset_cfgs):
            check_mode(model, ds_cfg, key=f'datasets[{j}].infer_cfg')
        models.append(model)
    return models


def check_endpoints(models, note=print) -> None:
    """Each model's endpoint asked once (models/probe.py), before any work: a wrong URL, key or
    model name stops the run here (EndpointError, exit 2) instead of after minutes of retries.
    Models sharing an endpoint, key and name are asked once; `note(text)` tells of what could not
    be checked."""
    asked = set()
    for model in models:
        identity = (getattr(model, 'base_url', None), getattr(model, 'path', None), getattr(model, 'api_key', None))
        if identity in asked:
            continue
        asked.add(identity)
        said = model.probe()
        if said:
            note(said)


def ready_models(models, datasets) -> list[Any]:
    """`models` (built_models), each checked against every dataset (built, its problems read)."""
    for model in models:
        for j, dataset in enumerate(datasets):
            try:
                model.check_dataset(dataset)
            except ConfigError as exc:
                raise ConfigError(f'model {model.abbr!r} cannot run dataset {dataset.abbr!r}: '
                                  f'{exc.message}', key=f'datasets[{j}].{exc.key or "split"}',
                                  fix=exc.fix) from None
    return models


def token_limits(models, datasets, dataset_cfgs) -> list[str]:
    """For --dry-run: the token limit each model's requests carry for each dataset, and whose it
    is (the dataset's infer_cfg max_out_len comes first, as the inference loop applies it,
    models/base.py answer_limit)."""
    lines = []
    for model in models:
        if not hasattr(model, 'max_out_len'):
            continue                    # answers without asking a model (reference, dummy, ...)
        for ds_cfg, dataset in zip(dataset_cfgs, datasets):
            theirs = InferConfig.of(ds_cfg.get('infer_cfg')).max_out_len
            if theirs:
                said = f'max_tokens {theirs} (the dataset\'s max_out_len)'
            elif model.max_out_len:
                said = f'max_tokens {model.max_out_len} (the model\'s max_out_len; the dataset sets none)'
            else:
                said = 'no max_tokens (neither the dataset nor the model sets max_out_len: the server\'s default)'
            lines.append(f'{model.abbr} on {dataset.abbr}: {said}')
    return lines


def check_mode(model, dataset_cfg, key) -> None:
    """The dataset's generation settings (infer_cfg) are ones `model` can answer."""
    infer = InferConfig.of(dataset_cfg.get('infer_cfg'))
    if requires_chat(infer.mode) and not model.supports_chat:
        raise ConfigError(f'mode {infer.mode!r} needs a chat model; {type(model).__name__} '
                          f'({model.abbr!r}) only answers single prompts', key=f'{key}.mode',
                          fix="use mode='naive' with this model, or an OpenAIChatModel")
    temperature = getattr(model, 'temperature', 'none of its own')
    if temperature is None:          # the dataset's (its protocol's) applies
        temperature = infer.temperature
    if infer.n > 1 and temperature == 0:
        raise ConfigError(f'n={infer.n} samples of model {model.abbr!r} at temperature 0 would be the '
                          f'same answer {infer.n} times', key=f'{key}.n',
                          fix='give the model a temperature above 0 (e.g. 0.8), or leave n at 1')


def check_stale_predictions(run_dir, models, datasets, dataset_cfgs, discard=False) -> None:
    """-r with changed settings: stop before any request, naming what changed; with `discard`
    (--discard-stale), set the old predictions aside instead. Before any task starts: the
    shards of a sharded inference read the run's predictions file before their own part, and
    would otherwise go on from (and merge back) what was made with the old settings."""
    for model in models:
        for ds_cfg, dataset in zip(dataset_cfgs, datasets):
            store = PredictionStore(run_dir.predictions_path(model.abbr, dataset.abbr))
            check_stale(store, infer_settings(model, dataset, ds_cfg.get('infer_cfg') or {}), discard=discard)


def torn_records(run_dir, models, datasets) -> list[str]:
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
