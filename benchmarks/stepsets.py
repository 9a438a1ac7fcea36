"""Step sets for benchmarks and verdict-equality tests: gold code, and gold code made to fail fast."""
import ast

from opencompass_scicode.inference.extract import extract_code


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


def predictions(dataset, kind):
    """Prediction records as a model would give them: kind is 'gold' or 'stub'."""
    preds = {}
    for problem in dataset.problems:
        for step in problem.scored_steps:
            code = step.ground_truth_code if kind == 'gold' else stub_code(step.ground_truth_code)
            preds[step.step_id] = {'step_id': step.step_id, 'program': None, 'error': None,
                                   'code': extract_code(f'```python\n{code}\n```')}
    return preds
