"""What a failed comparison of a SciCode test compared, and where its sides differ, form by form.

`np.allclose`/`np.isclose` (given or default tolerances), `np.array_equal`, `==`/`!=` (exact),
and the official helpers, which compare element by element as the official code does:
`cmp_tuple_or_list` (equal length; per item: dict -> `are_dicts_close`, sparse -> dense
allclose, bool -> ==, else allclose), `are_dicts_close` (same keys; per key), and
`are_csc_matrix_close`. The first element that differs is named, and its place given as a path
(`path`: `[2]['energy']`, item 2 then key 'energy'; lists within lists that are not arrays are
looked into item by item) with its largest difference (`max_abs_diff`) beside it; the tolerance
ratio (values.py) is taken over every element looked at, so a near miss means the whole
comparison was within 10x its tolerance. Order comparisons (`<`, `is`, `in`, ...) show their
sides only.

Only plain data is looked into (values.py); an element of another kind stops the look with a
note, since comparing it could run the step's own code.
"""
import sys
import time
from typing import Any

from . import values

SPARSE = ('csr_matrix', 'csc_matrix', 'bsr_matrix', 'coo_matrix', 'csr_array', 'csc_array', 'bsr_array',
          'coo_array')
PLAIN_KEYS = (str, int, float, bool, type(None))
DENSE_CAP = 10 ** 7                   # sparse matrices larger than this are not made dense here
LOOK_S = 0.6                          # looking through elements or keys, in all
# The official helpers, which compare containers element by element: their difference names a path.
NESTED = ('cmp_tuple_or_list', 'are_dicts_close', 'are_csc_matrix_close')


def _sparse(value):
    module = sys.modules.get('scipy.sparse')
    return module is not None and type(value) in {getattr(module, n, None) for n in SPARSE} - {None}


def _dense(value):
    rows, cols = value.shape
    return value.toarray() if rows * cols <= DENSE_CAP else None


def _symbol_text(value):
    sympy = sys.modules.get('sympy')
    if sympy is not None and type(value).__module__.startswith('sympy') and isinstance(value, sympy.Symbol):
        return str(value)
    return value


def tolerance(options, defaults=values.DEFAULT_TOLERANCE) -> dict[str, float]:
    """The rtol/atol the comparison used: given ones where plain numbers, else the defaults."""
    out = {}
    for key in ('rtol', 'atol'):
        given = options.get(key, ...)
        out[key] = float(given) if type(given) in (int, float) or values._numpy_scalar(given) else defaults[key]
    return out


def _equal_nan(options):
    flag = options.get('equal_nan', ...)
    return flag is True or (values._numpy_scalar(flag) and bool(flag))


def numbers(a, b, tol, equal_nan=False) -> dict[str, Any] | None:
    """values.arrays on two sides, or None when either is not plain numbers."""
    x, y = values.numeric(a), values.numeric(b)
    if x is None or y is None:
        return None
    return values.arrays(x, y, tol, equal_nan)


class _Look:
    """Element by element, first difference named, worst tolerance ratio kept, within LOOK_S."""

    def __init__(self):
        self.deadline = time.monotonic() + LOOK_S
        self.ratio = 0.0
        self.complete = True        # every element was looked at and had a ratio (or was equal)

    def late(self) -> bool:
        """Whether the time to look is up (the look is then incomplete)."""
        if time.monotonic() > self.deadline:
            self.complete = False
            return True
        return False

    def item(self, left, right, tol) -> tuple[bool | None, dict[str, Any]]:
        """(same?, detail) of one element under the official per-item rule; same is None when it
        cannot be told here."""
        if type(left) is dict:
            return self.dicts(left, right, tol)
        if _sparse(left):
            if not _sparse(right):
                self.complete = False
                return None, {'note': f'sparse matrix against {values.type_name(right)}'}
            left, right = _dense(left), _dense(right)
            if left is None or right is None:
                self.complete = False
                return None, {'note': 'sparse matrices too large to compare here'}
        if type(left) is bool and type(right) in (bool, int):
            return left == right, {'sides': [values.short_repr(left), values.short_repr(right)]}
        detail = numbers(left, right, tol)
        if detail is None and type(left) in (list, tuple) and type(right) in (list, tuple):
            return self.sequences(left, right, tol)       # ragged, or not all numbers: item by item
        if detail is not None:
            if 'shape_mismatch' in detail and 'elements' not in detail:
                self.complete = False
                return False, detail
            if detail.get('elements_compared') is not None:
                self.complete = False
            self.ratio = max(self.ratio, _float(detail.get('tolerance_ratio', 0.0)))
            return detail.get('outside_tolerance', 0) == 0 and not detail.get('nan_mismatch'), detail
        if type(left) in PLAIN_KEYS and type(right) in PLAIN_KEYS:
            self.complete = False          # compared exactly: no tolerance to be near
            return left == right, {'sides': [values.short_repr(left), values.short_repr(right)]}
        self.complete = False
        return None, {'note': f'{values.type_name(left)} against {values.type_name(right)}: not compared here'}

    def sequences(self, a, b, tol) -> tuple[bool | None, dict[str, Any]]:
        """(same?, detail) of two lists or tuples under cmp_tuple_or_list's rule: equal length,
        then item by item; same is None when it cannot be told here."""
        if type(a) not in (list, tuple) or type(b) not in (list, tuple):
            self.complete = False
            return None, {'note': f'{values.type_name(a)} against {values.type_name(b)}: not looked into'}
        if len(a) != len(b):
            self.complete = False
            return False, {'length_mismatch': f'{len(a)} items against {len(b)}'}
        out, same = {'items': len(a)}, True
        for index, (left, right) in enumerate(zip(a, b)):
            if index >= values.FIRST_ELEMENTS or self.late():
                self.complete = False
                return (None if same else False), out
            ok, detail = self.item(left, right, tol)
            if ok is None:
                out.setdefault('first_difference', {'item': index, **detail})
                return (None if same else False), out
            if not ok:
                same = False
                out.setdefault('first_difference', {'item': index, **detail})
        return same, out

    def dicts(self, a, b, tol) -> tuple[bool | None, dict[str, Any]]:
        """(same?, detail) of two dicts under are_dicts_close's rule: the same keys, each value
        close."""
        if type(a) is not dict or type(b) is not dict:
            self.complete = False
            return None, {'note': f'{values.type_name(a)} against {values.type_name(b)}: not looked into'}
        a = {_symbol_text(k): v for k, v in a.items()}
        b = {_symbol_text(k): v for k, v in b.items()}
        if not all(type(k) in PLAIN_KEYS for k in (*a, *b)):
            self.complete = False
            return None, {'note': 'keys of other kinds than str and numbers: not looked into'}
        if a.keys() != b.keys():
            self.complete = False
            return False, {'keys_only_in_value': [values.short_repr(k) for k in a if k not in b][:8],
                           'keys_only_in_target': [values.short_repr(k) for k in b if k not in a][:8]}
        out, same = {'keys': len(a)}, True
        for key, left in a.items():
            if self.late():
                break
            right = _symbol_text(b[key])
            left = _symbol_text(left)
            if type(left) is str:
                ok, detail = left == right, {'sides': [values.short_repr(left), values.short_repr(right)]}
                self.complete = False
            else:
                ok, detail = self.item(left, right, tol)
            if ok is None:
                out.setdefault('first_difference', {'key': values.short_repr(key), **detail})
                return None, out
            if not ok:
                same = False
                out.setdefault('first_difference', {'key': values.short_repr(key), **detail})
        return same, out


