"""Scoring environments (environments/, evaluation/environments.py): a step scored in the 2024
libraries and in this interpreter's, each verdict kept, combined by the rule; built once, or
refused offline naming the command that builds it."""
import sys
import textwrap

import h5py
import pytest

from helpers import make_data_dir, run_cli, step, tiny_dataset
from opencompass_scicode.environments import CURRENT, EnvironmentMissing, check_names, ensure, prepare_command
from opencompass_scicode.environments.build import mismatches, pins
from opencompass_scicode.errors import ConfigError
from opencompass_scicode.evaluation import SciCodeEvaluator
from opencompass_scicode.evaluation.environments import combine
from opencompass_scicode.results import StepRecord
from opencompass_scicode.targets.h5format import write_step_targets
from opencompass_scicode.targets.locate import Targets

# Right in 2024: np.float_ was removed from NumPy 2.0.
FLOAT_ = 'def as_float(x):\n    return np.float_(x) * 2'
PROBLEMS = [{'problem_id': '960', 'problem_name': 'drift', 'required_dependencies': 'import numpy as np',
             'sub_steps': [
                 step('960.1', 'Twice as a float.', 'def as_float(x):', '    return y',
                      ['assert np.allclose(as_float(2), target)'], gold=FLOAT_),
                 step('960.2', 'Half as a float.', 'def half(x):', '    return y',
                      ['assert np.allclose(half(2), target)'], gold='def half(x):\n    return np.float_(x) / 4'),
                 step('960.3', 'Cheat.', 'def cheat():', '    return 1',
                      ['assert cheat() == target'], gold='import sys\nsys.exit(0)\ndef cheat():\n    return 1')]}]


@pytest.fixture
def drift(tmp_path):
    ds = tiny_dataset(make_data_dir(tmp_path / 'd', PROBLEMS))
    h5 = tmp_path / 'targets.h5'
    with h5py.File(h5, 'w') as fh:
        write_step_targets(fh, '960.1', [4.0])
        write_step_targets(fh, '960.2', [1.0])      # half(2) is 0.5: a wrong value in every environment
        write_step_targets(fh, '960.3', [1])
    preds = {s.step_id: {'step_id': s.step_id, 'code': s.ground_truth_code, 'program': None, 'error': None}
             for s in ds.problems[0].steps}
    return ds, preds, Targets('custom', h5, frozenset({'960.1', '960.2', '960.3'}))


def score(drift, built=(), **options):
    """The step records of the drift problem; `built`: Environments already built elsewhere (the
    tiny data dir's cache has none, and building one there would take a minute)."""
    ds, preds, targets = drift
    evaluator = SciCodeEvaluator(timeout=60, **options)
    found = {env.name: env for env in built}
    envs = [found.get(name) or ensure(name, ds.data_dir, allow_build=False) for name in evaluator.environments]
    result = evaluator.evaluate(ds, preds, targets, environments=envs)
    return {s['step_id']: s for s in result['problems'][0]['steps']}, evaluator


def test_np_float_fails_today_passes_in_2024_and_under_any(drift, environment_2024):
    today, evaluator = score(drift)
    assert today['960.1']['status'] == 'fail' and 'float_' in today['960.1']['message']
    assert set(evaluator.scored_with) == {CURRENT} and not evaluator.scored_with[CURRENT]['numpy'].startswith('1.')
    then, evaluator = score(drift, [environment_2024], environments=['2024'])
    assert then['960.1']['status'] == 'pass' and evaluator.scored_with['2024']['numpy'] == '1.26.4'
    either, _ = score(drift, [environment_2024], environments=['2024', 'current'], environment_rule='any')
    assert either['960.1']['status'] == 'pass'
    assert either['960.1']['environment_verdicts'] == {'2024': {'status': 'pass', 'category': 'pass'},
                                                       'current': {'status': 'fail', 'category': 'exception',
                                                                   'message': today['960.1']['message'][:300]}}
    both, _ = score(drift, [environment_2024], environments=['2024', 'current'], environment_rule='all')
    assert both['960.1']['status'] == 'fail' and both['960.1']['environment_verdicts']['2024']['status'] == 'pass'
    # the same sandbox and forensics in the 2024 interpreter: a wrong value says what it compared,
    # and code that exits early to fake a pass is caught
    assert then['960.2']['status'] == 'fail' and then['960.2']['comparison']['sides'][1]['role'] == 'target'
    assert then['960.3']['status'] == 'fail' and then['960.3']['violation']
    assert either['960.3']['status'] == 'fail'


def test_the_rules_combine_verdicts():
    ok, bad = StepRecord('1.1', 'pass', category='pass'), StepRecord('1.1', 'fail', category='wrong_value',
                                                                       message='no')
    assert combine({'2024': bad, 'current': ok}, 'any').status == 'pass'
    assert combine({'2024': bad, 'current': ok}, 'all').status == 'fail'
    assert combine({'2024': bad, 'current': ok}, '2024').message == 'no'
    assert combine({'2024': ok, 'current': ok}, 'all').environment_verdicts == {
        '2024': {'status': 'pass', 'category': 'pass'}, 'current': {'status': 'pass', 'category': 'pass'}}
    with pytest.raises(ConfigError):
        check_names(['2023'])
    with pytest.raises(ConfigError):
        SciCodeEvaluator(environments=['2024'], environment_rule='current')


def test_versions_are_checked_against_the_pins():
    assert pins('2024')['numpy'] == '1.26.4' and pins('2024')['scipy'] == '1.13.1'
    assert mismatches('2024', dict(pins('2024'), python='3.11.7')) == []
    assert mismatches('2024', dict(pins('2024'), numpy='2.0.0')) == ['numpy 2.0.0 (wanted 1.26.4)']


def test_offline_the_environment_is_refused_naming_the_command(tmp_path, monkeypatch):
    monkeypatch.setenv('SCICODE_OFFLINE', '1')
    with pytest.raises(EnvironmentMissing) as info:
        ensure('2024', tmp_path)
    assert prepare_command('2024', tmp_path) in str(info.value)
    assert ensure('current', tmp_path).python == sys.executable      # nothing to build


def test_a_run_needing_an_unbuilt_environment_stops_before_any_work(tmp_path):
    data = make_data_dir(tmp_path / 'data', PROBLEMS)
    config = tmp_path / 'cfg.py'
    config.write_text(textwrap.dedent(f'''
        models = [dict(type='DummyModel')]
        datasets = [dict(type='SciCodeDataset', path={str(data)!r}, reader_cfg=dict(verify_sha256=False),
                         eval_cfg=dict(evaluator=dict(type='SciCodeEvaluator', environments=['2024'])))]
    '''))
    proc = run_cli([config, '-w', tmp_path / 'w', '--no-download'], timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f'python -m opencompass_scicode.environments 2024 --data-dir {data}' in ' '.join(proc.stderr.split())
    assert not (tmp_path / 'w').exists() or not any((tmp_path / 'w').rglob('predictions/*/*.jsonl'))
