"""Step sets for benchmarks and verdict-equality tests.

- `gold`: the gold code.
- `stub`: the gold code with every function body replaced by `return 0`: fails fast, so
  start-up costs dominate.
- `real`: like a real model's answers: some steps pass, many fail fast, and two steps in
  different problems burn CPU for a long time (40 s and 25 s by default), as a slow but
  correct answer does. The gold steps known to be slow are stubbed, so the long ones stand out.
"""
import ast
import atexit
import os
import shutil
import tempfile
from pathlib import Path

from opencompass_scicode.inference.extract import extract_code
from opencompass_scicode.pool.timings import CACHE_ENV

# Validation steps whose gold code takes more than a second or so on these machines.
SLOW_GOLD = frozenset({'51.4', '47.4', '10.11', '49.4', '7.1', '6.1', '44.3', '78.3', '3.1'})
# Long steps of the `real` set: single-step problems, so no later step repeats their code.
LONG_STEPS = {'1.1': 40.0, '4.1': 25.0}


def stub_code(gold):
    """The gold code with the body of every top-level function replaced by `return 0`."""
    tree = ast.parse(gold)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.body = [ast.Return(value=ast.Constant(0))]
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    item.body = [ast.Return(value=ast.Constant(0))]
    return ast.unparse(tree)


def busy_code(cpu_seconds):
    """Top-level code that keeps a core busy for `cpu_seconds` of CPU time (no import line:
    code extraction removes those)."""
    return (f"_bench_t = __import__('time')\n_bench_until = _bench_t.process_time() + {cpu_seconds}\n"
            f'while _bench_t.process_time() < _bench_until:\n    pass\n')


def _answer(code):
    """What the evaluator gets from a response holding `code` (official extraction)."""
    return extract_code(f'```python\n{code}\n```')


def _code(step, kind, position, long_steps):
    gold = step.ground_truth_code
    if kind == 'gold':
        return _answer(gold)
    if kind == 'stub':
        return _answer(stub_code(gold))
    if step.step_id in long_steps:
        return busy_code(long_steps[step.step_id]) + _answer(gold)
    if step.step_id in SLOW_GOLD or position % 3 == 0:
        return _answer(stub_code(gold))
    return _answer(gold)


def predictions(dataset, kind, long_steps=None):
    """Prediction records as a model would give them, for a set named above."""
    long_steps = LONG_STEPS if long_steps is None else long_steps
    preds, position = {}, 0
    for problem in dataset.problems:
        for step in problem.scored_steps:
            position += 1
            preds[step.step_id] = {'step_id': step.step_id, 'program': None, 'error': None,
                                   'code': _code(step, kind, position, long_steps)}
    return preds


def add_arguments(parser, sets):
    """The flags every benchmark over these sets takes: which sets, workers, step timeout, data."""
    from opencompass_scicode.evaluation.evaluator import STEP_TIMEOUT_S
    parser.add_argument('--sets', default=sets)
    parser.add_argument('--workers', type=int, default=os.cpu_count() or 2)
    parser.add_argument('--timeout', type=float, default=STEP_TIMEOUT_S)
    parser.add_argument('--data', default=str(Path(__file__).resolve().parent.parent / 'data' / 'scicode'))


def validation(args):
    """(the validation split, its targets) of `--data`, planning on a private copy of the timings."""
    from opencompass_scicode.datasets import SciCodeDataset
    from opencompass_scicode.evaluation.regenerate import ensure_targets
    dataset = SciCodeDataset(path=args.data, split='validation')
    targets = ensure_targets(dataset)
    private_timings(dataset)
    return dataset, targets


def private_timings(dataset):
    """Plan with the step timings this machine remembers, on a copy: the made-up programs' own
    timings (a 40 s step 1.1, say) must not stay behind for real runs. Removed at exit."""
    timings = Path(tempfile.mkdtemp(prefix='scicode-bench-timings-'))
    for known in ('step_durations.json', 'import_costs.json'):
        if (dataset.data_dir / 'cache' / known).is_file():
            shutil.copy(dataset.data_dir / 'cache' / known, timings / known)
    os.environ[CACHE_ENV] = str(timings)
    atexit.register(shutil.rmtree, timings, ignore_errors=True)
