"""`opencompass-scicode compare`: two results paired explicitly, what changed and why, one line a step.

Results files are written by hand here, one step record per kind of difference a reason names;
tests/e2e/test_report.py compares real runs and shows the same in the report.
"""
import json

import pytest

from opencompass_scicode.cli import main
from opencompass_scicode.results import flips
from opencompass_scicode.results.schema import load_results
from opencompass_scicode.summarizers.compare import compare, step_sides
from opencompass_scicode.utils.workdir import RunDir

SETTINGS = {'timeout': 1800, 'memory_limit_mb': 8192, 'simps_shim': True, 'prefilled_mode': 'official'}


def record(step_id, status='pass', code='x = 1', category=None, **fields):
    out = {'step_id': step_id, 'status': status, 'category': category or status, 'answer': {'code': code},
           'targets_digest': 'T' + step_id, 'duration_s': 0.5}
    out.update(fields)
    return out


def results(model, problems, **top):
    """A results file of `problems` ({problem id: [step records]}), rates counted from them."""
    entries = []
    for pid, steps in problems.items():
        passed = sum(s['status'] == 'pass' for s in steps)
        entries.append({'problem_id': pid, 'problem_correct': passed == len(steps), 'total_correct': passed,
                        'total_steps': len(steps), 'steps': steps})
    solved = sum(e['problem_correct'] for e in entries)
    correct = sum(e['total_correct'] for e in entries)
    total = sum(e['total_steps'] for e in entries)
    return {'model': model, 'dataset': 'val', 'targets': 'regenerated', 'evaluator': dict(SETTINGS),
            'main_problem_resolve_rate': 100.0 * solved / len(entries), 'main_problem_resolved': solved,
            'main_problem_total': len(entries), 'subproblem': 100.0 * correct / total, 'subproblem_correct': correct,
            'subproblem_total': total, 'problems': entries, **top}


def wrong(value=0.5):
    return {'category': 'wrong_value', 'failed_test': 1,
            'comparison': {'difference': {'path': '[1]', 'max_abs_diff': value}}}


# (A's records, B's records) of one problem each: which reason each pair must get
CASES = {
    '1': ([record('1.1', 'fail', code='return 1', **wrong())], [record('1.1', code='return 2')],
          'fixed', 'different code'),
    '2': ([record('2.1', code='a = 1'), record('2.2')],
          [record('2.1', 'fail', code='a = 2', **wrong()),
           record('2.2', 'fail', **wrong(), origin={'kind': 'inherited', 'from_step': '2.1'})],
          'broken', 'same code, different earlier steps (B: inherited from step 2.1)'),
    '3': ([record('3.1')], [record('3.1', 'timeout')], 'broken', 'same code, timeout against pass'),
    '4': ([record('4.1')], [record('4.1', 'fail', targets_digest='other', **wrong())], 'broken',
          'targets only (the targets digest differs)'),
    '5': ([record('5.1', 'fail', **wrong(0.5))], [record('5.1', 'fail', **wrong(0.25))], 'changed',
          'same code, targets and settings: the step itself varies (randomness, time or the machine)'),
    '6': ([record('6.1', 'fail', **wrong())], [record('6.1', 'fail', **wrong())], 'unchanged', None),
    '7': ([record('7.1', 'fail', category='no_code', code=None)], [record('7.1')], 'fixed', 'no code on A'),
}


def _files(tmp_path, b_top=None):
    run_a, run_b = RunDir(tmp_path / 'w', '20260101_000000'), RunDir(tmp_path / 'w', '20260102_000000')
    for run, side, top in ((run_a, 0, {}), (run_b, 1, b_top or {})):
        content = results('gen', {pid: case[side] for pid, case in CASES.items()}, **top)
        path = run.results_path('gen', 'val')
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(content))
        other = dict(content, model='ref')       # a second model in each run: pairing must be said
        run.results_path('ref', 'val').parent.mkdir(parents=True, exist_ok=True)
        run.results_path('ref', 'val').write_text(json.dumps(other))
    return run_a, run_b


def test_each_changed_step_gets_its_change_and_one_line_reason(tmp_path):
    run_a, run_b = _files(tmp_path)
    a = load_results(run_a.results_path('gen', 'val'))
    b = load_results(run_b.results_path('gen', 'val'))
    found = compare(step_sides(a), step_sides(b), a, b)
    listed = {s['step_id']: (s['change'], s['reason']) for s in found['steps']}
    expected = {steps[-1]['step_id']: (change, why) for steps, _, change, why in CASES.values() if why}
    assert listed == {**expected, '2.1': ('broken', 'different code')}     # 2.1 broke, the step 2.2 builds on
    assert found['counts'] == {'fixed': 2, 'broken': 4, 'changed': 1, 'unchanged': 1} and found['paired'] == 8
    assert found['steps'][1]['a'] == 'pass' and found['steps'][1]['b'] == 'fail (wrong_value)'
    point, interval = found['difference']['subproblem']
    assert point == pytest.approx(100 * (2 - 4) / 8) and interval[0] <= point <= interval[1]


