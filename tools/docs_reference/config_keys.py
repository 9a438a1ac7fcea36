"""reference/config.md: every key a config may set, with its type, default and allowed values.

Where it reads (the single source the config check itself uses):
- which classes an entry may name: `registry.REGISTRY` (short name -> import path), grouped by
  the package each lives in (`SECTIONS`);
- each class's options: fields.options(), i.e. the constructor's signature and annotations that
  `registry.check_kwargs` holds entries against (or a typed record's `model_fields`);
- a dataset's `infer_cfg`: `inference.settings.InferConfig`, which `config/validate.py` checks it with;
- the names `config/validate.py` checks by hand: `STAGE_KEYS` (of `infer` and `eval`),
  `RUN_CFG_KEYS` (a model's `run_cfg`), `DATASET_SECTIONS`; and, until the typed config record
  lands, the top-level keys and the `eval_cfg` keys below (`TOP_LEVEL`, `EVAL_CFG`), which
  tests/unit/test_docs_reference.py holds against validate_config.
"""
import inspect
from collections import defaultdict

from . import fields
from .markdown import cell, code, generated_note, shorten, table

# Where the entries of each package's classes go in a config, and the guide page about them.
SECTIONS = (
    # (package, heading, anchor, where in a config, guide page)
    ('models', 'Models', 'models', 'models[i]', '../guide/models.md'),
    ('datasets', 'Datasets', 'datasets', 'datasets[i]', '../guide/configs.md#a-dataset-entry'),
    ('evaluation', 'Evaluator', 'evaluator', 'datasets[i].eval_cfg.evaluator',
     '../guide/configs.md#evaluator-options'),
    ('summarizers', 'Summarizer', 'summarizer', 'summarizer', '../guide/results.md#the-summary'),
    ('runners', 'Runners', 'runners', 'runner, infer.runner, eval.runner',
     '../guide/running.md#planning-and-launching'),
    ('partitioners', 'Partitioners', 'partitioners', 'partitioner, infer.partitioner, eval.partitioner',
     '../guide/running.md#shards'),
)

# The config file's own keys, as config/validate.py and launch/ read them: (key, type, default, what).
TOP_LEVEL = (
    ('models', 'list of model entries', 'required', 'the models to evaluate ([Models](#models))'),
    ('datasets', 'list of dataset entries', 'required', 'the datasets to evaluate them on ([Datasets](#datasets))'),
    ('summarizer', 'entry', "dict(type='SciCodeSummarizer')", 'tables, plot and report after the run '
                                                               '([Summarizer](#summarizer))'),
    ('runner', 'entry', "dict(type='LocalRunner')", 'launches the tasks of both stages, unless a stage '
                                                    'section names its own ([Runners](#runners))'),
    ('partitioner', 'entry', "dict(type='NaivePartitioner')", 'turns models x datasets into tasks, for both '
                                                              'stages unless a stage section names its own '
                                                              '([Partitioners](#partitioners))'),
    ('infer', 'dict', 'None', 'the inference stage\'s own partitioner and runner ([stage sections](#stage-sections))'),
    ('eval', 'dict', 'None', 'the evaluation stage\'s own partitioner and runner ([stage sections](#stage-sections))'),
    ('work_dir', 'str', "'outputs/default'", 'where run directories go (`-w` wins)'),
    ('agentcompass_outputs', 'bool', 'False', 'also write AgentCompass\'s `details/` and `summary.md` '
                                             '([Coming from AgentCompass](../from-agentcompass.md#outputs))'),
)
# A dataset's eval_cfg: (key, type, default, what).
EVAL_CFG = (
    ('evaluator', 'entry', "dict(type='SciCodeEvaluator')", 'scores the steps ([Evaluator](#evaluator))'),
    ('pass_at_k', 'list of int', '[]', 'more k for pass@k beside 1 and n (k above `infer_cfg.n` is left out)'),
)


def registered_classes():
    """{package: [(short name, class)]} for every short name of `registry.REGISTRY`."""
    from opencompass_scicode.registry import REGISTRY, resolve_type
    known = {package for package, *_ in SECTIONS}
    grouped = defaultdict(list)
    for name, path in REGISTRY.items():
        package = path.split('.')[1]
        if package not in known:
            raise LookupError(f'registry name {name!r} ({path}) lives in {package}/, which no section of '
                              f'tools/docs_reference/config_keys.py places in a config')
        grouped[package].append((name, resolve_type(name)))
    return grouped


def _default(option):
    if option.required:
        return '**required**'
    return code(shorten(repr(option.default)))


def _type(option):
    if option.type:
        return cell(option.type)
    if option.required or option.default is None:
        return '—'
    return f'— ({type(option.default).__name__})'      # not annotated: its default's type


