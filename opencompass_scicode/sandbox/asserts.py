"""Rewrites a test's `assert` statements so that the values they compared can be shown when one fails.

Inside each assert, every operand of a comparison (the arguments of `np.allclose`,
`cmp_tuple_or_list`, ..., the sides of `==`, `<`, ...) and every comparison's result is bound to
a hidden name with `:=` as Python evaluates it. The test evaluates exactly what it did, once, in
the same order, and the assertion still decides on the very values it computed: nothing in it
calls a helper that the step's code could replace (a name being stored to cannot change the
value stored). Before each assert a statement resets its hidden names to `...` (not evaluated
yet), so a loop's earlier rounds leave nothing behind.

`:=` is not allowed everywhere (a comprehension's iterable, a class body): a test whose rewritten
form does not compile runs as written, without captures.
"""
import ast
from dataclasses import dataclass, field
from typing import Optional
from types import CodeType

PREFIX = '_scicode_seen_'
# Comparison helpers of the SciCode tests (numpy's and scicode.compare.cmp's), by their last name.
HELPERS = frozenset({'allclose', 'isclose', 'array_equal', 'array_equiv', 'cmp_tuple_or_list',
                     'are_dicts_close', 'are_csc_matrix_close'})
# Positional parameters after the two compared values, per helper.
EXTRA_PARAMETERS = {'allclose': ('rtol', 'atol', 'equal_nan'), 'isclose': ('rtol', 'atol', 'equal_nan'),
                    'are_dicts_close': ('atol', 'rtol'), 'array_equal': ('equal_nan',)}
OPTIONS = ('rtol', 'atol', 'equal_nan')
_OPS = {ast.Eq: '==', ast.NotEq: '!=', ast.Lt: '<', ast.LtE: '<=', ast.Gt: '>', ast.GtE: '>=',
        ast.Is: 'is', ast.IsNot: 'is not', ast.In: 'in', ast.NotIn: 'not in'}
TEXT_CAP = 300


@dataclass
class Comparison:
    """One comparison inside an assert: what it is and the hidden names holding its values."""
    form: str                     # 'np.allclose', 'cmp_tuple_or_list', '==', '<', ..., 'value'
    text: str                     # its source
    sides: list                   # [(hidden name, source of the operand)]
    result: str                   # hidden name of its result
    options: dict = field(default_factory=dict)   # 'rtol'/'atol'/'equal_nan' -> hidden name
    parent: Optional[int] = None  # index of the comparison this one is an operand of


@dataclass
class AssertSite:
    line: int
    end_line: int
    text: str
    comparisons: list

    def names(self) -> list[str]:
        """The hidden names the assert's comparisons bind (results, sides, options), each once, in
        order."""
        names = [c.result for c in self.comparisons] + [n for c in self.comparisons for n, _ in c.sides] + \
            [n for c in self.comparisons for n in c.options.values()]
        return list(dict.fromkeys(names))


def _cut(text):
    return text if len(text) <= TEXT_CAP else text[:TEXT_CAP - 3] + '...'


def _helper_name(func):
    if isinstance(func, ast.Name):
        return func.id, func.id
    if isinstance(func, ast.Attribute):
        base = func.value.id + '.' if isinstance(func.value, ast.Name) else ''
        return func.attr, base + func.attr
    return None, None


