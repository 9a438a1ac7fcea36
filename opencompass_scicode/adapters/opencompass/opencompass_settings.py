"""OpenCompass's SciCode settings, and what its shipped config names mean: the one place.

OpenCompass ships SciCode's dataset configs (`opencompass/configs/datasets/scicode/`:
`scicode_gen`, `scicode_gen_085b98`, `scicode_gen_62c139`, `scicode_wbg_gen_085b98`) and
a `scicode` summarizer (`summarizers/scicode.py` over `summarizers/groups/scicode.py`).
A user who names one, by `--datasets scicode_gen` or by `from opencompass.configs.datasets.
scicode.scicode_gen import SciCode_datasets`, means OpenCompass's: the test split (its data
pack holds no other), the steps of a problem asked as one conversation, its token limit and
its abbrs. Where OpenCompass's own files can be read (an installed OpenCompass, or
OPENCOMPASS_CONFIGS naming a checkout's `opencompass/configs`, opencompass_files.py), they
are; without them the variables below stand in for those files, in OpenCompass's own shape
(the facts as its files state them, read at open-compass/opencompass a5acc4b), and
entries.py translates them as it translates any OpenCompass entry.

What an OpenCompass entry means when it leaves something out (no `split`: the test split;
`ChatInferencer(infer_mode='every')`: one conversation per problem) is also said here, so
that the whole of OpenCompass's SciCode protocol can be read in one file.
"""
import copy
from typing import Optional

# ------------------------------------------------------------------ what OpenCompass's entries mean
# OpenCompass's data pack (SciCode_datasets.json) is the test split: an entry without `split` means it.
SPLIT = 'test'
# ChatInferencer(infer_mode='every'): every step of a problem answered in turn, in one conversation
# that keeps the model's own earlier answers (this package's mode 'chat'); GenInferencer asks one
# request per step, the official generation (mode 'naive').
INFERENCER_MODES = {'ChatInferencer': 'chat', 'GenInferencer': 'naive'}
CHAT_INFER_MODE = 'every'
# The abbrs its configs give, without and with background; results files and the summarizer's rows
# are named by them.
ABBRS = {False: 'SciCode', True: 'SciCode_with_background'}
DATA_PATH = './data/scicode'

# ------------------------------------------------------------------ its shipped dataset configs
# config name -> (with_bg, the inferencer's max_out_len; None: it sets none, so the model's applies)
DATASET_CONFIGS = {
    'scicode_gen_085b98': (False, 4096),
    'scicode_gen_62c139': (False, None),
    'scicode_wbg_gen_085b98': (True, 4096),
}
# scicode_gen.py is a read_base() of scicode_gen_085b98 that binds its SciCode_datasets alone.
ALIASES = {'scicode_gen': 'scicode_gen_085b98'}

# ------------------------------------------------------------------ its shipped summarizer
# Rows of the `scicode` summarizer. No dataset is called SciCode_wo_background (the one without
# background is `SciCode`): OpenCompass shows those rows as '-', and so does this package.
SUMMARIZER_ROWS = (('SciCode_with_background', 'accuracy'), ('SciCode_with_background', 'sub_accuracy'),
                   ('SciCode_wo_background', 'accuracy'), ('SciCode_wo_background', 'sub_accuracy'))
SUMMARY_GROUP_NAMES = ('SciCode', 'SciCode_with_background', 'SciCode_wo_background')
METRICS = ('accuracy', 'sub_accuracy')
SUMMARIZER_NAME = 'scicode'

# Module paths under `opencompass.configs`, as the files lie in OpenCompass.
DATASETS_PACKAGE = 'datasets.scicode'
SUMMARIZERS_PACKAGE = 'summarizers'


def _dataset_variables(name):
    """The variables OpenCompass's dataset config `name` defines, in its shape; types as dotted
    names, as OpenCompass's dumped configs write them (placeholders.py resolves them)."""
    with_bg, max_out_len = DATASET_CONFIGS[name]
    inferencer = dict(type='opencompass.openicl.icl_inferencer.ChatInferencer',
                      infer_mode=CHAT_INFER_MODE)
    if max_out_len is not None:
        inferencer['max_out_len'] = max_out_len
    reader_cfg = dict(input_columns=['prompt'], output_column=None)
    infer_cfg = dict(ice_template=dict(type='opencompass.openicl.icl_prompt_template.PromptTemplate',
                                       template=''),
                     retriever=dict(type='opencompass.openicl.icl_retriever.ZeroRetriever'),
                     inferencer=inferencer)
    eval_cfg = dict(evaluator=dict(type='opencompass.datasets.SciCodeEvaluator', dataset_path=DATA_PATH,
                                   with_bg=with_bg))
    datasets = [dict(abbr=ABBRS[with_bg], type='opencompass.datasets.SciCodeDataset', path=DATA_PATH,
                     with_bg=with_bg, reader_cfg=reader_cfg, infer_cfg=infer_cfg, eval_cfg=eval_cfg)]
    return dict(SciCode_reader_cfg=reader_cfg, SciCode_infer_cfg=infer_cfg, SciCode_eval_cfg=eval_cfg,
                SciCode_datasets=datasets)


def _summary_groups():
    return [dict(name=name, subsets=[[name, metric] for metric in METRICS]) for name in SUMMARY_GROUP_NAMES]


def _summarizer_variables():
    groups = _summary_groups()
    return dict(scicode_summary_groups=groups,
                summarizer=dict(dataset_abbrs=[list(row) for row in SUMMARIZER_ROWS], summary_groups=groups))


def _modules():
    """module under `opencompass.configs` -> the function giving its variables."""
    out = {f'{DATASETS_PACKAGE}.{name}': (lambda name=name: _dataset_variables(name)) for name in DATASET_CONFIGS}
    for alias, target in ALIASES.items():
        out[f'{DATASETS_PACKAGE}.{alias}'] = (
            lambda target=target: {'SciCode_datasets': _dataset_variables(target)['SciCode_datasets']})
    out[f'{SUMMARIZERS_PACKAGE}.{SUMMARIZER_NAME}'] = _summarizer_variables
    out[f'{SUMMARIZERS_PACKAGE}.groups.{SUMMARIZER_NAME}'] = (
        lambda: {'scicode_summary_groups': _summary_groups()})
    return out


MODULES = _modules()
# The names `--datasets NAME` / `--summarizer NAME` find among them, by kind.
NAMED = {'datasets': {module.rpartition('.')[2]: module for module in MODULES if module.startswith('datasets.')},
         'summarizers': {SUMMARIZER_NAME: f'{SUMMARIZERS_PACKAGE}.{SUMMARIZER_NAME}'},
         'models': {}}


def module_variables(module: str) -> Optional[dict]:
    """The variables of `opencompass.configs.<module>` as OpenCompass's file defines them (a new
    copy each time: configs change what they import), or None for a module not stood in for."""
    make = MODULES.get(module)
    return copy.deepcopy(make()) if make else None


def named_variables(kind: str, name: str) -> Optional[dict]:
    """The variables of the config `name` of `kind` ('datasets', 'summarizers', 'models') that
    OpenCompass ships and this package stands in for; None for any other name."""
    module = NAMED[kind].get(name)
    return module_variables(module) if module else None
