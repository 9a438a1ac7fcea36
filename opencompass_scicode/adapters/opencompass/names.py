"""OpenCompass's `opencompass.*` names, and what each means here: the one table.

OpenCompass configs import their types (`from opencompass.models import OpenAI`).
mmengine reads such files in lazy-import mode, where an import is a placeholder
that imports the module the first time its value is used: without OpenCompass
that fails, and with it the value would be OpenCompass's class, which means
nothing to this package. So every `opencompass.*` name a config holds is
replaced, before anything uses it, by an `OpenCompassName` (a string: the name
as OpenCompass's public face spells it); entries.py then turns the entries that
carry one into this package's entries. A name not in the table stops loading,
naming the file, line and key, and what to use instead.
"""
import builtins
import types
from typing import Optional

from ...errors import ConfigError
from .opencompass_settings import INFERENCER_MODES

# class name -> (the OpenCompass package that exports it, what it is here, the kind of entry).
# The kind says how entries.py translates an entry of that type; a name is found under its
# package at any depth (`opencompass.models.openai_api.OpenAI` is `opencompass.models.OpenAI`).
NAMES = {
    'SciCodeDataset': ('opencompass.datasets', 'opencompass_scicode.datasets.SciCodeDataset', 'dataset'),
    'SciCodeEvaluator': ('opencompass.datasets', 'opencompass_scicode.evaluation.SciCodeEvaluator', 'evaluator'),
    'OpenAI': ('opencompass.models', 'opencompass_scicode.models.OpenAIChatModel', 'api'),
    'OpenAISDK': ('opencompass.models', 'opencompass_scicode.models.OpenAIChatModel', 'api-sdk'),
    'VLLM': ('opencompass.models', 'opencompass_scicode.models.OpenAIChatModel', 'vllm'),
    'VLLMwithChatTemplate': ('opencompass.models', 'opencompass_scicode.models.OpenAIChatModel', 'vllm'),
    'HuggingFacewithChatTemplate': ('opencompass.models', 'opencompass_scicode.models.OpenAIChatModel',
                                    'huggingface'),
    'HuggingFaceCausalLM': ('opencompass.models', 'opencompass_scicode.models.OpenAIChatModel', 'huggingface'),
    'HuggingFaceBaseModel': ('opencompass.models', 'opencompass_scicode.models.OpenAIChatModel',
                             'huggingface-base'),
    'TurboMindModelwithChatTemplate': ('opencompass.models', 'opencompass_scicode.models.OpenAIChatModel',
                                       'lmdeploy'),
    'NaivePartitioner': ('opencompass.partitioners', 'opencompass_scicode.partitioners.NaivePartitioner',
                         'partitioner'),
    'NumWorkerPartitioner': ('opencompass.partitioners', 'opencompass_scicode.partitioners.NumWorkerPartitioner',
                             'partitioner'),
    'SizePartitioner': ('opencompass.partitioners', 'opencompass_scicode.partitioners.SizePartitioner',
                        'partitioner'),
    'LocalRunner': ('opencompass.runners', 'opencompass_scicode.runners.LocalRunner', 'runner'),
    'SlurmRunner': ('opencompass.runners', 'opencompass_scicode.runners.SlurmRunner', 'runner'),
    # A stage's task kind is fixed here (infer or eval): the runner's `task=` says nothing new.
    'OpenICLInferTask': ('opencompass.tasks', None, 'task'),
    'OpenICLEvalTask': ('opencompass.tasks', None, 'task'),
    'DefaultSummarizer': ('opencompass.summarizers', 'opencompass_scicode.summarizers.SciCodeSummarizer',
                          'summarizer'),
    # Prompts are always the official ones, and SciCode is zero-shot: template and retriever carry
    # nothing; the inferencer picks the generation mode.
    'PromptTemplate': ('opencompass.openicl', None, 'prompt-template'),
    'ZeroRetriever': ('opencompass.openicl', None, 'retriever'),
    **{name: ('opencompass.openicl', mode, 'inferencer') for name, mode in INFERENCER_MODES.items()},
}

