"""The results file as a typed, versioned record: files of versions 1 (before `schema_version`)
and 2 (texts in place) load, upgraded on read; version 3 keeps its texts once each, by hash, in a
pack beside it, put back in place when read; a file of the wrong shape is refused naming the
file and the field, and the published JSON Schema describes what the writer writes."""
import gzip
import hashlib
import json
import subprocess
import sys

import pytest

from helpers import ROOT
from opencompass_scicode.results.schema import (SCHEMA_VERSION, ResultsFile, ResultsFileError, load_results,
                                                read_results, results_paths, results_schema, write_results)
from opencompass_scicode.results.texts import main as texts_main
from opencompass_scicode.results.texts import text_hash

FIXTURES = ROOT / 'tests' / 'fixtures' / 'results_v1'
V2_FIXTURES = ROOT / 'tests' / 'fixtures' / 'results_v2'
OLD_FILES = sorted(FIXTURES.glob('*.json')) + sorted(V2_FIXTURES.glob('*.json'))


def test_the_fixtures_are_files_of_the_old_writers():
    assert len(OLD_FILES) == 6
    versions = [json.loads(path.read_text()).get('schema_version') for path in OLD_FILES]
    assert versions == [None] * 3 + [2] * 3
    assert all(json.loads(path.read_text())['problems'][0]['steps'][0]['answer']['prompt'] for path in OLD_FILES)


@pytest.mark.parametrize('path', OLD_FILES, ids=lambda p: p.stem)
def test_an_old_results_file_loads_upgraded_and_keeps_every_field(path):
    old = json.loads(path.read_text())
    results = load_results(path)
    assert results.schema_version == SCHEMA_VERSION
    assert (results.model, results.dataset) == (old['model'], old['dataset'])
    assert results.subproblem_total == old['subproblem_total'] == len(
        [s for s in results.steps() if s.status != 'skipped'])
    # nothing is lost on the way: written again, the content is the old one plus its version
    again = results.to_json()
    assert again.pop('schema_version') == SCHEMA_VERSION
    old.pop('schema_version', None)
    assert again == old


@pytest.mark.parametrize('path', OLD_FILES, ids=lambda p: f'{p.parent.name}-{p.stem}')
def test_written_again_the_texts_go_to_the_pack_once_each_and_come_back_in_place(path, tmp_path):
    old = load_results(path)
    new = tmp_path / 'r.json'
    write_results(new, old)
    content = json.loads(new.read_text())
    assert list(content)[:2] == ['schema_version', 'texts_file'] and content['texts_file'] == 'r.texts.json.gz'
    pack = json.loads(gzip.decompress((tmp_path / 'r.texts.json.gz').read_bytes()))
    steps = content['problems'][0]['steps']
    step, text = steps[0], old.steps()[0]
    assert 'prompt' not in step['answer'] and 'tests' not in step and 'gold_code' not in step
    assert pack[step['answer']['prompt_sha256']] == text.answer.prompt
    assert step['answer']['prompt_sha256'] == hashlib.sha256(text.answer.prompt.encode()).hexdigest()
    assert [pack[h] for h in step['tests_sha256']] == text.tests
    assert step['answer']['code'] == text.answer.code                      # the code that ran stays in place
    texts = [t for s in old.steps() for t in (s.answer.prompt, s.answer.response, s.gold_code, *s.tests) if t]
    assert sorted(pack) == sorted({text_hash(t) for t in texts})           # each distinct text once
    again = load_results(new)
    assert again.texts_file == 'r.texts.json.gz'
    assert [(s.answer.prompt, s.answer.response, s.tests, s.gold_code) for s in again.steps()] == \
        [(s.answer.prompt, s.answer.response, s.tests, s.gold_code) for s in old.steps()]
    assert sum(f.stat().st_size for f in results_paths(new)) < path.stat().st_size


def test_a_reader_of_the_verdicts_alone_leaves_the_texts_named(tmp_path):
    path = tmp_path / 'r.json'
    write_results(path, load_results(FIXTURES / 'reference_scicode_validation.json'))
    (tmp_path / 'r.texts.json.gz').rename(tmp_path / 'elsewhere.gz')
    verdicts = load_results(path, texts=False)
    step = verdicts.steps()[0]
    assert step.answer.prompt is None and step.answer.prompt_sha256 and step.answer.code and step.tests is None
    with pytest.raises(ValueError, match='without its text'):          # it cannot be written as a whole file
        write_results(tmp_path / 'again.json', verdicts)
    with pytest.raises(ResultsFileError, match='r.texts.json.gz') as info:
        load_results(path)
    assert str(path) in str(info.value)


def test_a_pack_without_a_text_the_file_names_is_refused(tmp_path):
    path = tmp_path / 'r.json'
    write_results(path, load_results(FIXTURES / 'reference_scicode_validation.json'))
    pack = tmp_path / 'r.texts.json.gz'
    texts = json.loads(gzip.decompress(pack.read_bytes()))
    first = json.loads(path.read_text())['problems'][0]['steps'][0]['answer']['prompt_sha256']
    del texts[first]
    pack.write_bytes(gzip.compress(json.dumps(texts).encode()))
    with pytest.raises(ResultsFileError, match=f'problems.0.steps.0.answer.prompt_sha256 names the text {first}'):
        load_results(path)
    pack.write_bytes(b'not gzip')
    with pytest.raises(ResultsFileError, match='cannot be read'):
        load_results(path)


