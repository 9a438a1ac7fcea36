"""OpenCompass-shaped config entries, turned into this package's entries.

A loaded config whose entries carry OpenCompassNames (names.py) or OpenCompass's
keys (`reader_cfg.input_columns`, `infer_cfg.inferencer`, `eval_cfg.evaluator.
dataset_path`, `openai_api_base`, a summarizer without `type`, ...) gets them
rewritten here, before it is checked. What carries over keeps its meaning;
where OpenCompass deviates from the official SciCode harness (its prompts, its
120 s evaluator timeout, its denominators, no temperature for API models) the
official behaviour stays and a note says so; what has no meaning here is named
in a note too. Entries of this package's own shape pass unchanged.
"""
import inspect
import os
from typing import Any, Optional

from ...errors import ConfigError
from ...registry import resolve_type
from .names import OpenCompassName
from .opencompass_settings import CHAT_INFER_MODE, SPLIT
from .servers import DEFAULT_BACKEND, backend_named, server_command


class Notes:
    """What the user should know about the translation: one line per message, with the keys it
    concerns (the same message for several entries is printed once)."""

    def __init__(self):
        self._where = {}

    def add(self, message: str, where: Optional[str] = None) -> None:
        """Note `message`, concerning the key `where` if given (kept once per message)."""
        keys = self._where.setdefault(message, [])
        if where and where not in keys:
            keys.append(where)

    def lines(self) -> list[str]:
        """One line per message, in the order first noted, naming up to four of its keys."""
        out = []
        for message, keys in self._where.items():
            shown = ', '.join(keys[:4]) + (f' and {len(keys) - 4} more' if len(keys) > 4 else '')
            out.append(f'{message} ({shown})' if keys else message)
        return out


def _kind(entry):
    kind = entry.get('type') if isinstance(entry, dict) else None
    return kind.kind if isinstance(kind, OpenCompassName) else None


def _expect(entry, kinds, key, what):
    """The entry's OpenCompass kind, which must be one of `kinds` (None: not an OpenCompass type)."""
    kind = _kind(entry)
    if kind is not None and kind not in kinds:
        raise ConfigError(f'{entry["type"]} is not {what}', key=f'{key}.type',
                          fix=f'name {what} here')
    return kind


# ------------------------------------------------------------------ datasets
PROMPTS_NOTE = ("prompts: the official SciCode templates; OpenCompass's own prompt text (the `prompt` field "
                "of its SciCode_datasets*.json) is not used, and its with-background file repeats the "
                "without-background one (opencompass issue 1540)")
NO_SPLIT_NOTE = (f"no `split`: OpenCompass's SciCode data is the {SPLIT} split (65 problems, 288 scored steps), "
                 f"so split={SPLIT!r}; set split='validation' for the 15 problems that have gold code")
TIMEOUT_NOTE = ("evaluator timeout: 1800 s per step, as the official harness; OpenCompass's evaluator allows "
                "120 s and reports slower correct steps as failed (set eval_cfg.evaluator.timeout=120 to match it)")
SCORING_NOTE = ("accuracy / sub_accuracy: over the whole split (test: 65 problems, 288 steps), a step without "
                "an answer counting as failed, each verdict attributed to its own problem; OpenCompass divides "
                "by the answers it has and pairs verdicts with scripts in completion order")
CHAT_NOTE = ("ChatInferencer(infer_mode='every'): the steps of a problem asked as one conversation (mode "
             "'chat'), as OpenCompass asks them; the official generator asks one request per step "
             "(GenInferencer, mode 'naive')")
NO_MAX_OUT_LEN_NOTE = ("the inferencer sets no max_out_len: each model's own applies, as in OpenCompass (a model "
                       "without one is asked with no limit, the server's default)")
INFERENCER_UNUSED = ('batch_size', 'max_seq_len', 'min_out_len', 'save_every', 'stopping_criteria',
                     'generation_kwargs', 'fix_id_list')
OPENCOMPASS_INFER_KEYS = ('ice_template', 'prompt_template', 'retriever', 'inferencer')


def _is_opencompass_dataset(ds):
    reader = ds.get('reader_cfg') or {}
    infer = ds.get('infer_cfg') or {}
    evaluator = (ds.get('eval_cfg') or {}).get('evaluator') or {}
    return (_kind(ds) == 'dataset' or _kind(evaluator) == 'evaluator'
            or any(k in reader for k in ('input_columns', 'output_column'))
            or any(k in infer for k in OPENCOMPASS_INFER_KEYS)
            or any(k in evaluator for k in ('dataset_path', 'with_bg')))