# What to use instead of a name the table lacks, by OpenCompass package.
INSTEAD = {
    'opencompass.datasets': 'this package evaluates SciCode only: opencompass.datasets.SciCodeDataset '
                            'with opencompass.datasets.SciCodeEvaluator',
    'opencompass.models': 'opencompass.models.OpenAI or OpenAISDK for an API, VLLMwithChatTemplate, '
                          'HuggingFacewithChatTemplate or TurboMindModelwithChatTemplate for a local model '
                          '(its server is started per task), or opencompass_scicode.models.OpenAIChatModel',
    'opencompass.openicl': 'PromptTemplate, ZeroRetriever, and GenInferencer (official: one request per '
                           'step) or ChatInferencer (the steps of a problem as one conversation)',
    'opencompass.partitioners': 'NaivePartitioner, NumWorkerPartitioner or SizePartitioner',
    'opencompass.runners': 'LocalRunner or SlurmRunner',
    'opencompass.tasks': 'OpenICLInferTask or OpenICLEvalTask (or leave task= out)',
    'opencompass.summarizers': 'DefaultSummarizer (dataset_abbrs, summary_groups) or '
                               'opencompass_scicode.summarizers.SciCodeSummarizer',
}
PACKAGE = 'opencompass'


class OpenCompassName(str):
    """An `opencompass.*` name of the table, as OpenCompass's public face spells it, with where the
    config named it. A string, so it can be dumped and compared like any `type=` string."""

    def __new__(cls, dotted, location=None):
        name = super().__new__(cls, dotted)
        name.location = location
        return name

    @property
    def short(self) -> str:
        """The class name alone: 'OpenAI' for 'opencompass.models.OpenAI'."""
        return self.rpartition('.')[2]

    @property
    def target(self) -> Optional[str]:
        """What the name is here: this package's type, or None where it carries nothing (templates,
        retrievers, tasks); an inferencer's generation mode."""
        return NAMES[self.short][1]

    @property
    def kind(self) -> str:
        """The kind of entry the name makes ('dataset', 'api', 'runner', ...): how entries.py
        translates it."""
        return NAMES[self.short][2]


def is_opencompass(dotted) -> bool:
    """Whether `dotted` is a string naming `opencompass` or something under it."""
    return isinstance(dotted, str) and (dotted == PACKAGE or dotted.startswith(PACKAGE + '.'))


def _where(location):
    """ConfigError's file and line from mmengine's 'path, line N'."""
    if not location:
        return {}
    file, _, line = str(location).partition(', line ')
    return {'file': file, 'line': int(line) if line.strip().isdigit() else None}


def resolve(dotted: str, location=None, key=None) -> OpenCompassName:
    """The OpenCompassName for an `opencompass.*` dotted name; ConfigError if the table lacks it."""
    short = dotted.rpartition('.')[2]
    if short in NAMES and dotted.startswith(NAMES[short][0] + '.'):
        return OpenCompassName(f'{NAMES[short][0]}.{short}', location)
    package = next((p for p in INSTEAD if dotted == p or dotted.startswith(p + '.')), None)
    instead = INSTEAD.get(package) or ('one of ' + ', '.join(f'{p}.{n}' for n, (p, _, _) in NAMES.items()))
    raise ConfigError(f'{dotted} is an OpenCompass name this package has no counterpart for', key=key,
                      fix=f'use {instead}', **_where(location))


def _module_like(name):
    """`opencompass.models` and `icl_inferencer` are modules; `OpenAI` is a class."""
    return name[:1].islower() or name.startswith('_')


class OpenCompassModule(types.ModuleType):
    """What `import opencompass...` gives a config run as plain Python (a file with `_base_`):
    its attributes are modules of the same kind, or the names of the table."""

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        dotted = f'{self.__name__}.{name}'
        if name in NAMES or not _module_like(name):
            return resolve(dotted, location=self.__dict__.get('location'))
        return OpenCompassModule(dotted)


def config_builtins(file) -> dict:
    """Builtins for a config run as plain Python, whose `opencompass.*` imports give
    OpenCompassModule / OpenCompassName values instead of importing OpenCompass."""
    real_import = builtins.__import__

    def import_(name, globals=None, locals=None, fromlist=(), level=0):
        if level or not is_opencompass(name):
            return real_import(name, globals, locals, fromlist, level)
        module = OpenCompassModule(name if fromlist else PACKAGE)
        module.location = file
        return module

    return dict(vars(builtins), __import__=import_)