def _choices(option):
    return ', '.join(code(repr(v)) for v in option.choices) if option.choices else ''


def options_table(cls, skip=()):
    rows, described = [], False
    for option in fields.options(cls):
        if option.name in skip:
            continue
        described = described or bool(option.description)
        row = [code(option.name), _type(option), _default(option), _choices(option)]
        rows.append(row + [cell(option.description)] if described else row)
    headers = ['key', 'type', 'default', 'allowed values'] + (['what it does'] if described else [])
    if described:       # a row read before the first description gets an empty cell
        rows = [row + [''] * (len(headers) - len(row)) for row in rows]
    return table(headers, rows)


def _docstring(cls):
    doc = inspect.getdoc(cls) or ''
    if doc.startswith(cls.__name__ + '('):          # a dataclass's generated signature says nothing new
        return ''
    return '\n'.join('    ' + line if line else '' for line in doc.splitlines())


def class_section(name, cls, level='###', skip=()):
    out = [f'{level} {name} {{#{name.lower()}}}', '',
           f'{code(f"type={name!r}")}, or the class {code(cls.__module__ + "." + cls.__qualname__)}.']
    doc = _docstring(cls)
    if doc:
        out += ['', f'??? info "What the class says of itself"', '', doc]
    out += ['', options_table(cls, skip=skip)]
    if fields.open_ended(cls):
        out += ['', 'It takes other keys too (`**kwargs`), unchecked.']
    return '\n'.join(out)


def _rows(declared):
    return [[code(key), cell(kind), code(default) if default != 'required' else '**required**', what]
            for key, kind, default, what in declared]


def page():
    from opencompass_scicode.config.validate import DATASET_SECTIONS, RUN_CFG_KEYS, STAGE_KEYS
    from opencompass_scicode.inference.settings import InferConfig
    from opencompass_scicode.registry import REGISTRY
    classes = registered_classes()
    out = ['# Config keys', '', generated_note('opencompass_scicode/registry.py', 'opencompass_scicode/config/validate.py',
                                                 'opencompass_scicode/inference/settings.py',
                                                 'tools/docs_reference/config_keys.py'),
           'A config is a Python file whose top-level names are the keys below ([Configs](../guide/configs.md) '
           'shows how to write one). An entry is `dict(type=..., key=value, ...)`: `type` is a class, a dotted '
           'import path or one of the short names below. A key the entry\'s class does not take, a value of '
           'another type than the one listed, and a value outside the allowed ones stop the run before any '
           'work, naming the file, the key and the fix.', '',
           'A type of `number` takes an int too. A type of — is not annotated: the config check takes any '
           'value there, and the class checks what it needs when the entry is built; in brackets, the type '
           'of its default.', '',
           '## The config file {#the-config-file}', '',
           table(['key', 'type', 'default', 'what it holds'], _rows(TOP_LEVEL)), '',
           '### Stage sections {#stage-sections}', '',
           f'`infer` and `eval` take {", ".join(code(k) for k in STAGE_KEYS)}: entries as in '
           '[Runners](#runners) and [Partitioners](#partitioners), for that stage alone.', '']
    for package, heading, anchor, where, guide in SECTIONS:
        out += [f'## {heading} {{#{anchor}}}', '',
                f'Entries at {", ".join(code(w.strip()) for w in where.split(","))}. '
                f'How to use them: [the guide]({guide}).', '']
        if package == 'models':
            out += [f'Every model entry also takes {code("run_cfg")}, what its tasks ask of a cluster: '
                    f'{", ".join(code(k) for k in RUN_CFG_KEYS)} (whole numbers >= 0).', '']
        if package == 'datasets':
            out += [f'A dataset entry also takes the sections {", ".join(code(s) for s in DATASET_SECTIONS)} '
                    f'(below); its {code("type")} may be left out (`SciCodeDataset`).', '']
        for name, cls in classes[package]:
            out += [class_section(name, cls), '']
        if package == 'datasets':
            out += ['### reader_cfg {#reader_cfg}', '',
                    'The dataset\'s own keys (above) may also be given here, as OpenCompass configs do; '
                    'e.g. `reader_cfg=dict(verify_sha256=True)`.', '',
                    '### infer_cfg {#infer_cfg}', '',
                    f'How the dataset\'s steps are generated ({code(InferConfig.__module__ + ".InferConfig")}; '
                    '[Generation modes](../guide/generation-modes.md)).', '',
                    options_table(InferConfig), '',
                    '### eval_cfg {#eval_cfg}', '',
                    table(['key', 'type', 'default', 'what it holds'], _rows(EVAL_CFG)), '']
    out += ['## Short names {#short-names}', '',
            table(['short name', 'class'], [[code(name), code(path)] for name, path in REGISTRY.items()]), '']
    return '\n'.join(out)