def _templates(infer, key, notes):
    for name in ('ice_template', 'prompt_template'):
        template = infer.get(name)
        if template is None:
            continue
        _expect(template, ('prompt-template',), f'{key}.{name}', 'a PromptTemplate')
        if template.get('template'):
            notes.add(f'infer_cfg.{name}: not used ({PROMPTS_NOTE.split(";")[0]})', f'{key}.{name}')
    retriever = infer.get('retriever')
    if retriever is not None and _expect(retriever, ('retriever',), f'{key}.retriever', 'a retriever') is None:
        raise ConfigError(f'retriever {retriever.get("type")!r}: SciCode is zero-shot', key=f'{key}.retriever',
                          fix='use retriever=dict(type=ZeroRetriever) or leave it out')


def _inferencer(inferencer, key, notes):
    """(generation mode, max_out_len) of an OpenCompass inferencer entry."""
    if _expect(inferencer, ('inferencer',), key, 'an inferencer') is None:
        raise ConfigError(f'{inferencer.get("type")!r} is not an OpenCompass inferencer', key=f'{key}.type',
                          fix='use GenInferencer (official) or ChatInferencer(infer_mode="every")')
    mode = inferencer['type'].target
    for name in inferencer.keys():
        if name in ('type', 'max_out_len') or (name == 'infer_mode' and mode == 'chat'):
            continue
        if name in INFERENCER_UNUSED:
            notes.add(f'inferencer option {name!r}: not used here', f'{key}.{name}')
            continue
        raise ConfigError(f'{inferencer["type"].short} option {name!r} has no meaning here', key=f'{key}.{name}',
                          fix='keep type, max_out_len' + (' and infer_mode' if mode == 'chat' else ''))
    if mode == 'chat':
        infer_mode = inferencer.get('infer_mode', 'last')       # OpenCompass's default
        if infer_mode != CHAT_INFER_MODE:
            raise ConfigError(f"infer_mode {infer_mode!r}: SciCode's steps are each answered in turn",
                              key=f'{key}.infer_mode', fix=f"use infer_mode={CHAT_INFER_MODE!r}")
        notes.add(CHAT_NOTE, key)
    if inferencer.get('max_out_len') is None:
        notes.add(NO_MAX_OUT_LEN_NOTE, key)
    return mode, inferencer.get('max_out_len')


def _infer_cfg(infer, key, notes):
    out = {k: infer[k] for k in infer.keys() if k not in OPENCOMPASS_INFER_KEYS}
    _templates(infer, key, notes)
    if infer.get('inferencer') is not None:
        mode, max_out_len = _inferencer(infer['inferencer'], f'{key}.inferencer', notes)
        if out.get('mode', mode) != mode:
            raise ConfigError(f"mode {out['mode']!r} contradicts the inferencer ({infer['inferencer']['type'].short} "
                              f"means {mode!r})", key=f'{key}.mode', fix='keep one of the two')
        out['mode'] = mode
        if max_out_len is not None:
            out.setdefault('max_out_len', max_out_len)
    return out


def _evaluator(evaluator, ds, key, notes):
    out = {k: evaluator[k] for k in evaluator.keys() if k not in ('type', 'dataset_path', 'with_bg')}
    kind = _expect(evaluator, ('evaluator',), key, 'SciCodeEvaluator')
    out['type'] = evaluator['type'].target if kind else evaluator.get('type', 'SciCodeEvaluator')
    with_bg = evaluator.get('with_bg')
    if with_bg is not None and bool(with_bg) != bool(ds.get('with_bg', False)):
        raise ConfigError(f'with_bg={with_bg!r} contradicts the dataset\'s with_bg={ds.get("with_bg", False)!r}',
                          key=f'{key}.with_bg',
                          fix='give the evaluator the with_bg of its dataset, or leave it out (the dataset '
                              'decides which prompts were asked)')
    dataset_path = evaluator.get('dataset_path')
    if dataset_path is not None and os.path.normpath(str(dataset_path)) != os.path.normpath(str(ds.get('path', ''))):
        notes.add(f'eval_cfg.evaluator.dataset_path {dataset_path!r}: not used; the evaluator scores the '
                  f'problems of the dataset\'s path', f'{key}.dataset_path')
    if 'timeout' not in out:
        notes.add(TIMEOUT_NOTE, key)
    return out


