"""Whole runs of `python run.py CONFIG` in real processes, on small subsets of the real data."""
import json

import pytest

from helpers import DATA, SUBSET, config_file, only_run, results, run_cli, statuses

pytestmark = pytest.mark.slow

RESULT_KEYS = ['schema_version', 'texts_file', 'model', 'dataset', 'split', 'with_bg', 'targets', 'main_problem_resolve_rate',
               'subproblem', 'main_problem_resolved', 'main_problem_total', 'subproblem_correct',
               'subproblem_total', 'problems']


def test_reference_model_subset_passes_everything(official_data, tmp_path):
    work = tmp_path / 'w'
    proc = run_cli([config_file(tmp_path, "[dict(type=ReferenceModel, abbr='ref')]"), '-w', work])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run_dir = only_run(work)
    for ds in ('val', 'val_bg'):
        res = results(run_dir, 'ref', ds)
        assert list(res)[:len(RESULT_KEYS) - 1] == RESULT_KEYS[:-1] and 'problems' in res
        assert res['targets'] == 'regenerated'
        assert (res['main_problem_resolved'], res['main_problem_total']) == (3, 3)
        assert (res['subproblem_correct'], res['subproblem_total']) == (6, 6)
        step = res['problems'][0]['steps'][0]
        assert set(step) >= {'step_id', 'status', 'returncode', 'duration_s', 'stdout', 'stderr'}
        # the file names its texts by hash; they are in the texts file beside it, put back when read
        assert step['answer']['prompt'].startswith('PROBLEM DESCRIPTION') and step['tests'] and step['gold_code']
        written = json.loads((run_dir / 'results' / 'ref' / f'{ds}.json').read_text())
        assert (run_dir / 'results' / 'ref' / written['texts_file']).is_file()
        assert 'prompt' not in written['problems'][0]['steps'][0]['answer']
    # The answers are the same with and without background: each program ran once
    # (during inference, as each problem finished), and both results reuse that verdict.
    executed = [p for p in (run_dir / 'cache' / 'verdicts').glob('*.json') if not p.name.startswith('_')]
    assert len(executed) == 6
    shared = sum(1 for ds in ('val', 'val_bg') for p in results(run_dir, 'ref', ds)['problems']
                 for step in p['steps'] if step.get('shared'))
    assert shared >= 6
    protections = results(run_dir, 'ref', 'val')['protections']
    assert protections.get('own_process') and 'network' in protections
    stamp = run_dir.name
    for ext in ('txt', 'csv', 'md', 'png'):
        assert (run_dir / 'summary' / f'summary_{stamp}.{ext}').is_file()
    table = (run_dir / 'summary' / f'summary_{stamp}.txt').read_text()
    assert '100.0 (3/3)' in table and '100.0 (6/6)' in table and 'regenerated' in table
    assert (run_dir / 'configs' / f'{stamp}.py').is_file()
    preds = (run_dir / 'predictions' / 'ref' / 'val.jsonl').read_text().splitlines()
    record = json.loads(preds[0])
    assert {'prompt', 'response', 'code', 'duration_s'} <= set(record)
    assert '100.0 (3/3)' in proc.stdout                     # table printed to the terminal


def test_dummy_model_scores_zero(official_data, tmp_path):
    work = tmp_path / 'w'
    proc = run_cli([config_file(tmp_path, "[dict(type=DummyModel, abbr='dummy')]"), '-w', work])
    assert proc.returncode == 0, proc.stderr
    res = results(only_run(work), 'dummy', 'val')
    assert res['subproblem_correct'] == 0 and res['main_problem_resolved'] == 0
    assert res['subproblem_total'] == 6
    assert set(statuses(res).values()) == {'fail'}


def _official_layout_dir(dest, wrong=(), missing=()):
    """Complete step programs in the official generator's layout, from the gold code."""
    from opencompass_scicode.datasets import SciCodeDataset
    from opencompass_scicode.evaluation.program import code_prefix
    from opencompass_scicode.inference.extract import strip_imports
    ds = SciCodeDataset(path=str(DATA), split='validation', sample_ids=SUBSET)
    dest.mkdir()
    for problem in ds.problems:
        codes = []
        for step in problem.steps:
            code = strip_imports(step.ground_truth_code)
            if step.step_id in wrong:
                code = step.function_header + '\n    return -1.0\n'
            if step.step_id not in missing:
                (dest / f'{problem.problem_id}.{step.index}.py').write_text(
                    code_prefix(problem.dependencies, codes, code))
            codes.append(strip_imports(step.ground_truth_code))


