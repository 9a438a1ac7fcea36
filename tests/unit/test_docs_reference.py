"""The generated Reference pages of the documentation site (tools/docs_reference/) say what the code
does, and stop the build when they no longer can. The site itself is built and opened in Chromium
by tests/e2e/test_docs_site.py."""
import argparse
import importlib
import json
import re
import sys
import textwrap
import typing

import pytest

from helpers import ROOT

sys.path.insert(0, str(ROOT))

from opencompass_scicode import registry  # noqa: E402
from opencompass_scicode.config import validate_config  # noqa: E402
from opencompass_scicode.config.records import ConfigFile, EvalCfg, RunCfg  # noqa: E402
from opencompass_scicode.errors import ConfigError  # noqa: E402
from opencompass_scicode.inference.settings import InferConfig  # noqa: E402
from opencompass_scicode.partitioners.limits import Endpoint  # noqa: E402
from opencompass_scicode.utils.options import check_options  # noqa: E402
import tools.docs_reference as reference  # noqa: E402
from tools.docs_reference import commands, config_keys, exit_codes, fields, results_file  # noqa: E402

# Placeholders for the options an entry cannot be built without.
REQUIRED = {'path': 'x', 'partition': 'debug', 'base_url': 'http://127.0.0.1:9/v1'}


def _classes():
    return list(registry.registered().values()) + [InferConfig, Endpoint, RunCfg, EvalCfg]


def _entry(cls, **options):
    """An entry of `cls` with `options`, and what it cannot be built without."""
    base = {o.name: REQUIRED[o.name] for o in fields.options(cls) if o.required}
    if cls.__name__ == 'OpenAIChatModel':
        base.update(base_url='http://127.0.0.1:9/v1', key='x')
    return {**base, **options}


def _check_and_build(cls, **options):
    """As a config's entry is: checked against its record, then built (the class's own checks)."""
    entry = _entry(cls, **options)
    check_options(cls, entry, 'entry')
    return cls(**entry)


@pytest.fixture(scope='module')
def config_page():
    return config_keys.page()


def _section(page, heading):
    """The text of the page from `### heading` to the next heading of that level or above."""
    match = re.search(rf'^### {re.escape(heading)} .*?(?=^##)', page + '\n##', re.S | re.M)
    assert match, heading
    return match.group(0)


def test_every_option_of_every_registered_class_is_listed_with_its_default(config_page):
    for name, cls in registry.registered().items():
        section = _section(config_page, name)
        for option in fields.options(cls):
            row = next((line for line in section.splitlines() if line.startswith(f'| `{option.name}` |')), None)
            assert row, f'{name}.{option.name} is not on the page'
            if not option.required:
                assert repr(option.default)[:20] in row, row
    infer = _section(config_page, 'infer_cfg')
    assert all(f'| `{o.name}` |' in infer for o in fields.options(InferConfig))
    assert "| `mode` | str | `'naive'` | `'naive'`, `'chat'`, `'tool_use'` |" in infer
    for record, section in ((RunCfg, 'models'), (Endpoint, 'endpoints')):
        assert all(f'| `{o.name}` | {o.type} |' in config_page for o in fields.options(record))


def test_a_class_of_a_package_no_section_places_stops_the_page(monkeypatch):
    class Stray:
        pass
    Stray.__module__ = 'opencompass_scicode.utils.stray'
    monkeypatch.setitem(registry._CLASSES, 'Stray', Stray)
    with pytest.raises(LookupError, match='Stray'):
        config_keys.registered_classes()


def choices_mismatches(classes=None):
    """Options whose listed values differ from what the config accepts: every option that is refused a
    value as unknown (by the config check, or by its class when built) must list its values, each
    listed value must be accepted, and an option with listed values must refuse others. The probe
    is what finds an option whose class restricts its values without its record saying so."""
    out = []
    for cls in classes or _classes():
        for option in fields.options(cls):
            try:
                _check_and_build(cls, **{option.name: '__no_such_value__'})
                refused = False
            except ConfigError as exc:
                refused = exc.key.split('.')[-1] == option.name and exc.message.startswith('unknown')
            except (TypeError, ValueError):     # a string where something else is wanted: no choice
                refused = False
            if refused != bool(option.choices):
                out.append(f'{cls.__name__}.{option.name}')
            for value in option.choices or ():
                try:
                    _check_and_build(cls, **{option.name: value})
                except ConfigError:
                    out.append(f'{cls.__name__}.{option.name}={value!r}')
    return out


class _Colours:
    accepted = ('red', 'blue')

    def __init__(self, colour='red'):
        if colour not in self.accepted:
            raise ConfigError(f'unknown colour {colour!r}', key='colour')


class Listed(_Colours):
    def __init__(self, colour: typing.Literal['red', 'blue'] = 'red'):
        super().__init__(colour)


class Unlisted(_Colours):
    def __init__(self, colour: str = 'red'):          # the class refuses values its record does not name
        super().__init__(colour)


class Misnamed(_Colours):
    def __init__(self, colour: typing.Literal['red', 'green'] = 'red'):     # lists one its class refuses
        super().__init__(colour)


def test_the_allowed_values_shown_are_exactly_what_each_class_accepts():
    assert choices_mismatches() == []
    assert choices_mismatches([Listed, Unlisted, Misnamed]) == ['Unlisted.colour', "Misnamed.colour='green'"]