def dataset_entry(ds: Any, key: str, notes: Notes) -> Any:
    """The `datasets` entry `ds` (found at `key`) in this package's shape when it is OpenCompass's,
    else `ds` unchanged; what the user should know goes to `notes`. ConfigError for what has no
    counterpart here."""
    if not isinstance(ds, dict) or not _is_opencompass_dataset(ds):
        return ds
    out = {k: ds[k] for k in ds.keys() if k not in ('type', 'reader_cfg', 'infer_cfg', 'eval_cfg', 'n', 'k')}
    kind = _expect(ds, ('dataset',), key, 'SciCodeDataset')
    out['type'] = ds['type'].target if kind else ds.get('type', 'SciCodeDataset')
    if 'split' not in ds:
        out['split'] = SPLIT
        notes.add(NO_SPLIT_NOTE, key)
    reader = {k: v for k, v in (ds.get('reader_cfg') or {}).items() if k not in ('input_columns', 'output_column')}
    if reader:
        out['reader_cfg'] = reader
    out['infer_cfg'] = _infer_cfg(ds.get('infer_cfg') or {}, f'{key}.infer_cfg', notes)
    if ds.get('n') is not None:                   # OpenCompass's repeated runs: samples per problem
        out['infer_cfg'].setdefault('n', ds['n'])
    eval_cfg = {k: v for k, v in (ds.get('eval_cfg') or {}).items() if k != 'evaluator'}
    if ds.get('k') is not None:
        eval_cfg.setdefault('pass_at_k', list(ds['k']) if isinstance(ds['k'], (list, tuple)) else [ds['k']])
    eval_cfg['evaluator'] = _evaluator((ds.get('eval_cfg') or {}).get('evaluator') or {}, ds,
                                       f'{key}.eval_cfg.evaluator', notes)
    out['eval_cfg'] = eval_cfg
    notes.add(PROMPTS_NOTE)
    notes.add(SCORING_NOTE)
    return out


# ------------------------------------------------------------------ models
MODEL_TYPE = 'opencompass_scicode.models.OpenAIChatModel'
# OpenCompass's name -> this package's, for API and local models alike.
MODEL_RENAMES = {'batch_size': 'max_concurrency', 'retry': 'retries', 'max_completion_tokens': 'max_out_len'}
# Accepted, without meaning here (prompts and limits are the official ones; no tokenizer is loaded).
MODEL_UNUSED = ('meta_template', 'max_seq_len', 'tokenizer_path', 'tokenizer_kwargs', 'rpm_verbose', 'verbose',
                'think_tag', 'max_workers', 'org', 'mode', 'logprobs', 'top_logprobs', 'http_client_cfg',
                'status_code_mappings', 'openai_proxy_url', 'pred_postprocessor', 'summarizer_abbr',
                'pad_token_id', 'end_str', 'min_out_len', 'drop_middle', 'use_fastchat_template')
LOCAL_KINDS = ('vllm', 'huggingface', 'lmdeploy')
NO_TEMPERATURE_NOTE = ('temperature not given: 0, as the official harness; OpenCompass then sends none '
                       '(the API\'s default)')
# generation_kwargs: HuggingFace's names -> the OpenAI-compatible request's (vLLM's extra parameters).
GENERATION_RENAMES = {'min_new_tokens': 'min_tokens', 'eos_token_id': 'stop_token_ids'}


def _own_options():
    cls = resolve_type(MODEL_TYPE)
    return [n for n in inspect.signature(cls).parameters if n not in ('self',)]


def _generation(entry, out, key, notes, gen_key='generation_kwargs'):
    """generation_kwargs / gen_config: temperature and the token limit are the model's own settings;
    the rest goes with each request (extra_body)."""
    gen = dict(entry.get(gen_key) or {})
    if 'temperature' in gen:
        out.setdefault('temperature', gen.pop('temperature'))
    for name in ('max_new_tokens', 'max_tokens'):
        if name in gen:
            out.setdefault('max_out_len', gen.pop(name))
    if 'do_sample' in gen:
        gen.pop('do_sample')
        notes.add(f'{gen_key}.do_sample: not used (the temperature decides)', f'{key}.{gen_key}')
    extra = {GENERATION_RENAMES.get(k, k): v for k, v in gen.items()}
    if extra:
        out['extra_body'] = dict(out.get('extra_body') or {}, **extra)


