"""Plain words in the package: every public function says what it gives.

A public function is one whose name does not start with `_`, at module level or a
method of a class. Each carries a return annotation (`-> None` where it gives
nothing), so that a reader learns what comes back without reading the body.
"""
import ast

from helpers import ROOT as CHECKOUT

PACKAGE = CHECKOUT / 'opencompass_scicode'


def public_functions(tree):
    """(qualified name, def node) of each public function: module level, or a method of a
    class (nested classes included). Functions inside functions are not public."""
    found = []

    def visit(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith('_'):
                found.append((prefix + node.name, node))
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f'{prefix}{node.name}.')
    visit(tree.body, '')
    return found


def unannotated(source, filename='<source>'):
    """'file:line name' of each public function of `source` without a return annotation."""
    return [f'{filename}:{node.lineno} {name}' for name, node in public_functions(ast.parse(source))
            if node.returns is None]


def test_the_checker_rejects_a_missing_return_annotation():
    source = (
        'def given() -> int:\n    return 1\n'
        'def forgotten(x):\n    return x\n'
        'def _private(x):\n    return x\n'
        'class Box:\n'
        '    def __init__(self):\n        pass\n'
        '    def size(self) -> int:\n        return 0\n'
        '    async def fill(self, x):\n        pass\n'
        '    class Inner:\n'
        '        def peek(self):\n            def helper():\n                return 2\n            return helper()\n'
    )
    assert unannotated(source) == ['<source>:3 forgotten', '<source>:12 Box.fill', '<source>:15 Box.Inner.peek']


def test_the_checker_passes_annotated_code():
    assert unannotated('def f() -> None:\n    pass\nclass C:\n    def g(self) -> "C":\n        return self\n') == []


def test_every_public_function_has_a_return_annotation():
    missing = []
    for path in sorted(PACKAGE.rglob('*.py')):
        relative = path.relative_to(PACKAGE).as_posix()
        missing += unannotated(path.read_text(encoding='utf-8'), f'opencompass_scicode/{relative}')
    assert not missing, 'public functions without a return annotation:\n' + '\n'.join(missing)
