"""The fast and the plain executor, and the official-style runner, agree on every verdict.

CI runs a subset of the validation split that finishes quickly; the full split
(the gold code of 51.4 alone runs about a minute) is covered by
`python benchmarks/eval_speed.py`, which fails when any verdict differs.
"""
import pytest

from benchmarks.official_like import official_like_runner, step_program
from benchmarks.stepsets import predictions, stub_code
from helpers import statuses
from opencompass_scicode.datasets import SciCodeDataset
from opencompass_scicode.evaluation import SciCodeEvaluator
from opencompass_scicode.evaluation.regenerate import ensure_targets

SUBSET = ['1', '3', '4', '19', '29', '38', '70', '78']


@pytest.fixture(scope='module')
def subset(official_data):
    ds = SciCodeDataset(path=str(official_data), split='validation', sample_ids=SUBSET)
    return ds, ensure_targets(ds)


def official_verdicts(ds, preds, targets):
    jobs, _ = SciCodeEvaluator().jobs(ds, preds, targets)
    steps = {s.step_id: s for p in ds.problems for s in p.steps}
    runner = official_like_runner(targets.path, timeout=600)
    out = {}
    for (sid, _), job in jobs.items():
        res = runner.run(step_program(job.program, sid, steps[sid].test_cases))
        out[sid] = 'pass' if res.returncode == 0 else 'fail'
    return out


def test_stub_code_really_replaces_function_bodies():
    out = stub_code('def f(x):\n    """doc"""\n    return x * 2\nclass A:\n    def m(self):\n        return 1\n')
    assert 'x * 2' not in out and 'return 1' not in out and out.count('return 0') == 2


@pytest.mark.slow
@pytest.mark.parametrize('kind', ['gold', 'stub'])
def test_fast_plain_and_official_style_agree(subset, kind):
    ds, targets = subset
    preds = predictions(ds, kind)
    fast = statuses(SciCodeEvaluator(executor='forkserver', timeout=600).evaluate(ds, preds, targets))
    plain = statuses(SciCodeEvaluator(executor='subprocess', timeout=600).evaluate(ds, preds, targets))
    assert fast == plain
    official = official_verdicts(ds, preds, targets)
    assert {sid: ('pass' if v == 'pass' else 'fail') for sid, v in fast.items()} == official
    if kind == 'gold':
        assert set(fast.values()) == {'pass'}
    else:
        assert list(fast.values()).count('pass') < len(fast) // 2


# Hand-written answers that do not compile: the model's fault, so `fail` (the official
# harness's python exits non-zero), never `eval_error` (a fault of the harness).
UNCOMPILABLE = {
    '1.1': ('def cg(A, b, x, tol):\n    r = b - np.dot(A, x))\n    return x\n', 'SyntaxError'),
    '3.1': ('def GS(A, b, eps, x_true, x0):\n    x = x0.copy()\n        residual = np.linalg.norm(A @ x - b)\n'
            '    return residual, 0.0\n', 'IndentationError'),
    '4.1': ('def ichol(A):\n    n = len(A\n    return A\n', 'SyntaxError'),
}


def test_code_that_does_not_compile_fails_here_and_in_the_official_style_runner(official_data):
    ds = SciCodeDataset(path=str(official_data), split='validation', sample_ids=['1', '3', '4'])
    targets = ensure_targets(ds)
    preds = {sid: {'step_id': sid, 'program': None, 'error': None, 'code': code}
             for sid, (code, _) in UNCOMPILABLE.items()}
    result = SciCodeEvaluator(timeout=600).evaluate(ds, preds, targets)
    records = {s['step_id']: s for p in result['problems'] for s in p['steps'] if s['step_id'] in preds}
    for sid, (_, error) in UNCOMPILABLE.items():
        assert records[sid]['status'] == 'fail', records[sid]
        assert error in records[sid]['message'] and 'line ' in records[sid]['message'], records[sid]
    assert official_verdicts(ds, preds, targets) == {sid: 'fail' for sid in UNCOMPILABLE}