def _float(x):
    return x if isinstance(x, float) else float('inf')


def explain(form, sides, options) -> dict[str, Any]:
    """{'form', 'sides', and what differs}. `sides`: [(value, its source, role)], the evaluated
    operands in order; `options`: captured rtol/atol/equal_nan values."""
    out = {'form': form, 'sides': [values.side(v, text, role) for v, text, role in sides]}
    if len(sides) < 2:
        return out
    (a, *_), (b, *_) = sides[0], sides[1]
    name = form.rsplit('.', 1)[-1]
    look = _Look()
    if name in ('allclose', 'isclose'):
        out['tolerance'] = tol = tolerance(options)
        out['difference'] = numbers(a, b, tol, _equal_nan(options))
    elif name in ('array_equal', 'array_equiv') or form in ('==', '!='):
        out['tolerance'] = 'exact'
        out['difference'] = numbers(a, b, None, _equal_nan(options))
    elif name == 'cmp_tuple_or_list':
        out['tolerance'] = dict(values.DEFAULT_TOLERANCE)
        out['difference'] = look.sequences(a, b, out['tolerance'])[1]
    elif name == 'are_dicts_close':
        positional = {'atol': options.get('atol', ...), 'rtol': options.get('rtol', ...)}
        out['tolerance'] = tol = tolerance(positional)
        out['difference'] = look.dicts(a, b, tol)[1]
    elif name == 'are_csc_matrix_close' and _sparse(a) and _sparse(b):
        out['tolerance'] = dict(values.DEFAULT_TOLERANCE)
        x, y = _dense(a), _dense(b)
        out['difference'] = numbers(x, y, out['tolerance']) if x is not None and y is not None else None
    if out.get('difference') is None:
        out.pop('difference', None)
        return out
    if name in NESTED:
        _name_first(out['difference'], matrix=name == 'are_csc_matrix_close')
    if isinstance(out.get('tolerance'), dict):
        out['near_miss'] = near_miss(out['difference'], look)
    return out


def first_path(difference) -> tuple[str, dict[str, Any]]:
    """(path, detail) of the first element that differs in a nested difference: the path in
    Python's own subscript form (`[2]['energy']`: item 2, then key 'energy'), and the detail of
    that element (itself where nothing is nested)."""
    path, leaf = '', difference
    while isinstance(leaf.get('first_difference'), dict):
        leaf = leaf['first_difference']
        path += f"[{leaf['item']}]" if 'item' in leaf else f"[{leaf.get('key')}]"
    return path, leaf


def _name_first(difference, matrix=False):
    """On the difference of an official helper: `path` of the first element that differs and
    its `max_abs_diff`, at the top where a reader looks first. Of a sparse `matrix`, the path is
    the index of its first differing element."""
    path, leaf = first_path(difference)
    if matrix and difference.get('first_differences'):
        path = str(difference['first_differences'][0]['index'])
    if path:
        difference['path'] = path
        if leaf is not difference and 'max_abs_diff' in leaf:
            difference['max_abs_diff'] = leaf['max_abs_diff']


def near_miss(difference, look) -> bool:
    """Off by less than NEAR_MISS_RATIO times the tolerance, everywhere it was compared."""
    if 'tolerance_ratio' in difference:         # one pair of arrays
        bad = ('shape_mismatch', 'nan_mismatch', 'elements_compared')
        ratio = difference['tolerance_ratio']
        return (not any(k in difference for k in bad) and isinstance(ratio, float)
                and ratio < values.NEAR_MISS_RATIO)
    return look.complete and 'first_difference' in difference and look.ratio < values.NEAR_MISS_RATIO
