"""reference/results-file.md and reference/results.schema.json: the results file
(`results/<model>/<dataset>.json`), read from its typed record.

Both come from `results.schema`: the JSON Schema is `results_schema()`, published as it is; the
page's tables are read from that same schema (each record's fields, JSON types, defaults and
descriptions), the upgrades from `UPGRADES` (each one's docstring says what it does), the statuses
from the schema's enum, the categories from `results.record.CATEGORIES`, and the texts file from
`results.texts` (its name and the fields that name its texts). Every top-level key
must also be described in guide/results.md: one that is not stops the build.
"""
import inspect
import json
from pathlib import Path

from .markdown import cell, code, generated_note, table

GUIDE = Path(__file__).resolve().parents[2] / 'docs' / 'guide' / 'results.md'
SCHEMA_FILE = 'results.schema.json'         # beside the page, under reference/


def _anchor(name):
    return name.lower()


def json_type(prop):
    """A property of the JSON Schema in words: 'integer', 'array of number', 'string or null', a link
    to the record it holds."""
    if '$ref' in prop:
        name = prop['$ref'].rsplit('/', 1)[1]
        return f'[{name}](#{_anchor(name)})'
    if 'anyOf' in prop:
        parts = [json_type(p) for p in prop['anyOf'] if p.get('type') != 'null']
        nullable = any(p.get('type') == 'null' for p in prop['anyOf'])
        return ' or '.join(parts + (['null'] if nullable else []))
    if 'enum' in prop:
        return 'string'
    kind = prop.get('type', 'any')
    if kind == 'array' and prop.get('items'):
        return f'array of {json_type(prop["items"])}'
    if kind == 'object' and isinstance(prop.get('additionalProperties'), dict):
        inner = json_type(prop['additionalProperties'])
        return 'object' if inner == 'any' else f'object of {inner}'
    return kind


def _default(info):
    if info.is_required():
        return '**required**'
    default = info.get_default(call_default_factory=True)     # a default_factory's is not in the schema
    if hasattr(default, 'model_dump'):
        default = default.model_dump(mode='json')
    return code(json.dumps(default))


def _definitions(schema):
    return {**schema.get('$defs', {}), 'ResultsFile': schema}


def _refs(prop):
    if isinstance(prop, dict):
        if '$ref' in prop:
            yield prop['$ref'].rsplit('/', 1)[1]
        for value in prop.values():
            yield from _refs(value)
    elif isinstance(prop, list):
        for value in prop:
            yield from _refs(value)


def records(schema):
    """The records of a results file, the file's own first, then each as its fields name it."""
    definitions, order = _definitions(schema), ['ResultsFile']
    for name in order:
        for ref in _refs(definitions[name]['properties']):
            if ref not in order:
                order.append(ref)
    return order


def record_table(schema, name):
    """The fields of one record: JSON type, default when absent, when the writer leaves it out, what it holds."""
    from opencompass_scicode.results import schema as module
    definition, record = _definitions(schema)[name], getattr(module, name)
    rows = []
    for field, prop in definition['properties'].items():
        what = prop.get('description', '')
        if 'enum' in prop:
            what = f'{what}: {", ".join(code(v) for v in prop["enum"])}' if what else \
                ', '.join(code(v) for v in prop['enum'])
        written = 'when it says something' if field in record.OPTIONAL else 'always'
        rows.append([code(field), cell(json_type(prop)), _default(record.model_fields[field]), written,
                     cell(what) if 'enum' not in prop else what])
    return table(['field', 'JSON type', 'if absent', 'written', 'what it holds'], rows)


def top_level_keys():
    """The top-level keys of a results file, in the order the writer puts them."""
    from opencompass_scicode.results.schema import results_schema
    return list(results_schema()['properties'])


def _undescribed(keys):
    described = GUIDE.read_text(encoding='utf-8')
    return [k for k in keys if f'`{k}`' not in described]


def _upgrades():
    from opencompass_scicode.results.schema import UPGRADES
    return [f'- version {version} to {version + 1}: {" ".join(inspect.getdoc(upgrade).split())}'
            for version, upgrade in sorted(UPGRADES.items())]


def texts_file_section():
    """What the texts file beside a results file holds, and which fields name its texts (texts.py)."""
    from opencompass_scicode.results.texts import ANSWER_TEXTS, PACK_SUFFIX, STEP_TEXTS
    named = [(f'answer.{ref}', f'answer.{field}') for field, ref in ANSWER_TEXTS] + \
            [(ref, field) for field, ref in STEP_TEXTS]
    return '\n'.join([
        f'`results/<model>/<dataset>{PACK_SUFFIX}`, named by the results file\'s `texts_file`: gzip-compressed '
        'JSON, one object `{sha256: text}`, the sha256 (hex) of the text\'s UTF-8 bytes. Each text the steps of '
        'its results file name is there once. Fields that name a text, and where `load_results` puts it:', '',
        table(['field (in the file)', 'the text, once read'], [[code(ref), code(field)] for ref, field in named]),
        '', 'How to read them: [Where the texts are](../guide/results.md#where-the-texts-are).'])


def schema_file():
    from opencompass_scicode.results.schema import results_schema
    return json.dumps(results_schema(), indent=2) + '\n'


def page():
    from opencompass_scicode.results.record import CATEGORIES
    from opencompass_scicode.results.schema import SCHEMA_VERSION, results_schema
    schema = results_schema()
    missing = _undescribed(top_level_keys())
    if missing:
        raise LookupError(f'results files hold {", ".join(missing)}, which docs/guide/results.md does not '
                          f'describe; add them to its table of keys')
    definitions = _definitions(schema)
    out = ['# Results file', '',
           generated_note('opencompass_scicode/results/schema.py', 'opencompass_scicode/results/record.py'),
           f'A results file is the typed record `ResultsFile` (`opencompass_scicode/results/schema.py`), '
           f'`schema_version` {SCHEMA_VERSION}. Its JSON Schema: [{SCHEMA_FILE}]({SCHEMA_FILE}) (also '
           '`python -m opencompass_scicode.results.schema`). Where the file is, what its numbers mean and how '
           'to read one from a script: [Results and report](../guide/results.md#results-files).', '',
           'Files of older versions are upgraded as they are read (`load_results`):', '', *_upgrades(), '',
           'Every record keeps the fields it does not name: a field a newer version or another tool adds '
           'passes through a read and a write unchanged. **if absent**: what a reader takes when the field '
           'is not there; **written**: "when it says something" fields are left out when they are empty '
           '(None or False).', '']
    for name in records(schema):
        doc = ' '.join(definitions[name].get('description', '').split())
        out += [f'## {name} {{#{_anchor(name)}}}', '', doc, '', record_table(schema, name), '']
    out += ['## The texts file {#the-texts-file}', '', texts_file_section(), '']
    out += ['## Categories {#categories}', '',
            f'A step\'s `category`: {", ".join(code(c) for c in CATEGORIES)} '
            '([what each means](../guide/results.md#categories)).', '']
    return '\n'.join(out)