class _Capture:
    """Rewrites one assert's test expression, collecting its comparisons."""

    def __init__(self, source, number):
        self.source = source
        self.prefix = f'{PREFIX}{number}_'
        self.comparisons = []
        self.count = 0

    def name(self) -> str:
        self.count += 1
        return f'{self.prefix}{self.count}'

    def text(self, node) -> str:
        return _cut(ast.get_source_segment(self.source, node) or ast.unparse(node))

    def captured(self, node) -> tuple[ast.expr, str]:
        """(node, its hidden name): an operand that is itself a captured comparison keeps its name."""
        if isinstance(node, ast.NamedExpr) and node.target.id.startswith(self.prefix):
            return node, node.target.id
        name = self.name()
        return self.bind(node, name), name

    def bind(self, node, name) -> ast.NamedExpr:
        named = ast.NamedExpr(target=ast.Name(id=name, ctx=ast.Store()), value=node)
        return ast.copy_location(named, node)

    def walk(self, node, parent=None) -> ast.AST:
        """`node` with its comparisons captured (children first: they are evaluated first)."""
        if isinstance(node, ast.Call):
            short, full = _helper_name(node.func)
            plain = not any(isinstance(a, ast.Starred) for a in node.args) and \
                all(k.arg is not None for k in node.keywords)
            if short in HELPERS and plain and len(node.args) >= 2:
                return self._helper(node, full, short, parent)
        if isinstance(node, ast.Compare):
            return self._compare(node, parent)
        if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.ClassDef)):
            return node           # evaluated later, if at all: not this assert's comparison
        for name, value in ast.iter_fields(node):
            if isinstance(value, ast.expr):
                setattr(node, name, self.walk(value, parent))
            elif isinstance(value, list):
                setattr(node, name, [self.walk(v, parent) if isinstance(v, ast.expr) else
                                     self._keyword(v, parent) if isinstance(v, ast.keyword) else v
                                     for v in value])
        return node

    def _keyword(self, keyword, parent):
        keyword.value = self.walk(keyword.value, parent)
        return keyword

    def _new(self, form, node, parent):
        index = len(self.comparisons)
        self.comparisons.append(Comparison(form, self.text(node), [], '', parent=parent))
        return index, self.comparisons[index]

    def _helper(self, node, full, short, parent):
        index, comparison = self._new(full, node, parent)
        args = []
        for position, arg in enumerate(node.args):
            text = self.text(arg)
            arg, name = self.captured(self.walk(arg, index))
            if position < 2:
                comparison.sides.append((name, text))
            elif position - 2 < len(EXTRA_PARAMETERS.get(short, ())):
                comparison.options[EXTRA_PARAMETERS[short][position - 2]] = name
            args.append(arg)
        node.args = args
        for keyword in node.keywords:
            keyword.value = self.walk(keyword.value, index)
            if keyword.arg in OPTIONS:
                keyword.value, comparison.options[keyword.arg] = self.captured(keyword.value)
        comparison.result = self.name()
        return self.bind(node, comparison.result)

    def _compare(self, node, parent):
        ops = ' '.join(_OPS.get(type(op), '?') for op in node.ops)
        index, comparison = self._new(ops, node, parent)
        operands = []
        for operand in [node.left, *node.comparators]:
            text = self.text(operand)
            operand, name = self.captured(self.walk(operand, index))
            comparison.sides.append((name, text))
            operands.append(operand)
        node.left, node.comparators = operands[0], operands[1:]
        comparison.result = self.name()
        return self.bind(node, comparison.result)

    def whole(self, node) -> ast.NamedExpr:
        """An assert over a computed value, no comparison in it: the value itself."""
        comparison = Comparison('value', self.text(node), [], '')
        name = self.name()
        comparison.sides.append((name, comparison.text))
        comparison.result = name
        self.comparisons.append(comparison)
        return self.bind(node, name)


class _Asserts(ast.NodeTransformer):
    def __init__(self, source):
        self.source = source
        self.sites = []

    def visit_Assert(self, node) -> list[ast.stmt]:
        capture = _Capture(self.source, len(self.sites) + 1)
        test = capture.walk(node.test)
        node.test = test if capture.comparisons else capture.whole(test)
        site = AssertSite(node.lineno, node.end_lineno or node.lineno, self.text(node), capture.comparisons)
        self.sites.append(site)
        reset = ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store()) for n in site.names()],
                           value=ast.Constant(...))
        return [ast.copy_location(reset, node), node]

    def text(self, node) -> str:
        return _cut(ast.get_source_segment(self.source, node) or ast.unparse(node))


def instrument(source, filename) -> tuple[CodeType, list[AssertSite]]:
    """(code object, [AssertSite]) for a test's source; raises SyntaxError as compile() would.

    Without asserts, or when the rewritten tree does not compile, the code is the plain
    compilation of `source` and the sites are empty."""
    tree = ast.parse(source, filename)
    rewriter = _Asserts(source)
    try:
        tree = ast.fix_missing_locations(rewriter.visit(tree))
        if rewriter.sites:
            return compile(tree, filename, 'exec'), rewriter.sites
    except (SyntaxError, ValueError, TypeError, RecursionError):
        pass
    return compile(source, filename, 'exec'), []


def forget(namespace) -> None:
    """Drop the hidden names from a namespace (after each test: they hold references to values)."""
    for name in [n for n in namespace if isinstance(n, str) and n.startswith(PREFIX)]:
        namespace.pop(name, None)