def test_generated_code_model_fails_exactly_the_wrong_steps(official_data, tmp_path):
    gen = tmp_path / 'generated'
    _official_layout_dir(gen, wrong={'19.2', '29.1'}, missing={'29.3'})
    work = tmp_path / 'w'
    cfg = config_file(tmp_path, f"[dict(type=GeneratedCodeModel, path={str(gen)!r}, abbr='gen')]")
    proc = run_cli([cfg, '-w', work])
    run_dir = only_run(work)
    res = results(run_dir, 'gen', 'val')
    assert statuses(res) == {'1.1': 'pass', '19.1': 'pass', '19.2': 'fail', '29.1': 'fail',
                             '29.2': 'pass', '29.3': 'parse_error'}
    assert (res['main_problem_resolved'], res['subproblem_correct']) == (1, 3)
    # the missing file is a generation error: the run says so with its exit status
    assert proc.returncode != 0
    assert 'errors' in proc.stdout


def test_resume_skips_finished_tasks_and_finishes_partial_ones(official_data, tmp_path):
    work = tmp_path / 'w'
    cfg = config_file(tmp_path, "[dict(type=ReferenceModel, abbr='ref')]")
    assert run_cli([cfg, '-w', work]).returncode == 0
    run_dir = only_run(work)
    # Nothing left to do: every task is skipped.
    proc = run_cli([cfg, '-w', work, '-r'])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count('skipped (outputs complete)') == 3       # 1 infer + 2 eval tasks
    # A crash mid-inference: only the first two steps were saved, results gone.
    preds = run_dir / 'predictions' / 'ref' / 'val.jsonl'
    lines = preds.read_text().splitlines()
    preds.write_text('\n'.join(lines[:2]) + '\n{"torn": ')
    (run_dir / 'results' / 'ref' / 'val.json').unlink()
    proc = run_cli([cfg, '-w', work, '-r', run_dir.name])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count('skipped (outputs complete)') == 1       # eval of val_bg
    step_ids = [json.loads(l)['step_id'] for l in preds.read_text().splitlines() if l.startswith('{"p')]
    assert sorted(step_ids) == sorted(['1.1', '19.1', '19.2', '29.1', '29.2', '29.3'])
    assert results(run_dir, 'ref', 'val')['subproblem_correct'] == 6
    # -m eval re-scores existing predictions; -m viz only summarizes.
    (run_dir / 'results' / 'ref' / 'val_bg.json').unlink()
    proc = run_cli([cfg, '-w', work, '-r', '-m', 'eval'])
    assert proc.returncode == 0 and results(run_dir, 'ref', 'val_bg')['subproblem_correct'] == 6
    proc = run_cli([cfg, '-w', work, '-r', '-m', 'viz'])
    assert proc.returncode == 0 and '100.0 (6/6)' in proc.stdout


def test_dry_run_prints_the_plan_and_writes_nothing(official_data, tmp_path):
    work = tmp_path / 'w'
    scratch = tmp_path / 'tmp'
    scratch.mkdir()
    proc = run_cli([config_file(tmp_path, "[dict(type=DummyModel, abbr='dummy')]"), '-w', work, '--dry-run'],
                   env={'TMPDIR': str(scratch)})
    assert proc.returncode == 0, proc.stderr
    assert not list(scratch.iterdir())          # not even a temporary directory
    for text in ('infer', 'eval', 'dummy', 'val_bg', '3 (1, 19, 29)', 'predictions/dummy/val.jsonl',
                 'results/dummy/val_bg.json'):
        assert text in proc.stdout
    assert not work.exists()


def test_failed_task_makes_exit_status_nonzero_and_shows_in_summary(official_data, tmp_path):
    # A targets file that is no HDF5 file is refused before any work (the coverage check).
    bad_h5 = tmp_path / 'broken.h5'
    bad_h5.write_text('not hdf5')
    datasets = f'''
        datasets = [dict(abbr='val', type=SciCodeDataset, path={str(DATA)!r}, sample_ids=['1']),
                    dict(abbr='val_bg', type=SciCodeDataset, path={str(DATA)!r}, sample_ids=['1'],
                         with_bg=True, h5py_file={str(bad_h5)!r})]
    '''
    work = tmp_path / 'w'
    proc = run_cli([config_file(tmp_path, "[dict(type=ReferenceModel, abbr='ref')]", datasets=datasets), '-w', work])
    assert proc.returncode == 2 and 'cannot be read as HDF5' in ' '.join(proc.stderr.split()) and not work.exists()
    # An evaluation task that fails (it cannot write its results file) fails the run.
    cfg = config_file(tmp_path, "[dict(type=ReferenceModel, abbr='ref')]", sample_ids=['1'], name='ok.py')
    assert run_cli([cfg, '-w', work, '-m', 'infer']).returncode == 0
    (only_run(work) / 'results' / 'ref' / 'val_bg.json').mkdir(parents=True)
    proc = run_cli([cfg, '-w', work, '-r'])
    assert proc.returncode == 1
    summary = next((only_run(work) / 'summary').glob('*.txt')).read_text()
    assert 'failed' in summary and '100.0 (1/1)' in summary


