"""reference/config.md: every key a config may set, with its type, default and allowed values.

Where it reads (the typed records the config check itself holds a config against):
- the config file's own keys: `config.records.ConfigFile` (types, defaults, descriptions);
- which classes an entry may name: those registered where they live (`registry.registered()`),
  grouped by the package each lives in (`SECTIONS`);
- each class's options: its options record (fields.options(), `utils.options.options_record`):
  the constructor's signature, annotations and defaults, its `Literal` values the allowed ones;
- the sections between: `config.records` (`RunCfg`, `EvalCfg`, `StageSection`),
  `inference.settings.InferConfig` (`infer_cfg`), `partitioners.limits.Endpoint` (`endpoints`),
  and `config.validate.DATASET_SECTIONS`.
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
# Where the reference says more of a top-level key (a section of this page, or a guide's).
SEE_ALSO = {
    'models': '#models', 'datasets': '#datasets', 'summarizer': '#summarizer', 'runner': '#runners',
    'partitioner': '#partitioners', 'infer': '#stage-sections', 'eval': '#stage-sections',
    'endpoints': '#endpoints', 'agentcompass_outputs': '../from-agentcompass.md#outputs',
}


def registered_classes():
    """{package: [(short name, class)]} for every registered short name."""
    from opencompass_scicode.registry import registered, type_name
    known = {package for package, *_ in SECTIONS}
    grouped = defaultdict(list)
    for name, cls in registered().items():
        package = type_name(cls).split('.')[1]
        if package not in known:
            raise LookupError(f'registry name {name!r} ({type_name(cls)}) lives in {package}/, which no '
                              f'section of tools/docs_reference/config_keys.py places in a config')
        grouped[package].append((name, cls))
    return grouped


def _default(option):
    if option.required:
        return '**required**'
    return code(shorten(repr(option.default)))


def _type(option):
    return cell(option.type)


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


def top_level_table():
    """The config file's own keys (`ConfigFile`), each with a link to where the page says more."""
    from opencompass_scicode.config.records import ConfigFile
    rows = []
    for option in fields.options(ConfigFile):
        what = cell(option.description)
        if option.name in SEE_ALSO:
            what += f' ([more]({SEE_ALSO[option.name]}))'
        rows.append([code(option.name), _type(option), _default(option), what])
    return table(['key', 'type', 'default', 'what it holds'], rows)


def _names(cls):
    return ', '.join(code(option.name) for option in fields.options(cls))


def page():
    from opencompass_scicode.config.records import ConfigFile, EvalCfg, RunCfg, StageSection
    from opencompass_scicode.config.validate import DATASET_SECTIONS
    from opencompass_scicode.inference.settings import InferConfig
    from opencompass_scicode.partitioners.limits import Endpoint
    from opencompass_scicode.registry import registered, type_name
    classes = registered_classes()
    out = ['# Config keys', '', generated_note('opencompass_scicode/config/records.py', 'opencompass_scicode/registry.py',
                                                 'opencompass_scicode/utils/options.py',
                                                 'opencompass_scicode/inference/settings.py',
                                                 'opencompass_scicode/partitioners/limits.py',
                                                 'tools/docs_reference/config_keys.py'),
           'A config is a Python file whose top-level names are the keys below ([Configs](../guide/configs.md) '
           'shows how to write one). An entry is `dict(type=..., key=value, ...)`: `type` is a class, a dotted '
           'import path or one of the short names below. A key the entry\'s class does not take, a value of '
           'another type than the one listed, and a value outside the allowed ones stop the run before any '
           'work, naming the file, the key and the fix. Each table is read from the typed record that check '
           'uses, so the two cannot disagree.', '',
           'A type of `number` takes a whole number too. A type of `any` is not annotated: the config check '
           'takes any value there, and the class checks what it needs when the entry is built.', '',
           '## The config file {#the-config-file}', '',
           f'The file\'s own keys ({code(ConfigFile.__module__ + ".ConfigFile")}); a key left out, or `None`, '
           'is its default. Other top-level names (what the file imports, helpers) are left alone.', '',
           top_level_table(), '',
           '### Stage sections {#stage-sections}', '',
           f'`infer` and `eval` take {_names(StageSection)}: entries as in '
           '[Runners](#runners) and [Partitioners](#partitioners), for that stage alone.', '',
           '### endpoints {#endpoints}', '',
           f'Each entry of {code("endpoints")} ({code(Endpoint.__module__ + ".Endpoint")}) sets the limits '
           'of one server, shared by every model that asks its `base_url` ([Sweeps of API models]'
           '(../sweeps-of-api-models.md)):', '',
           options_table(Endpoint), '']
    for package, heading, anchor, where, guide in SECTIONS:
        out += [f'## {heading} {{#{anchor}}}', '',
                f'Entries at {", ".join(code(w.strip()) for w in where.split(","))}. '
                f'How to use them: [the guide]({guide}).', '']
        if package == 'models':
            out += [f'Every model entry also takes {code("run_cfg")}, what its tasks ask of a cluster '
                    f'({code(RunCfg.__module__ + ".RunCfg")}; whole numbers >= 0):', '',
                    options_table(RunCfg), '']
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
                    f'How the dataset\'s steps are scored ({code(EvalCfg.__module__ + ".EvalCfg")}); the '
                    'evaluator\'s options are [below](#evaluator).', '',
                    options_table(EvalCfg), '']
    out += ['## Short names {#short-names}', '',
            table(['short name', 'class'], [[code(name), code(type_name(cls))] for name, cls in registered().items()]), '']
    return '\n'.join(out)
