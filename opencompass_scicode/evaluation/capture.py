"""Rewrite a validation test so it records, instead of checks, what it compares to `target`.

Every dev assert that uses `target` has one of these shapes:
    assert f(X, target)                  -> target is X
    assert f(X0, target[0]) and f(X1, target[1])   -> target is (X0, X1)
    assert (X) == target                 -> target is X
Asserts are replaced by `__record_target__(<value>)`, evaluated exactly once
where the assert was, so state that later tests rely on evolves as before.
"""
import ast

RECORDER = '__record_target__'


class CaptureError(ValueError):
    pass


def _is_target(node):
    return isinstance(node, ast.Name) and node.id == 'target'


def _target_index(node):
    if (isinstance(node, ast.Subscript) and _is_target(node.value)
            and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int)):
        return node.slice.value
    return None


def _partner(parent, ref):
    """The expression `ref` (target or target[i]) is compared against inside `parent`."""
    if isinstance(parent, ast.Call):
        others = [a for a in parent.args if a is not ref]
        if len(parent.args) == 2 and len(others) == 1:
            return others[0]
    if isinstance(parent, ast.Compare) and len(parent.ops) == 1 and isinstance(parent.ops[0], ast.Eq):
        return parent.left if parent.comparators[0] is ref else parent.comparators[0]
    return None


def _captured_value(test):
    parents = {}
    for node in ast.walk(test):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    whole, indexed = [], {}
    for node in ast.walk(test):
        index = _target_index(node)
        if index is not None:
            partner = _partner(parents.get(node), node)
            if partner is None:
                raise CaptureError(f'unsupported use of target[{index}]')
            indexed[index] = partner
        elif _is_target(node) and _target_index(parents.get(node)) is None:
            partner = _partner(parents.get(node), node)
            if partner is None:
                raise CaptureError('unsupported use of target')
            whole.append(partner)
    if whole and indexed:
        raise CaptureError('target used both whole and indexed')
    if whole:
        if len(whole) > 1:
            raise CaptureError('target compared more than once')
        return whole[0]
    if sorted(indexed) != list(range(len(indexed))):
        raise CaptureError('target indices are not 0..n-1')
    return ast.Tuple(elts=[indexed[i] for i in range(len(indexed))], ctx=ast.Load())


class _Rewriter(ast.NodeTransformer):
    def __init__(self):
        self.count = 0

    def visit_Assert(self, node) -> ast.AST:
        if not any(_is_target(n) for n in ast.walk(node.test)):
            return node
        value = _captured_value(node.test)
        self.count += 1
        call = ast.Call(func=ast.Name(id=RECORDER, ctx=ast.Load()), args=[value], keywords=[])
        return ast.copy_location(ast.Expr(value=call), node)


def uses_target(test_source) -> bool:
    """Whether a test's source names the value it compares against (`target`)."""
    tree = ast.parse(test_source)
    return any(_is_target(n) for n in ast.walk(tree))


def capture_test(test_source) -> tuple[str, int]:
    """Source of the rewritten test, and how many values it records (0 or 1)."""
    tree = ast.parse(test_source)
    rewriter = _Rewriter()
    tree = rewriter.visit(tree)
    if rewriter.count > 1:
        raise CaptureError('more than one assert compares against target')
    if rewriter.count == 0 and uses_target(test_source):
        raise CaptureError('target is used outside an assert')
    ast.fix_missing_locations(tree)
    return ast.unparse(tree), rewriter.count