def _api_base(entry, kind, key):
    base = entry.get('openai_api_base')
    if base is None:
        return None                  # OpenAI's own API, the SDK's default
    if isinstance(base, (list, tuple)):
        if len(base) != 1:
            raise ConfigError(f'{len(base)} API bases: one model entry asks one server', key=f'{key}.openai_api_base',
                              fix='give one URL, or one model entry per server')
        base = base[0]
    base = str(base).rstrip('/')
    # OpenAI posts to the full URL; OpenAISDK takes the SDK's base URL.
    if kind == 'api' and base.endswith('/chat/completions'):
        base = base[:-len('/chat/completions')]
    return base


def _server(entry, kind, out, key, notes, backend_name):
    if kind == 'lmdeploy':
        backend_name = 'lmdeploy'
    elif kind == 'vllm':
        backend_name = 'vllm'
    backend = backend_named(entry.get('backend') or backend_name or DEFAULT_BACKEND,
                            f'{key}.backend')
    kwargs = dict(entry.get('model_kwargs') or {})
    if kind == 'lmdeploy':
        kwargs.update(entry.get('engine_config') or {})
    if entry.get('peft_path'):
        raise ConfigError('PEFT adapters are not served here', key=f'{key}.peft_path',
                          fix='merge the adapter into the model and give its path, or serve it yourself and '
                              'use OpenAISDK with openai_api_base')
    num_gpus = (entry.get('run_cfg') or {}).get('num_gpus')
    command, ignored = server_command(backend, entry['path'], kwargs, num_gpus=num_gpus,
                                      max_seq_len=entry.get('max_seq_len'))
    for name in ignored:
        notes.add(f'model_kwargs.{name}: not used by the {backend.name} server', f'{key}.model_kwargs')
    out['server'] = dict(command=command, ready_timeout=1800)       # a first start downloads the weights
    out.setdefault('key', 'EMPTY')                                  # the server asks for no key
    notes.add(f'{entry["type"].short}: served by {backend.name} per inference task and asked through '
              f'its chat template (--dry-run shows the command)', key)


def model_entry(entry: dict, key: str, notes: Notes, backend: Optional[str] = None) -> dict:
    """The `models` entry `entry` (found at `key`) as an OpenAIChatModel entry when its type is
    OpenCompass's, else `entry` unchanged; notes go to `notes`. `backend`: the server for
    HuggingFace-type entries that name none (the command line's --hf-backend); vllm when nothing
    says."""
    kind = _expect(entry, ('api', 'api-sdk', 'vllm', 'huggingface', 'huggingface-base', 'lmdeploy'), key,
                   'a model')
    if kind is None:
        return entry
    if kind == 'huggingface-base':
        raise ConfigError(f'{entry["type"].short}: base models (no chat template) are not asked here: '
                          f'every model is asked through an OpenAI-compatible chat API', key=f'{key}.type',
                          fix='use a chat model (--hf-type chat), or give the server a chat template '
                              '(model_kwargs=dict(chat_template=FILE) for vllm)')
    if 'path' not in entry:
        raise ConfigError('needs `path` (the model name or weights)', key=f'{key}.path')
    own = _own_options()
    out = {'type': MODEL_TYPE}
    special = {'type', 'openai_api_base', 'generation_kwargs', 'gen_config', 'openai_extra_kwargs', 'key',
               'model_kwargs', 'engine_config', 'backend', 'peft_path', 'peft_kwargs', 'stop_words'}
    for name in entry.keys():
        value = entry[name]
        if name in special:
            continue
        if name in MODEL_UNUSED:
            if not (name == 'max_seq_len' and kind in LOCAL_KINDS):     # a local server's context length
                notes.add(f'model option {name!r}: accepted, not used here', f'{key}.{name}')
        elif name in MODEL_RENAMES:
            out.setdefault(MODEL_RENAMES[name], value)
        elif name in own or name == 'run_cfg':
            out[name] = value
        else:
            raise ConfigError(f'{entry["type"].short} option {name!r} has no counterpart here', key=f'{key}.{name}',
                              fix=f'remove it; accepted: {", ".join(sorted({*own, *MODEL_RENAMES, "run_cfg"}))}')
    _generation(entry, out, key, notes, 'gen_config' if kind == 'lmdeploy' else 'generation_kwargs')
    if entry.get('stop_words'):
        out['extra_body'] = dict(out.get('extra_body') or {}, stop=list(entry['stop_words']))
    if kind in ('api', 'api-sdk'):
        if isinstance(entry.get('key'), (list, tuple)):
            raise ConfigError('a list of keys: one key per model entry here', key=f'{key}.key',
                              fix="key='ENV' ($OPENAI_API_KEY), the name of a variable, or one key")
        out['key'] = entry.get('key', 'ENV')
        base = _api_base(entry, kind, key)
        if base is not None:
            out['base_url'] = base
        if entry.get('openai_extra_kwargs'):
            out['extra_body'] = dict(out.get('extra_body') or {}, **entry['openai_extra_kwargs'])
        if 'temperature' not in out:
            notes.add(NO_TEMPERATURE_NOTE, key)
    else:
        if entry.get('key') is not None:
            out['key'] = entry['key']
        _server(entry, kind, out, key, notes, backend)
    return out