def test_the_helper_prints_a_file_with_its_texts_in_place_and_one_text(tmp_path, capsys):
    path = tmp_path / 'r.json'
    old = load_results(FIXTURES / 'generated_scicode_validation_failures.json')
    write_results(path, old)
    assert texts_main([str(path)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed['problems'][0]['steps'][0]['answer']['prompt'] == old.steps()[0].answer.prompt
    digest = text_hash(old.steps()[0].gold_code)
    assert texts_main([str(path), '--text', digest]) == 0
    assert capsys.readouterr().out == old.steps()[0].gold_code + '\n'
    with pytest.raises(SystemExit):
        texts_main([str(path), '--text', '0' * 64])
    assert 'no text' in capsys.readouterr().err


def test_what_an_old_file_holds_is_read_as_typed_fields():
    failures = load_results(FIXTURES / 'generated_scicode_validation_failures.json')
    wrong, raised = failures.steps()
    assert (wrong.category, wrong.comparison['near_miss'], wrong.failed_test) == ('wrong_value', True, 1)
    assert wrong.answer.code and wrong.tests and wrong.gold_code
    assert raised.raised_at.startswith('program.py, line 11')
    sampled = load_results(FIXTURES / 'dummy_scicode_validation_with_background_n2.json')
    assert sampled.samples == 2 and sampled.pass_at_k['main'] == {'1': 0.0, '2': 0.0}
    assert [p.sample for p in sampled.problems] == [0, 1]
    assert sampled.near_misses.failed == 4 and sampled.excluding_known_defects.steps_excluded == 0


def test_a_file_of_the_first_writers_gets_the_numbers_they_did_not_write():
    old = json.loads((FIXTURES / 'generated_scicode_validation_failures.json').read_text())
    for key in ('categories', 'subproblem_not_scored', 'accuracy', 'sub_accuracy'):
        del old[key]
    results = read_results(old)
    assert results.categories == {'wrong_value': 1, 'exception': 1}
    assert (results.subproblem_not_scored, results.accuracy, results.sub_accuracy) == (0, 0.0, 0.0)


def test_fields_it_does_not_know_pass_through(tmp_path):
    old = json.loads((FIXTURES / 'reference_scicode_validation.json').read_text())
    old['environment'] = {'python': '3.12'}
    old['problems'][0]['steps'][0]['decided_at_s'] = 0.5
    path = tmp_path / 'r.json'
    write_results(path, read_results(old))
    again = json.loads(path.read_text())
    assert again['environment'] == {'python': '3.12'} and again['problems'][0]['steps'][0]['decided_at_s'] == 0.5


@pytest.mark.parametrize('change, says', [
    (lambda d: d.update(schema_version=SCHEMA_VERSION + 1), 'written by a newer version'),
    (lambda d: d['problems'][0]['steps'][0].update(status='passed'), 'problems.0.steps.0.status'),
    (lambda d: d.pop('subproblem_total'), 'subproblem_total'),
    (lambda d: d.update(main_problem_total='two'), 'main_problem_total'),
])
def test_a_file_of_another_shape_is_refused_naming_file_and_field(tmp_path, change, says):
    data = json.loads((FIXTURES / 'reference_scicode_validation.json').read_text())
    change(data)
    path = tmp_path / 'bad.json'
    path.write_text(json.dumps(data))
    with pytest.raises(ResultsFileError) as info:
        load_results(path)
    assert str(path) in str(info.value) and says in str(info.value) and 'fix:' in str(info.value)


def test_not_json_is_refused(tmp_path):
    path = tmp_path / 'torn.json'
    path.write_text('{"model": ')
    with pytest.raises(ResultsFileError, match='torn.json'):
        load_results(path)


def test_the_published_schema_describes_the_files():
    printed = subprocess.run([sys.executable, '-m', 'opencompass_scicode.results.schema'], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
    schema = json.loads(printed)
    assert schema == results_schema()
    assert f'schema_version {SCHEMA_VERSION}' in schema['title']
    assert {'schema_version', 'model', 'problems', 'subproblem'} <= set(schema['properties'])
    step = schema['$defs']['StepResult']['properties']
    assert step['status']['enum'] == ['pass', 'fail', 'timeout', 'parse_error', 'eval_error', 'skipped']
    assert ResultsFile.model_json_schema() == {k: v for k, v in schema.items() if k != 'title'} | {
        'title': 'ResultsFile'}


def test_a_file_of_this_version_reads_the_same_from_its_text_as_from_its_content(tmp_path):
    path = tmp_path / 'r.json'
    write_results(path, load_results(FIXTURES / 'generated_scicode_validation_failures.json'))
    assert path.read_text().lstrip('{ \n').startswith(f'"schema_version": {SCHEMA_VERSION},')
    assert load_results(path) == read_results(json.loads(path.read_text()), path)
    bad = path.read_text().replace('"status": "fail"', '"status": "failed"', 1)
    with pytest.raises(ResultsFileError, match='status'):
        read_results(bad, path)
