"""`prefilled_mode`: one setting of the dataset, read by prompts and test programs alike.

Its old place, the evaluator's option, is still taken (with a note); the two given and
different is refused. The settings a run records keep it where they always had it, so `-r`
goes on from a run made with the old place.
"""
import textwrap
from types import SimpleNamespace

import pytest

from opencompass_scicode.config import load_config, validate_config
from opencompass_scicode.datasets import SciCodeDataset
from opencompass_scicode.errors import ConfigError
from opencompass_scicode.evaluation import SciCodeEvaluator
from opencompass_scicode.registry import build_dataset, build_evaluator

from helpers import DATA


def entry(dataset='', evaluator=''):
    """A config with one dataset entry (problem 13 of the test split: its step 6 is prefilled)."""
    return textwrap.dedent(f'''
        from opencompass_scicode.models import DummyModel
        models = [dict(type=DummyModel)]
        datasets = [dict(abbr='d', path={str(DATA)!r}, split='test', sample_ids=['13']{dataset},
                         eval_cfg=dict(evaluator=dict(type='SciCodeEvaluator'{evaluator})))]
    ''')


def checked(tmp_path, text):
    """(notes, dataset entry) of a validated config."""
    path = tmp_path / 'cfg.py'
    path.write_text(text)
    cfg = load_config(path)
    return validate_config(cfg, file=path), dict(cfg['datasets'][0])


def whole_file_in(text, dataset):
    return dataset.prefilled_file('13.6').strip() in text


class CodeModel:
    """Answers every step with a little code, so each problem's chain goes on to its end."""
    abbr = 'code'
    supports_chat = False
    needs_prior_code = True

    def settings(self):
        return {'type': 'CodeModel'}

    async def agenerate(self, request):
        from opencompass_scicode.models.base import Generation
        return Generation(text=f'```python\ndef step_{request.step.index}():\n    return 1\n```')


def prompts_and_programs(dataset_cfg, tmp_path, official_data):
    """Step 13.7's prompt (from inference) and test program (from scoring) for a dataset entry."""
    from opencompass_scicode.inference.engine import InferPart, Inferencer
    from opencompass_scicode.predictions import PredictionStore
    dataset = build_dataset(dataset_cfg)
    store = PredictionStore(tmp_path / f'{dataset.prefilled_mode}.jsonl')
    Inferencer(CodeModel(), [InferPart(dataset=dataset, store=store, infer_cfg={})]).run()
    predictions = store.load()
    steps = {s.step_id for s in dataset.problems[0].scored_steps}
    targets = SimpleNamespace(step_ids=steps, file_for=lambda step_id: tmp_path / 'unused.h5')
    jobs, _ = build_evaluator(dataset_cfg).jobs(dataset, predictions, targets)
    return dataset, predictions['13.7'].prompt, jobs['13.7', 0].program


def test_the_datasets_setting_reaches_prompts_and_test_programs(tmp_path, official_data):
    notes, full = checked(tmp_path, entry(dataset=", prefilled_mode='full'"))
    assert notes == []
    dataset, prompt, program = prompts_and_programs(full, tmp_path, official_data)
    assert dataset.prefilled_mode == 'full' and build_evaluator(full).settings()['prefilled_mode'] == 'full'
    assert whole_file_in(prompt, dataset) and whole_file_in(program, dataset)
    # the default: the official generator's single definition, in both
    notes, official = checked(tmp_path, entry())
    dataset, prompt, program = prompts_and_programs(official, tmp_path, official_data)
    assert dataset.prefilled_mode == 'official' and build_evaluator(official).identity()['prefilled_mode'] == 'official'
    assert not whole_file_in(prompt, dataset) and not whole_file_in(program, dataset)