# ------------------------------------------------------------------ summarizer, partitioners, runners
SUMMARIZER_TYPE = 'opencompass_scicode.summarizers.SciCodeSummarizer'


def summarizer_entry(entry: Any, key: str, notes: Notes) -> Any:
    """The summarizer entry as a SciCodeSummarizer entry when it is OpenCompass's (its type, or
    its keys without a type), else `entry` unchanged."""
    if not isinstance(entry, dict):
        return entry
    kind = _expect(entry, ('summarizer',), key, 'a summarizer')
    shaped = 'type' not in entry and any(k in entry for k in ('dataset_abbrs', 'summary_groups'))
    if kind is None and not shaped:
        return entry
    out = {k: entry[k] for k in entry.keys() if k not in ('type', 'prompt_db')}
    out['type'] = SUMMARIZER_TYPE
    if 'prompt_db' in entry:
        notes.add("summarizer option 'prompt_db': not used (OpenCompass deprecated it too)", key)
    return out


# OpenCompass's runner and partitioner options that mean nothing here (or are spelled differently).
STAGE_RENAMES = {'extra_command': 'extra_args'}


def stage_entry(entry: Any, key: str, notes: Notes) -> Any:
    """A runner or partitioner entry with this package's type and option names when its type is
    OpenCompass's (options without meaning here are noted), else `entry` unchanged."""
    kind = _expect(entry, ('partitioner', 'runner'), key, 'a partitioner or runner') if isinstance(entry, dict) else None
    if kind is None:
        return entry
    target = entry['type'].target
    accepted = inspect.signature(resolve_type(target)).parameters
    out = {'type': target}
    for name in entry.keys():
        if name == 'type':
            continue
        if name == 'task':
            task = entry['task']
            if _kind(task) != 'task':
                raise ConfigError(f'task {task.get("type") if isinstance(task, dict) else task!r} is not '
                                  f'OpenICLInferTask or OpenICLEvalTask', key=f'{key}.task',
                                  fix='leave task= out: the stage decides the kind of task')
            continue                    # each stage runs its own kind of task
        mine = STAGE_RENAMES.get(name, name)
        if mine in accepted:
            out[mine] = entry[name]
            if mine != name:
                notes.add(f'{name} given to sbatch as {mine}', f'{key}.{name}')
        else:
            notes.add(f'{entry["type"].short} option {name!r}: not used here', f'{key}.{name}')
    return out


# ------------------------------------------------------------------ the whole config
def adopt(cfg, backend=None) -> list[str]:
    """Rewrite OpenCompass-shaped entries of a loaded config (in place); returns the notes."""
    notes = Notes()
    if isinstance(cfg.get('models'), (list, tuple)):
        cfg['models'] = [model_entry(m, f'models[{i}]', notes, backend) if isinstance(m, dict) else m
                         for i, m in enumerate(cfg['models'])]
    if isinstance(cfg.get('datasets'), (list, tuple)):
        cfg['datasets'] = [dataset_entry(d, f'datasets[{i}]', notes) for i, d in enumerate(cfg['datasets'])]
    if cfg.get('summarizer') is not None:
        cfg['summarizer'] = summarizer_entry(cfg['summarizer'], 'summarizer', notes)
    for name in ('runner', 'partitioner'):
        if cfg.get(name) is not None:
            cfg[name] = stage_entry(cfg[name], name, notes)
    for stage in ('infer', 'eval'):
        section = cfg.get(stage)
        if isinstance(section, dict):
            cfg[stage] = {k: stage_entry(v, f'{stage}.{k}', notes) if k in ('runner', 'partitioner') else v
                          for k, v in section.items()}
    return notes.lines()