def test_a_typed_record_is_read_from_its_fields():
    """A typed record's fields, Literal values and descriptions are what the page shows."""
    pydantic = pytest.importorskip('pydantic')

    class Entry(pydantic.BaseModel):
        mode: typing.Literal['naive', 'chat'] = pydantic.Field('naive', description='how steps are asked')
        limit: typing.Optional[int] = None
        name: str

    options = {o.name: o for o in fields.options(Entry)}
    assert options['mode'] == fields.Option('mode', 'str', False, 'naive', ('naive', 'chat'), 'how steps are asked')
    assert options['limit'].type == 'whole number or None' and options['limit'].choices is None
    assert options['name'].required
    table = config_keys.options_table(Entry)
    assert 'what it does' in table.splitlines()[0] and 'how steps are asked' in table


def test_the_config_files_own_keys_are_its_record_and_the_config_check_reads_each():
    good = {'models': [dict(type='ReferenceModel')], 'datasets': [dict(type='SciCodeDataset')]}
    wrong = {'models': 'x', 'datasets': 'x', 'summarizer': 'x', 'runner': 'x', 'partitioner': 'x',
             'infer': 'x', 'eval': 'x', 'endpoints': 'x', 'work_dir': 1, 'agentcompass_outputs': 'yes'}
    assert set(wrong) == set(ConfigFile.model_fields)
    validate_config(good)
    for key, value in wrong.items():
        with pytest.raises(ConfigError) as exc:
            validate_config({**good, key: value})
        assert exc.value.key.split('.')[0].split('[')[0] == key, key
    page = config_keys.page()
    for option in fields.options(ConfigFile):
        assert f'| `{option.name}` | {option.type} |' in page
    assert "| `work_dir` | str | `'outputs/default'` |" in page
    with pytest.raises(ConfigError) as exc:
        validate_config({**good, 'datasets': [dict(type='SciCodeDataset', eval_cfg=dict(nope=1))]})
    listed = exc.value.fix.split('accepted options: ')[1].split(', ')
    assert listed == [o.name for o in fields.options(EvalCfg)]
    assert all(f'| `{name}` |' in _section(page, 'eval_cfg') for name in listed)


def test_every_flag_of_each_command_is_on_the_page():
    page = commands.page()
    for anchor, _, _, _, call in commands.COMMANDS + commands.DEVELOPMENT:
        parser = commands.parser_of(call)
        section = page.split(f'{{#{anchor}}}')[1].split('\n#')[0]
        for action in parser._actions:
            if not isinstance(action, argparse._HelpAction):
                shown = action.option_strings[0] if action.option_strings else action.metavar or action.dest
                assert f'`{shown}`' in section, (anchor, shown)
    assert '`--no-download`' in page and '`--source`' in page and '`--benchmark-params`' in page
    with pytest.raises(LookupError):
        commands.parser_of(lambda: None)


def test_exit_codes_are_read_with_their_meaning(tmp_path, monkeypatch):
    codes = exit_codes.exit_codes('opencompass_scicode.errors')
    assert [(name, value) for name, value, _ in codes] == [
        ('EXIT_OK', 0), ('EXIT_FAILED', 1), ('EXIT_USER_ERROR', 2), ('EXIT_INTERRUPTED', 130)]
    assert all(meaning for _, _, meaning in codes)
    assert ('EXIT_SKIPPED', 4) in [(n, v) for n, v, _ in exit_codes.exit_codes('opencompass_scicode.tasks.contract')]
    (tmp_path / 'unexplained_codes.py').write_text(textwrap.dedent('''\
        EXIT_OK = 0  # fine
        EXIT_ODD = 7
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(LookupError, match='EXIT_ODD'):
        exit_codes.exit_codes('unexplained_codes')


def test_the_results_page_is_the_records_schema_and_each_key_is_described_in_the_guide(monkeypatch, tmp_path):
    from opencompass_scicode.results.schema import SCHEMA_VERSION, ResultsFile, results_schema
    schema = results_schema()
    assert results_file.top_level_keys() == list(ResultsFile.model_fields)
    assert json.loads(results_file.schema_file()) == schema
    assert reference.pages()['reference/results.schema.json'] == results_file.schema_file()
    page = results_file.page()
    assert f'`schema_version` {SCHEMA_VERSION}' in page and '(results.schema.json)' in page
    for name in results_file.records(schema):
        section = page.split(f'{{#{name.lower()}}}')[1].split('\n## ')[0]
        record = ResultsFile if name == 'ResultsFile' else getattr(importlib.import_module(
            'opencompass_scicode.results.schema'), name)
        for field, info in record.model_fields.items():
            assert f'| `{field}` |' in section, (name, field)
            assert not info.description or info.description.split('(')[0][:30] in section, (name, field)
    assert {'ProblemResult', 'StepResult', 'Answer', 'NearMisses', 'DefectFreeRates'} <= set(results_file.records(schema))
    assert '`failed_test`' in page and '`comparison`' in page and '`wrong_value`' in page and '`eval_error`' in page
    assert 'version 1 to 2: Files written before `schema_version` existed' in page
    guide = tmp_path / 'results.md'
    guide.write_text(results_file.GUIDE.read_text().replace('`protections`', 'protections'))
    monkeypatch.setattr(results_file, 'GUIDE', guide)
    with pytest.raises(LookupError, match='protections'):
        results_file.page()


def test_json_types_are_read_from_the_schema():
    assert results_file.json_type({'anyOf': [{'type': 'array', 'items': {'type': 'number'}}, {'type': 'null'}]}) == \
        'array of number or null'
    assert results_file.json_type({'$ref': '#/$defs/Answer'}) == '[Answer](#answer)'
    assert results_file.json_type({'type': 'object', 'additionalProperties': {'type': 'integer'}}) == 'object of integer'
