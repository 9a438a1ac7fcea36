# A sweep: every model x temperature x generation mode, each combination with its own name,
# without and with background. Edit the three lists below; the rest follows.
#
#   export OPENAI_API_KEY=...          # every variable named in _api_models (read from the environment
#                                      # when the models are built, --dry-run included; never written)
#   python run.py configs/eval_scicode_sweep.py --dry-run     # the plan, no request sent
#   python run.py configs/eval_scicode_sweep.py
#
# A temperature is a model setting: one model entry per model x temperature, named NAME-t0.7.
# A mode is a dataset setting: one dataset entry per mode x background setting, named
# scicode_validation_chat and scicode_validation_chat_with_background.
# The summary has one row per combination (model entry x mode), w/o and w/ background side by side.
#
# Environment (all optional):
#   SCICODE_SWEEP_OFFLINE=1   the built-in offline models (ReferenceModel: gold code, DummyModel: a stub)
#                             instead of _api_models, crossed with the same temperatures (which they
#                             ignore) and modes: the whole sweep without network or key
#   SCICODE_SAMPLE_IDS=1,19   only these problems (default: the whole split)
#   SCICODE_SPLIT             validation (default, 15 problems) | test | all (test/all need test_data.h5)
from mmengine.config import read_base

from opencompass_scicode.datasets import SciCodeDataset
from opencompass_scicode.models import OpenAIChatModel
from opencompass_scicode.runners import LocalRunner

with read_base():
    from .datasets.scicode.scicode_validation import scicode_eval_cfg, scicode_reader_cfg
    from .models.dummy import models as _dummy_models
    from .models.reference import models as _reference_models
    from .summarizers.scicode_summary import summarizer

# (model name as the API knows it, base_url (None: OpenAI), environment variable holding its key;
#  None: OPENAI_API_KEY). Local servers (vLLM, SGLang, llama.cpp, Ollama) accept any non-empty key.
_api_models = [
    ('gpt-4o-mini', None, 'OPENAI_API_KEY'),
    ('gpt-4.1-mini', None, 'OPENAI_API_KEY'),
    # ('Qwen/Qwen2.5-Coder-7B-Instruct', 'http://localhost:8000/v1', 'LOCAL_API_KEY'),
]
_temperatures = [0.0, 0.7]
_modes = ['naive', 'chat', 'tool_use']        # 'naive' is the official one

_max_out_len = 4096
_max_concurrency = 8        # requests in flight per model entry; the inference tasks of all entries run at once
# Models sharing a base_url may share one limit there instead (divided among them; docs/sweeps-of-api-models.md):
# endpoints = [dict(base_url='http://localhost:8000/v1', max_concurrency=32)]


def _env(name, default=''):
    # A plain import inside a function: mmengine's lazy-import mode leaves it real.
    import os
    return os.environ.get(name, default).strip() or default


_offline = _env('SCICODE_SWEEP_OFFLINE', '0') not in ('0', 'false', 'no')
_split = _env('SCICODE_SPLIT', 'validation')
_sample_ids = [i.strip() for i in _env('SCICODE_SAMPLE_IDS').split(',') if i.strip()] or None

if _offline:
    models = [dict(entry, abbr=f'{entry["abbr"]}-t{float(t)}')
              for entry in _reference_models + _dummy_models for t in _temperatures]
else:
    models = [
        dict(type=OpenAIChatModel,
             abbr=f'{name.split("/")[-1]}-t{float(t)}',
             path=name,
             base_url=base_url,
             key=f'ENV:{key_var or "OPENAI_API_KEY"}',   # a clear error naming the variable if it is unset
             temperature=float(t),
             max_out_len=_max_out_len,
             max_concurrency=_max_concurrency)
        for name, base_url, key_var in _api_models for t in _temperatures
    ]

datasets = [
    dict(abbr=f'scicode_{_split}_{mode}' + ('_with_background' if with_bg else ''),
         type=SciCodeDataset,
         path='data/scicode',
         split=_split,
         with_bg=with_bg,
         sample_ids=_sample_ids,
         reader_cfg=scicode_reader_cfg,
         infer_cfg=dict(mode=mode, max_out_len=_max_out_len),
         eval_cfg=scicode_eval_cfg)
    for mode in _modes for with_bg in (False, True)
]

# One row per model entry x mode, even for a single mode.
summarizer = dict(summarizer, layout='long')
# 2 slots, for evaluation (and models that start a server); inference of API models holds none
runner = dict(type=LocalRunner, max_num_workers=2)
work_dir = 'outputs/sweep'
