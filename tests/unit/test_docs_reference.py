"""The generated Reference pages of the documentation site (tools/docs_reference/) say what the code
does, and stop the build when they no longer can. The site itself is built and opened in Chromium
by tests/e2e/test_docs_site.py."""
import argparse
import re
import sys
import textwrap
import typing

import pytest

from helpers import ROOT

sys.path.insert(0, str(ROOT))

from opencompass_scicode import registry  # noqa: E402
from opencompass_scicode.config import validate_config  # noqa: E402
from opencompass_scicode.errors import ConfigError  # noqa: E402
from opencompass_scicode.inference.settings import InferConfig  # noqa: E402
from tools.docs_reference import commands, config_keys, exit_codes, fields, results_file  # noqa: E402

# Placeholders for the options an entry cannot be built without.
REQUIRED = {'path': 'x', 'partition': 'debug'}


def _classes():
    return [registry.resolve_type(name) for name in registry.REGISTRY] + [InferConfig]


def _build(cls, **options):
    base = {o.name: REQUIRED[o.name] for o in fields.options(cls) if o.required}
    if cls.__name__ == 'OpenAIChatModel':
        base.update(base_url='http://127.0.0.1:9/v1', key='x')
    return cls(**{**base, **options})


@pytest.fixture(scope='module')
def config_page():
    return config_keys.page()


def _section(page, heading):
    """The text of the page from `### heading` to the next heading of that level or above."""
    match = re.search(rf'^### {re.escape(heading)} .*?(?=^##)', page + '\n##', re.S | re.M)
    assert match, heading
    return match.group(0)


def test_every_option_of_every_registered_class_is_listed_with_its_default(config_page):
    for name in registry.REGISTRY:
        cls = registry.resolve_type(name)
        section = _section(config_page, name)
        for option in fields.options(cls):
            row = next((line for line in section.splitlines() if line.startswith(f'| `{option.name}` |')), None)
            assert row, f'{name}.{option.name} is not on the page'
            if not option.required:
                assert repr(option.default)[:20] in row, row
    infer = _section(config_page, 'infer_cfg')
    assert all(f'| `{o.name}` |' in infer for o in fields.options(InferConfig))
    assert "| `mode` | str | `'naive'` | `'naive'`, `'chat'`, `'tool_use'` |" in infer


def test_a_class_of_a_package_no_section_places_stops_the_page(monkeypatch):
    monkeypatch.setitem(registry.REGISTRY, 'Stray', 'opencompass_scicode.utils.Stray')
    with pytest.raises(LookupError, match='Stray'):
        config_keys.registered_classes()


def choices_mismatches():
    """Options whose listed values differ from what their class accepts: every option the class
    refuses a value of as unknown must list its values, each listed value must be accepted, and an
    option with listed values must refuse others. The probe is what finds an option with values
    no one listed."""
    out = []
    for cls in _classes():
        for option in fields.options(cls):
            try:
                _build(cls, **{option.name: '__no_such_value__'})
                refused = False
            except ConfigError as exc:
                refused = exc.key == option.name and exc.message.startswith('unknown')
            except (TypeError, ValueError):     # a string where something else is wanted: no choice
                refused = False
            if refused != bool(option.choices):
                out.append(f'{cls.__name__}.{option.name}')
            for value in option.choices or ():
                try:
                    _build(cls, **{option.name: value})
                except ConfigError:
                    out.append(f'{cls.__name__}.{option.name}={value!r}')
    return out


def test_the_allowed_values_shown_are_exactly_what_each_class_accepts(monkeypatch):
    assert choices_mismatches() == []
    monkeypatch.delitem(fields.CHOICES, ('SciCodeSummarizer', 'layout'))
    monkeypatch.setitem(fields.INLINE_CHOICES, ('OpenAIChatModel', 'api'), ('chat', 'completions'))
    assert choices_mismatches() == ['OpenAIChatModel.api=\'completions\'', 'SciCodeSummarizer.layout']


def test_a_choices_entry_naming_what_no_longer_exists_stops_the_page(monkeypatch):
    monkeypatch.setitem(fields.CHOICES, ('SciCodeDataset', 'split'), 'opencompass_scicode.datasets.scicode:GONE')
    with pytest.raises(LookupError, match='GONE'):
        fields.options(registry.resolve_type('SciCodeDataset'))


def test_a_typed_record_is_read_from_its_fields():
    """When the config entries become pydantic models, their fields, Literal values and
    descriptions are what the page shows."""
    pydantic = pytest.importorskip('pydantic')

    class Entry(pydantic.BaseModel):
        mode: typing.Literal['naive', 'chat'] = pydantic.Field('naive', description='how steps are asked')
        limit: typing.Optional[int] = None
        name: str

    options = {o.name: o for o in fields.options(Entry)}
    assert options['mode'] == fields.Option('mode', "'naive' or 'chat'", False, 'naive', ('naive', 'chat'),
                                            'how steps are asked')
    assert options['limit'].type == 'int or None' and options['limit'].choices is None
    assert options['name'].required
    table = config_keys.options_table(Entry)
    assert 'what it does' in table.splitlines()[0] and 'how steps are asked' in table


def test_the_top_level_and_eval_cfg_keys_listed_are_the_ones_the_config_check_reads():
    good = {'models': [dict(type='ReferenceModel')], 'datasets': [dict(type='SciCodeDataset')]}
    wrong = {'models': 'x', 'datasets': 'x', 'summarizer': 'x', 'runner': 'x', 'partitioner': 'x',
             'infer': 'x', 'eval': 'x', 'work_dir': 1, 'agentcompass_outputs': 'yes'}
    assert set(wrong) == {key for key, *_ in config_keys.TOP_LEVEL}
    validate_config(good)
    for key, value in wrong.items():
        with pytest.raises(ConfigError) as exc:
            validate_config({**good, key: value})
        assert exc.value.key.split('.')[0].split('[')[0] == key, key
    with pytest.raises(ConfigError) as exc:
        validate_config({**good, 'datasets': [dict(type='SciCodeDataset', eval_cfg=dict(nope=1))]})
    listed = exc.value.fix.split('valid options: ')[1].split(', ')
    assert listed == [key for key, *_ in config_keys.EVAL_CFG]


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


def test_the_results_fields_are_what_the_code_writes_and_each_is_described_in_the_guide(monkeypatch, tmp_path):
    keys = [key for key, _, _ in results_file.top_level()]
    for key in ('model', 'targets', 'main_problem_resolve_rate', 'subproblem_ci95', 'excluding_known_defects',
                'pass_at_k', 'protections', 'problems'):
        assert key in keys
    assert len(keys) == len(set(keys))
    page = results_file.page()
    assert '`failed_test`' in page and '`comparison`' in page and '`wrong_value`' in page
    guide = tmp_path / 'results.md'
    guide.write_text(results_file.GUIDE.read_text().replace('`protections`', 'protections'))
    monkeypatch.setattr(results_file, 'GUIDE', guide)
    with pytest.raises(LookupError, match='protections'):
        results_file.page()
    monkeypatch.delitem(results_file.SETTINGS_TYPES, 'created_at')
    with pytest.raises(LookupError, match='created_at'):
        results_file.top_level()