def test_the_evaluators_option_is_still_taken_with_a_note(tmp_path):
    notes, cfg = checked(tmp_path, entry(evaluator=", prefilled_mode='full'"))
    assert len(notes) == 1 and 'eval_cfg.evaluator.prefilled_mode' in notes[0] and '(datasets[0])' in notes[0]
    assert build_dataset(cfg).prefilled_mode == 'full'
    assert build_evaluator(cfg).settings()['prefilled_mode'] == 'full'


def test_two_different_settings_are_refused_naming_both_keys(tmp_path):
    with pytest.raises(ConfigError) as info:
        checked(tmp_path, entry(dataset=", prefilled_mode='full'", evaluator=", prefilled_mode='official'"))
    assert info.value.key == 'datasets[0].prefilled_mode'
    assert 'datasets[0].eval_cfg.evaluator.prefilled_mode' in str(info.value)
    assert "'full'" in str(info.value) and "'official'" in str(info.value)
    # the same value in both places is one setting
    notes, cfg = checked(tmp_path, entry(dataset=", prefilled_mode='full'", evaluator=", prefilled_mode='full'"))
    assert len(notes) == 1 and build_dataset(cfg).prefilled_mode == 'full'


@pytest.mark.parametrize('dataset, evaluator, key', [
    (", prefilled_mode='half'", '', 'datasets[0].prefilled_mode'),
    ('', ", prefilled_mode='half'", 'datasets[0].eval_cfg.evaluator.prefilled_mode'),
])
def test_an_unknown_mode_is_named_where_it_was_written(tmp_path, dataset, evaluator, key):
    with pytest.raises(ConfigError) as info:
        checked(tmp_path, entry(dataset=dataset, evaluator=evaluator))
    assert info.value.key == key and "'official', 'full'" in str(info.value)


def test_an_evaluator_given_another_mode_refuses_to_score_the_dataset(official_data):
    full = SciCodeDataset(path=str(official_data), split='test', sample_ids=['13'], prefilled_mode='full')
    targets = SimpleNamespace(step_ids=frozenset(), file_for=None)
    with pytest.raises(ConfigError, match="prefilled_mode 'official'.*'full'"):
        SciCodeEvaluator(prefilled_mode='official').jobs(full, {}, targets)
    for agrees in (SciCodeEvaluator(prefilled_mode='full'), SciCodeEvaluator()):
        jobs, records = agrees.jobs(full, {}, targets)
        assert not jobs and len(records) == len(full.problems[0].scored_steps)


def test_the_recorded_settings_are_those_of_runs_made_with_the_old_place(tmp_path):
    """Predictions' settings and the results' evaluator settings, compared by -r, are the same
    whichever place the config uses: an earlier run goes on."""
    from opencompass_scicode.inference.engine import infer_settings
    from opencompass_scicode.models import DummyModel
    from opencompass_scicode.utils.fingerprint import fingerprint
    for mode in ('official', 'full'):
        _, new = checked(tmp_path, entry(dataset=f', prefilled_mode={mode!r}'))
        _, old = checked(tmp_path, entry(evaluator=f', prefilled_mode={mode!r}'))
        recorded = [(fingerprint(infer_settings(DummyModel(), build_dataset(cfg), {})),
                     build_evaluator(cfg).settings()) for cfg in (new, old)]
        assert recorded[0] == recorded[1]
        assert infer_settings(DummyModel(), build_dataset(new), {})['prefilled_mode'] == mode
        assert recorded[0][1]['prefilled_mode'] == mode


def test_the_command_line_prints_the_note(tmp_path, capsys):
    from opencompass_scicode.cli import main
    for text, noted in ((entry(evaluator=", prefilled_mode='full'"), True),
                        (entry(dataset=", prefilled_mode='full'"), False)):
        path = tmp_path / 'cfg.py'
        path.write_text(text)
        assert main([str(path), '-m', 'infer', '--dry-run', '-w', str(tmp_path / 'w')]) == 0
        err = capsys.readouterr().err
        assert ('note: eval_cfg.evaluator.prefilled_mode: now a dataset key' in err) is noted, err
