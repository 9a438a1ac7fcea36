# Reproduce another harness's SciCode number: one model behind an OpenAI-compatible API, one
# dataset under a named protocol (docs/protocols.md), every knob as that protocol sets it:
# split, background, prompt form, token limit, temperature, extraction, step timeout, scoring
# environments. Chosen by environment variables (mmengine's {{$NAME:default}} substitution):
#   SCICODE_PROTOCOL   official (default) | official_inspect | inspect_evals | opencompass |
#                      nemo_skills | scicode_verified | agentcompass
#   SCICODE_MODEL      model name (required); SCICODE_BASE_URL, SCICODE_KEY_VAR as in eval_scicode_api.py
# A key set here as well overrides the protocol's value, and the results then name the difference
# (e.g. protocol='opencompass', split='validation' -> opencompass+split=validation).
_protocol = '{{$SCICODE_PROTOCOL:official}}'
_model = '{{$SCICODE_MODEL:SCICODE_MODEL-is-not-set}}'

models = [dict(
    type='OpenAIChatModel',
    abbr=_model.split('/')[-1],
    path=_model,
    base_url=None if '{{$SCICODE_BASE_URL:default}}' == 'default' else '{{$SCICODE_BASE_URL:default}}',
    key='{{$SCICODE_KEY_VAR:ENV}}',
    # no temperature, no token limit: the protocol's (a model whose entry sets one keeps its own)
)]

datasets = [dict(abbr=f'scicode_{_protocol}', type='SciCodeDataset', path='data/scicode', protocol=_protocol)]

runner = dict(type='LocalRunner', max_num_workers=2)
summarizer = dict(type='SciCodeSummarizer')
work_dir = 'outputs/protocols'
