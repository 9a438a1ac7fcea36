# Evaluate a model behind an OpenAI-compatible API, chosen by environment variables
# (read with mmengine's {{$NAME:default}} substitution):
#   SCICODE_MODEL      model name (required), e.g. gpt-4o or the name your server serves
#   SCICODE_BASE_URL   API root, e.g. http://localhost:8000/v1 (unset: OpenAI itself)
#   SCICODE_KEY_VAR    name of the variable holding the key (default OPENAI_API_KEY)
#   SCICODE_SPLIT      validation (default, 15 problems) | test | all (test/all need test_data.h5)
#   SCICODE_MODE       naive (default, official) | chat | tool_use
#   SCICODE_CONCURRENCY, SCICODE_QPS   limits for the whole run (default 16; 0 = no rate limit)
# Both background settings are evaluated and shown side by side.
_model = '{{$SCICODE_MODEL:SCICODE_MODEL-is-not-set}}'
_split = '{{$SCICODE_SPLIT:validation}}'
_mode = '{{$SCICODE_MODE:naive}}'
_qps = float('{{$SCICODE_QPS:0}}')
_max_out_len = int('{{$SCICODE_MAX_OUT_LEN:4096}}')

models = [dict(
    type='OpenAIChatModel',
    abbr=_model.split('/')[-1],
    path=_model,
    base_url=None if '{{$SCICODE_BASE_URL:default}}' == 'default' else '{{$SCICODE_BASE_URL:default}}',
    key='{{$SCICODE_KEY_VAR:ENV}}',
    temperature=0.0,
    max_out_len=_max_out_len,
    max_concurrency=int('{{$SCICODE_CONCURRENCY:16}}'),
    query_per_second=_qps or None,
)]

datasets = [
    dict(abbr=f'scicode_{_split}' + ('_with_background' if bg else ''), type='SciCodeDataset',
         path='data/scicode', split=_split, with_bg=bg,
         infer_cfg=dict(mode=_mode, max_out_len=_max_out_len),
         eval_cfg=dict(evaluator=dict(type='SciCodeEvaluator')))   # the official 1800 s per step
    for bg in (False, True)
]

runner = dict(type='LocalRunner', max_num_workers=2)
summarizer = dict(type='SciCodeSummarizer')
work_dir = 'outputs/api'
