# Reproduce another harness's SciCode number: one model behind an OpenAI-compatible API, one
# dataset under a named protocol (docs/protocols.md), every knob as that protocol sets it:
# split, background, prompt form, token limit, temperature, extraction, step timeout, scoring
# environments. Chosen by environment variables (mmengine's {{$NAME:default}} substitution):
#   SCICODE_PROTOCOL   official (default) | official_inspect | inspect_evals | opencompass |
#                      nemo_skills | scicode_verified | agentcompass
#   SCICODE_MODEL      model name (required); SCICODE_BASE_URL, SCICODE_KEY_VAR, SCICODE_CONCURRENCY,
#                      SCICODE_QPS as in eval_scicode_api.py
# A key set here as well overrides the protocol's value, and the results then name the difference
# (e.g. protocol='opencompass', split='validation' -> opencompass+split=validation).
_base_ = ['eval_scicode_api.py']          # its model entry (SCICODE_MODEL, SCICODE_BASE_URL, SCICODE_KEY_VAR)
_protocol = '{{$SCICODE_PROTOCOL:official}}'

# no temperature, no token limit: the protocol's (a model whose entry sets one keeps its own)
models = [{k: v for k, v in _base_.models[0].items() if k not in ('temperature', 'max_out_len')}]

datasets = [dict(abbr=f'scicode_{_protocol}', type='SciCodeDataset', path='data/scicode', protocol=_protocol)]

work_dir = 'outputs/protocols'
