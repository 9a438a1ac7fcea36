"""Early evaluation and evaluation tasks share one step pool: steps of different problems run side
by side, and no program is run twice."""
import re
import threading
import time

import pytest

from helpers import DATA, config_file, gold_predictions, only_run, results, run_cli, tiny_dataset
from opencompass_scicode.evaluation import SciCodeEvaluator
from opencompass_scicode.evaluation.regenerate import ensure_targets

SLEEP = 'import time as _t\nprint("start", _t.time(), flush=True)\n_t.sleep(3)\nprint("end", _t.time(), flush=True)\n'


def _interval(record):
    marks = dict(re.findall(r'^(start|end) ([0-9.]+)$', record['stdout'], re.MULTILINE))
    return float(marks['start']), float(marks['end'])


@pytest.mark.slow
def test_steps_of_different_problems_overlap_during_inference(official_data, tmp_path):
    from opencompass_scicode.datasets import SciCodeDataset, gold_code
    from opencompass_scicode.evaluation.program import code_prefix
    ds = SciCodeDataset(path=str(DATA), split='validation', sample_ids=['1', '3'])
    gen = tmp_path / 'generated'
    gen.mkdir()
    for problem in ds.problems:               # one step each: it sleeps, then its gold code passes
        step = problem.steps[0]
        (gen / f'{problem.problem_id}.1.py').write_text(
            code_prefix(problem.dependencies, [], SLEEP + gold_code(step)))
    work = tmp_path / 'w'
    cfg = config_file(tmp_path, f"[dict(type=GeneratedCodeModel, path={str(gen)!r}, abbr='gen')]",
                      sample_ids=['1', '3'])
    proc = run_cli([cfg, '-w', work])
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    run_dir = only_run(work)
    records = {bg: {s['step_id']: s for p in results(run_dir, 'gen', ds_abbr)['problems'] for s in p['steps']}
               for bg, ds_abbr in ((False, 'val'), (True, 'val_bg'))}
    for by_step in records.values():
        assert {sid: r['status'] for sid, r in by_step.items()} == {'1.1': 'pass', '3.1': 'pass'}
        assert all(r['shared'] for r in by_step.values())        # scored during inference
    (s1, e1), (s3, e3) = _interval(records[False]['1.1']), _interval(records[False]['3.1'])
    assert max(s1, s3) < min(e1, e3), 'the two problems were scored one after the other'
    # Without and with background the programs are the same: each ran once.
    assert _interval(records[True]['1.1']) == (s1, e1) and _interval(records[True]['3.1']) == (s3, e3)
    ran = [p for p in (run_dir / 'cache' / 'verdicts').glob('*.json') if not p.name.startswith('_')]
    assert len(ran) == 2


def test_a_step_pool_takes_steps_as_they_come_and_runs_each_program_once(tiny_data):
    ds = tiny_dataset(tiny_data)
    targets = ensure_targets(ds)
    evaluator = SciCodeEvaluator(timeout=60, max_workers=2)
    preds = gold_predictions(ds)
    jobs, _ = evaluator.jobs(ds, preds, targets)
    got, lock = [], threading.Lock()

    def done(record):
        with lock:
            got.append(record)

    scheduler = evaluator.pool()
    first = {('900.1', 0): jobs['900.1', 0]}
    scheduler.submit(evaluator.submissions(first, targets.path, scheduler.durations, done, verdicts=scheduler.claims))
    time.sleep(0.5)                      # inference of the other problems goes on meanwhile
    rest = {key: job for key, job in jobs.items() if key[0] != '900.1'}
    scheduler.submit(evaluator.submissions(rest, targets.path, scheduler.durations, done, verdicts=scheduler.claims))
    # the same program again (as for the other background setting): answered, not run again
    scheduler.submit(evaluator.submissions(first, targets.path, scheduler.durations, done, verdicts=scheduler.claims))
    scheduler.close()
    assert sorted((r.step_id, r.status) for r in got) == [
        ('900.1', 'pass'), ('900.1', 'pass'), ('900.2', 'pass'), ('901.1', 'pass')]
    again = [r for r in got if r.step_id == '900.1']
    assert [r.shared for r in again] == [False, True] and again[0].stdout == again[1].stdout
    assert len(scheduler.claims._results) == 3       # three programs ran
    with pytest.raises(RuntimeError):
        scheduler.submit(evaluator.submissions(first, targets.path, scheduler.durations, done, verdicts=scheduler.claims))
