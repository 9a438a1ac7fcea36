"""The summary is built from files alone: results, status.json and usage figures."""
import json

import pytest

from helpers import fake_results, texts_off_canvas, write_results
from opencompass_scicode.summarizers import SciCodeSummarizer
from opencompass_scicode.summarizers.scicode import bar_chart
from opencompass_scicode.utils.workdir import RunDir


# 'good' on each dataset: 2 of 3 problems, 5 of 6 steps (the other a name_error); 1 of 2 and 3 of 4
# without the steps of known defects
GOOD = dict(resolved=2, correct=5, problems=3, failed='name_error',
            main_problem_resolve_rate_ci95=[10.0, 100.0], subproblem_ci95=[50.0, 100.0],
            excluding_known_defects={'steps_excluded': 2, 'main_problem_resolve_rate': 50.0,
                                     'main_problem_resolved': 1, 'main_problem_total': 2,
                                     'subproblem': 75.0, 'subproblem_correct': 3, 'subproblem_total': 4})


CFG = {'models': [{'abbr': 'good'}, {'abbr': 'broken'}],
       'datasets': [{'abbr': 'val', 'split': 'validation', 'with_bg': False},
                    {'abbr': 'val_bg', 'split': 'validation', 'with_bg': True}]}


def test_summary_reads_results_status_and_usage_files(tmp_path):
    run_dir = RunDir(tmp_path, '20260101_000000').create()
    for ds, bg in (('val', False), ('val_bg', True)):
        write_results(run_dir, fake_results('good', ds, bg, **GOOD))
    run_dir.save_status({'infer/broken': {'state': 'failed', 'stage': 'infer', 'model': 'broken'}})
    usage = {'val': {'steps answered': 6, 'requests': 7, 'prompt tokens': 100, 'completion tokens': 40,
                     'errors': 0, 'model time (s)': 1.25},
             'val_bg': {'steps answered': 5, 'requests': 6, 'prompt tokens': 90, 'completion tokens': 30,
                        'errors': 1, 'model time (s)': 1.0}}
    run_dir.usage_path('good').parent.mkdir(parents=True)
    run_dir.usage_path('good').write_text(json.dumps(usage))
    out = SciCodeSummarizer(plot=False).summarize(CFG, run_dir, echo=False)
    good, broken = out['rows']
    # written without a protocol record (results of earlier versions): said so, never guessed
    assert good == ['good', 'regenerated', 'unrecorded', '66.7 (2/3) [10-100]', '83.3 (5/6) [50-100]',
                    '66.7 (2/3) [10-100]', '83.3 (5/6) [50-100]']
    assert broken == ['broken', '-', '-', 'failed', 'failed', 'failed', 'failed']
    text = run_dir.summary_path('txt').read_text()
    assert 'Inference usage' in text
    categories = run_dir.summary_path('categories.csv').read_text().splitlines()
    assert categories == ['model,dataset,pass,name_error', 'good,val,5,1', 'good,val_bg,5,1']
    assert 'Why steps failed' in text and 'name_error' in text
    assert run_dir.summary_path('defect_free.csv').read_text().splitlines() == [
        'model,dataset,steps left out,main,sub-steps', 'good,val,2,50.0 (1/2),75.0 (3/4)',
        'good,val_bg,2,50.0 (1/2),75.0 (3/4)']
    hidden = RunDir(tmp_path / 'other', '20260101_000000').create()
    (hidden.root / 'results').mkdir(exist_ok=True)
    for src in (run_dir.root / 'results').rglob('*.json'):
        dest = hidden.root / src.relative_to(run_dir.root)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(src.read_text())
    SciCodeSummarizer(plot=False, known_defects=False).summarize(CFG, hidden, echo=False)
    assert not hidden.summary_path('defect_free.csv').exists()     # the switch
    comparisons = run_dir.summary_path('comparisons.csv').read_text().splitlines()
    assert comparisons[1] == 'good: w/ bg - w/o bg,val,3,"+0.0 [+0.0, +0.0]","+0.0 [+0.0, +0.0]"'
    usage = text.split('Inference usage', 1)[1]
    usage_line = next(line for line in usage.splitlines() if line.startswith('good '))
    assert usage_line.split()[1:] == ['11', '13', '190', '70', '1', '2.2', '-']
    priced = dict(CFG, models=[{'abbr': 'good', 'price': {'input': 2.5, 'output': 10.0}}, {'abbr': 'broken'}])
    header, rows = SciCodeSummarizer.usage(priced, run_dir)
    assert header[-1] == 'cost' and rows[0][-1] == f'{(190 * 2.5 + 70 * 10.0) / 1e6:.4f}'


@pytest.mark.parametrize('n_models', [1, 6])
def test_plot_keeps_title_and_legend_on_the_canvas(n_models):
    models = [f'model-{i}' for i in range(n_models)]
    series = [(f'scicode_validation {metric}, {side}', [50.0] * n_models, [[25.0, 75.0]] * n_models)
              for side in ('w/o bg', 'w/ bg') for metric in ('main', 'sub-steps')]
    fig = bar_chart(models, series)
    assert texts_off_canvas(fig) == []
    assert any('SciCode' in t.get_text() for t in fig.texts)


def test_pass_at_k_gets_a_table_when_there_are_samples(tmp_path):
    run_dir = RunDir(tmp_path, '20260101_000000').create()
    for ds, bg in (('val', False), ('val_bg', True)):
        results = fake_results('good', ds, bg, **GOOD)
        if bg:
            results['pass_at_k'] = {'main': {'1': 50.0, '4': 75.0}, 'subproblem': {'1': 60.0, '4': 90.0}}
        write_results(run_dir, results)
    SciCodeSummarizer(plot=False, report=False).summarize(CFG, run_dir, echo=False)
    assert run_dir.summary_path('pass_at_k.csv').read_text().splitlines() == [
        'model,dataset,main pass@1,main pass@4,sub pass@1,sub pass@4', 'good,val_bg,50.0,75.0,60.0,90.0']


def test_near_misses_stand_beside_the_categories(tmp_path):
    run_dir = RunDir(tmp_path, '20260101_000000').create()
    for ds, bg, misses in (('val', False, {'near_misses': 1, 'failed': 4, 'share': 25.0}), ('val_bg', True, None)):
        results = fake_results('good', ds, bg, **GOOD)
        if misses:
            results['near_misses'] = misses       # the other file predates forensics: shown as '-'
        write_results(run_dir, results)
    SciCodeSummarizer(plot=False, report=False).summarize(CFG, run_dir, echo=False)
    assert run_dir.summary_path('categories.csv').read_text().splitlines() == [
        'model,dataset,pass,name_error,near misses (of failed)', 'good,val,5,1,1/4 (25.0%)', 'good,val_bg,5,1,-']
    assert '1/4 (25.0%)' in run_dir.summary_path('md').read_text()


def test_official_and_verified_datasets_pair_each_with_its_own_background_side():
    from opencompass_scicode.config.naming import dataset_abbr
    from opencompass_scicode.summarizers.scicode import group_datasets
    datasets = [dict(split='test', with_bg=bg, targets=mode) for mode in ('official', 'verified')
                for bg in (False, True)]
    for ds in datasets:
        ds['abbr'] = dataset_abbr(ds)
    assert group_datasets(datasets) == [
        ('scicode_test', {'without': 'scicode_test', 'with': 'scicode_test_with_background'}),
        ('scicode_test_verified', {'without': 'scicode_test_verified',
                                   'with': 'scicode_test_verified_with_background'})]