def test_reasons_that_depend_on_the_settings_and_the_environment():
    a = flips.side(record('1.1'), [], {'evaluator': SETTINGS})
    b = flips.side(record('1.1', 'timeout'), [], {'evaluator': dict(SETTINGS, timeout=30)})
    assert flips.reason(a, b) == 'same code, timeout against pass (limit 1800 s against 30 s)'
    c = flips.side(record('1.1', 'fail', **wrong()), [], {'evaluator': dict(SETTINGS, simps_shim=False)})
    assert flips.change(a, c) == 'broken' and flips.reason(a, c) == 'settings only: simps_shim True against False'
    # the scoring environments (their versions, and each environment's verdict) and the protocol
    d = flips.side(record('1.1', 'fail', **wrong()), [], {'evaluator': SETTINGS,
                                                          'scored_with': {'current': {'numpy': '2.1'}}})
    a2 = flips.side(record('1.1'), [], {'evaluator': SETTINGS, 'scored_with': {'current': {'numpy': '1.26'}}})
    assert flips.reason(a2, d) == 'environment only: numpy 1.26 against 2.1'
    both = {'2024': {'numpy': '1.26'}, 'current': {'numpy': '2.1'}}
    a3 = flips.side(record('1.1', environment_verdicts={'2024': {'status': 'pass'}, 'current': {'status': 'fail'}}),
                    [], {'evaluator': dict(SETTINGS, environment_rule='any'), 'scored_with': both})
    assert flips.reason(a3, d) == 'environment only: 2024+current (any: passes in 2024) against current'
    e1 = flips.side(record('1.1'), [], {'evaluator': SETTINGS, 'protocol': {'name': 'official'}})
    e2 = flips.side(record('1.1', 'fail', **wrong()), [], {'evaluator': SETTINGS, 'protocol': {'name': 'hal'}})
    assert flips.reason(e1, e2) == 'protocol only: official against hal'
    # judged on the failure too: another exception class, test or value is a change
    e = flips.side(record('1.1', 'fail', category='exception', error_type='ValueError'), [], {})
    f = flips.side(record('1.1', 'fail', category='exception', error_type='KeyError'), [], {})
    assert flips.change(e, f) == 'changed' and flips.change(e, e) == 'unchanged'


def test_the_command_pairs_explicitly_prints_and_writes_markdown(tmp_path, capsys):
    run_a, run_b = _files(tmp_path)
    work = str(tmp_path / 'w')
    assert main(['compare', run_a.timestamp, run_b.timestamp, '-w', work]) == 2     # two models: which?
    assert 'say which models to compare' in capsys.readouterr().err.replace('\n', ' ')
    assert main(['compare', run_a.timestamp, run_b.timestamp, '-w', work, '--model', 'gen']) == 0
    out = capsys.readouterr().out
    assert 'A: run 20260101_000000 · model gen · dataset val' in out
    assert '2 fixed, 4 broken, 1 changed, 1 unchanged (8 steps paired)' in out
    assert 'same code, timeout against pass' in out and 'B - A [95% interval, by problem]' in out
    (md,) = (run_a.root / 'summary').glob('compare_*.md')
    text = md.read_text()
    assert '| 4.1 ' in text and 'targets only (the targets digest differs)' in text and text.startswith('# ')
    # two models of one run: one side named once
    target = tmp_path / 'models.md'
    assert main(['compare', str(run_b.root), '--models', 'gen', 'ref', '-o', str(target)]) == 0
    assert '0 fixed, 0 broken, 0 changed, 8 unchanged' in capsys.readouterr().out and target.is_file()
    # a results file against a results folder; wrong names are refused with what there is
    assert main(['compare', str(run_a.results_path('gen', 'val')), str(run_b.root / 'results'),
                 '--model', 'gen', '-o', str(target)]) == 0
    assert '2 fixed, 4 broken' in capsys.readouterr().out
    assert main(['compare', str(run_a.results_path('gen', 'val')), str(run_b.root / 'results'),
                 '--model', 'ref', '-o', str(target)]) == 2
    assert "A has no results of model 'ref'" in capsys.readouterr().err
    assert main(['compare', 'no_such_run', '-w', work]) == 2
    assert 'no such run directory' in capsys.readouterr().err
    assert main(['compare', run_a.timestamp, run_b.timestamp, '-w', work, '--models', 'gen', 'nobody']) == 2
    assert "B has no results of model 'nobody'" in capsys.readouterr().err