def test_config_and_data_errors_stop_before_any_work(official_data, tmp_path):
    work = tmp_path / 'w'
    cfg = config_file(tmp_path, "[dict(type=ReferenceModel, abbr='ref')]", extra="datasets[0]['splt'] = 'x'\n")
    proc = run_cli([cfg, '-w', work])
    assert proc.returncode == 2 and 'splt' in proc.stderr and str(cfg) in proc.stderr
    test_split = f'''
        datasets = [dict(abbr='t', type=SciCodeDataset, path={str(DATA)!r}, split='test')]
    '''
    proc = run_cli([config_file(tmp_path, "[dict(type=DummyModel)]", datasets=test_split, name='t.py'), '-w', work])
    assert proc.returncode == 2 and 'test_data.h5' in proc.stderr
    proc = run_cli([config_file(tmp_path, "[dict(type=ReferenceModel)]", datasets=test_split, name='r.py'),
                    '-w', work, '-m', 'infer'])
    assert proc.returncode == 2 and 'gold code' in proc.stderr
    assert not work.exists()


def test_debug_runs_every_task_in_run_py_itself(official_data, tmp_path):
    work = tmp_path / 'w'
    proc = run_cli([config_file(tmp_path, "[dict(type=ReferenceModel, abbr='ref')]", sample_ids=['1']), '-w', work,
                    '--debug'])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count('(in-process)') == 3 and 'running infer/ref in-process' in proc.stderr
    assert results(only_run(work), 'ref', 'val_bg')['subproblem_correct'] == 1


def test_samples_each_follow_their_own_chain_and_resume_per_sample(official_data, tmp_path):
    datasets = f'''
        datasets = [dict(abbr='val' + sfx, type=SciCodeDataset, path={str(DATA)!r}, split='validation',
                         with_bg=bg, sample_ids={SUBSET!r}, infer_cfg=dict(n=2), eval_cfg=dict(pass_at_k=[1, 5]))
                    for bg, sfx in ((False, ''), (True, '_bg'))]
    '''
    work = tmp_path / 'w'
    cfg = config_file(tmp_path, "[dict(type=ReferenceModel, abbr='ref')]", datasets=datasets)
    proc = run_cli([cfg, '-w', work])
    assert proc.returncode == 0, proc.stderr[-2000:]
    run_dir = only_run(work)
    res = results(run_dir, 'ref', 'val')
    assert [(p['problem_id'], p['sample']) for p in res['problems']] == [
        ('1', 0), ('1', 1), ('19', 0), ('19', 1), ('29', 0), ('29', 1)]
    assert (res['main_problem_total'], res['subproblem_total'], res['samples']) == (6, 12, 2)
    assert res['pass_at_k'] == {'main': {'1': 100.0, '2': 100.0}, 'subproblem': {'1': 100.0, '2': 100.0}}
    preds = run_dir / 'predictions' / 'ref' / 'val.jsonl'
    lines = [json.loads(l) for l in preds.read_text().splitlines()]
    assert sorted((r['step_id'], r['sample']) for r in lines) == sorted(
        (sid, s) for sid in ('1.1', '19.1', '19.2', '29.1', '29.2', '29.3') for s in (0, 1))
    # the same program in both samples and both settings: each ran once
    executed = [p for p in (run_dir / 'cache' / 'verdicts').glob('*.json') if not p.name.startswith('_')]
    assert len(executed) == 6
    # a crash lost the second sample's last answers: -r asks only for those
    kept = [r for r in lines if not (r['sample'] == 1 and r['step_id'] in ('29.2', '29.3'))]
    preds.write_text(''.join(json.dumps(r) + '\n' for r in kept))
    proc = run_cli([cfg, '-w', work, '-r', '-m', 'infer'])
    assert proc.returncode == 0, proc.stderr[-2000:]
    again = [json.loads(l) for l in preds.read_text().splitlines()]
    assert [(r['step_id'], r['sample']) for r in again[len(kept):]] == [('29.2', 1), ('29.3', 1)]


def test_samples_at_temperature_zero_are_refused_before_any_request(official_data, tmp_path):
    datasets = f'''
        datasets = [dict(abbr='val', type=SciCodeDataset, path={str(DATA)!r}, sample_ids=['1'],
                         infer_cfg=dict(n=3))]
    '''
    cfg = config_file(tmp_path, "[dict(type='OpenAIChatModel', path='m', key='ENV', temperature=0.0, "
                                "base_url='http://127.0.0.1:9/v1')]", datasets=datasets)
    proc = run_cli([cfg, '-w', tmp_path / 'w'], env={'OPENAI_API_KEY': 'x'})
    assert proc.returncode == 2 and 'datasets[0].infer_cfg.n' in proc.stderr and 'temperature' in proc.stderr
