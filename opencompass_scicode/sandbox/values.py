"""Compact, bounded summaries of the values a failed comparison compared, and how far apart they are.

Computed inside the step process after its verdict is reported, on values the step's code made:
numbers are looked at only when they are plain (numpy arrays and scalars of numeric types, Python
numbers, lists and tuples of those); anything else is named by its type and shown by its `repr`,
cut short. Whatever the step's code could run here (a `repr`, a custom class) runs under the
caller's time limit, and its failure gives a placeholder. Sizes are bounded: long texts are cut,
big arrays are compared chunk by chunk until a time budget runs out (then the figures say how
many elements they cover).

Tolerances are those the comparison used: `np.allclose`/`np.isclose` defaults (rtol 1e-5, atol
1e-8) or the given ones; `==` compares exactly. The tolerance ratio is the largest
|a - b| / (atol + rtol * |b|): above 1 the comparison fails; below 10 it is a near miss.

For two arrays the summary says how many elements differ out of how many, which differ first
(index and both values, in the arrays' order) and where the largest difference is and how
large: a reader of a 1000-element result sees `3/1000` and the three indices, not two reprs
cut at a dozen elements each. `where` is the index of the largest absolute difference (and
`values_at` the values there); where the largest difference relative to the tolerance is
elsewhere, `tolerance_ratio_at` says where.
"""
import math
import reprlib
import sys
import time
from typing import Any

REPR_CAP = 240
NEAR_MISS_RATIO = 10.0
MAX_LIST_ITEMS = 100_000        # plain lists longer than this are not turned into arrays
CHUNK = 1 << 18
ARRAY_BUDGET_S = 0.3            # per pair of arrays compared
DEFAULT_TOLERANCE = {'rtol': 1e-5, 'atol': 1e-8}
FIRST_ELEMENTS = 1000           # elements of a tuple or list looked through for the first difference
FIRST_SHOWN = 5                 # differing elements of an array named by index, with both values


def _np():
    return sys.modules.get('numpy')


def type_name(value) -> str:
    """The class's own name, read past anything the class or its metaclass says about itself."""
    cls = type(value)
    try:
        module = type.__dict__['__module__'].__get__(cls)
        name = type.__dict__['__qualname__'].__get__(cls)
    except Exception:
        return '?'
    return name if module in ('builtins', None) else f'{module}.{name}'


def _numpy_scalar(value):
    np = _np()
    return np is not None and type(value) in _scalar_types(np)


_SCALARS = {}


def _scalar_types(np):
    if not _SCALARS:
        _SCALARS['types'] = frozenset(t for t in np.sctypeDict.values() if isinstance(t, type))
    return _SCALARS['types']


PLAIN_NUMBERS = (bool, int, float, complex)


def numeric(value, depth=0) -> Any:
    """The value as a numpy array of numbers (bool, int, float, complex), or None when it is
    anything else (or a list too long or too ragged to look through safely)."""
    np = _np()
    if np is None:
        return None
    kind = type(value)
    if kind is np.ndarray:
        return value if value.dtype.kind in 'biufc' else None
    if kind in PLAIN_NUMBERS or _numpy_scalar(value):
        array = np.asarray(value)
        return array if array.dtype.kind in 'biufc' else None
    if kind in (list, tuple) and depth < 4:
        if not _plain_sequence(value, depth, [MAX_LIST_ITEMS]):
            return None
        try:
            array = np.asarray(value)
        except (ValueError, TypeError):
            return None
        return array if array.dtype.kind in 'biufc' else None
    return None


def _plain_sequence(value, depth, room):
    for item in value:
        room[0] -= 1
        if room[0] < 0:
            return False
        kind = type(item)
        if kind in PLAIN_NUMBERS or _numpy_scalar(item):
            continue
        np = _np()
        if kind is np.ndarray and item.dtype.kind in 'biufc' and item.size <= room[0]:
            room[0] -= item.size
            continue
        if kind in (list, tuple) and depth < 4 and _plain_sequence(item, depth + 1, room):
            continue
        return False
    return True


class _Short(reprlib.Repr):
    """reprlib, with numpy arrays printed by numpy under fixed, small print options (whatever
    options the step set)."""

    def __init__(self):
        super().__init__()
        self.maxlevel, self.maxtuple, self.maxlist, self.maxdict, self.maxset = 3, 8, 8, 8, 8
        self.maxstring, self.maxother, self.maxlong = 120, 120, 60

    def repr1(self, x, level) -> str:
        np = _np()
        if np is not None and type(x) is np.ndarray:
            if x.dtype.kind not in 'biufcUSb':
                return f'array(<{x.size} {x.dtype} elements>)'
            return np.array2string(x, max_line_width=100, precision=8, threshold=12, edgeitems=3,
                                   separator=', ')
        if _numpy_scalar(x):        # 3.0, not np.float64(3.0): the type is shown beside it
            return super().repr1(x.item(), level)
        return super().repr1(x, level)


_SHORT = _Short()


def short_repr(value) -> str:
    """`repr` cut to REPR_CAP characters; a placeholder when it raises."""
    try:
        text = _SHORT.repr(value)
    except Exception as exc:
        return f'<{type_name(value)}: repr raised {type_name(exc)}>'
    return text if len(text) <= REPR_CAP else text[:REPR_CAP - 3] + '...'


def number(x) -> float | str:
    """A float for JSON: finite ones rounded to 6 significant digits, the others as text."""
    try:
        x = float(x)
    except (TypeError, ValueError, OverflowError):
        return str(x)[:40]
    if math.isfinite(x):
        return float(f'{x:.6g}')
    return 'nan' if math.isnan(x) else ('inf' if x > 0 else '-inf')


def side(value, text, role) -> dict[str, Any]:
    """What one compared value was: type, shape and dtype, a short repr, NaN/inf counts."""
    out = {'expr': text, 'role': role, 'type': type_name(value)}
    np = _np()
    if np is not None and type(value) is np.ndarray:
        out.update(shape=list(value.shape), dtype=str(value.dtype))
    elif type(value) in (list, tuple, dict, str, bytes):
        out['len'] = len(value)
    array = numeric(value)
    if array is not None and array.dtype.kind in 'fc':
        nan, inf = _counts(array)
        if nan:
            out['nan'] = nan
        if inf:
            out['inf'] = inf
    out['repr'] = short_repr(value)
    return out


def _counts(array):
    np = _np()
    if array.size > 4 * CHUNK * 16:          # counting alone would take a while: skip
        return 0, 0
    return int(np.isnan(array).sum()), int(np.isinf(array).sum())


def arrays(a, b, tolerance=None, equal_nan=False) -> dict[str, Any]:
    """How far apart two numeric arrays are. `tolerance`: {'rtol', 'atol'} (isclose semantics),
    or None for an exact comparison."""
    np = _np()
    out = {}
    if a.shape != b.shape and a.ndim and b.ndim:      # a scalar against an array is no mismatch
        try:
            shape = np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            return {'shape_mismatch': f'shapes {tuple(a.shape)} and {tuple(b.shape)} differ and do not broadcast'}
        out['shape_mismatch'] = (f'shapes {tuple(a.shape)} and {tuple(b.shape)} differ '
                                 f'(broadcast to {tuple(shape)})')
    try:
        x, y = np.broadcast_arrays(a, b)
    except ValueError:
        return {'shape_mismatch': f'shapes {tuple(a.shape)} and {tuple(b.shape)} do not broadcast'}
    total = x.size
    worst = {'abs': -1.0, 'rel': 0.0, 'ratio': 0.0, 'at': None, 'ratio_at': None, 'nan_at': None, 'first': []}
    outside = nan_mismatch = done = 0
    started = time.monotonic()
    flat_x, flat_y = x.flat, y.flat
    while done < total:
        end = min(total, done + CHUNK)
        cx, cy = _float(flat_x[done:end]), _float(flat_y[done:end])
        outside_here, nan_here = _chunk(cx, cy, done, tolerance, equal_nan, worst)
        outside += outside_here
        nan_mismatch += nan_here
        done = end
        if time.monotonic() - started > ARRAY_BUDGET_S:
            break
    out['elements'] = total
    if done < total:
        out['elements_compared'] = done
    out['outside_tolerance' if tolerance else 'elements_differ'] = outside
    if nan_mismatch:
        out['nan_mismatch'] = nan_mismatch
    if worst['at'] is not None:
        at = worst['at']
        if worst['abs'] <= 0 and worst['nan_at'] is not None:      # the only difference is a NaN
            at = worst['nan_at']
        index = _index(at, x.shape)
        out.update(max_abs_diff=number(worst['abs']), max_rel_diff=number(worst['rel']), where=index,
                   values_at=[short_repr(x[tuple(index)].item()), short_repr(y[tuple(index)].item())])
        if tolerance:
            out['tolerance_ratio'] = number(worst['ratio'])
            if worst['ratio_at'] is not None and worst['ratio_at'] != at and worst['abs'] > 0:
                out['tolerance_ratio_at'] = _index(worst['ratio_at'], x.shape)   # small values, tight tolerance
    if worst['first'] and total > 1:
        out['first_differences'] = [_element(x, y, at) for at in worst['first']]
    return out


def _index(flat_index, shape):
    np = _np()
    return [int(i) for i in np.unravel_index(flat_index, shape)] if shape else []


def _element(x, y, flat_index):
    """{'index', 'values': [the value's, the target's]} of one element of two same-shaped arrays."""
    index = tuple(_index(flat_index, x.shape))
    return {'index': list(index), 'values': [short_repr(x[index].item()), short_repr(y[index].item())]}


def _float(chunk):
    np = _np()
    return chunk.astype(np.complex128 if chunk.dtype.kind == 'c' else np.float64)


def _chunk(x, y, offset, tolerance, equal_nan, worst):
    """(elements outside the tolerance, elements NaN on one side) of one chunk; updates `worst`
    (largest absolute and relative difference, largest tolerance ratio, and where; the first
    FIRST_SHOWN elements that differ)."""
    np = _np()
    with np.errstate(all='ignore'):
        both_nan = np.isnan(x) & np.isnan(y)
        same = (x == y) | (both_nan if equal_nan else False)
        diff = np.where(same, 0.0, np.abs(x - y))
        nan = np.isnan(diff)
        diff = np.where(nan, -1.0, diff)          # NaN differences are counted, not maximised
        scale = np.abs(y)
        rel = np.where(scale > 0, diff / np.where(scale > 0, scale, 1.0), np.where(diff > 0, np.inf, 0.0))
        if tolerance:
            ok = np.isclose(x, y, rtol=tolerance['rtol'], atol=tolerance['atol'], equal_nan=equal_nan)
            allowed = tolerance['atol'] + tolerance['rtol'] * scale
            ratio = np.where(allowed > 0, diff / np.where(allowed > 0, allowed, 1.0),
                             np.where(diff > 0, np.inf, 0.0))
            bad = ~ok
        else:
            bad = ~same
        outside = int(bad.sum())
        wanted = FIRST_SHOWN - len(worst['first'])
        if outside and wanted > 0:
            worst['first'].extend(offset + int(i) for i in np.flatnonzero(bad)[:wanted])
        if diff.size:
            at = int(np.argmax(diff))
            if diff[at] > worst['abs']:
                worst['abs'], worst['at'] = float(diff[at]), offset + at
            worst['rel'] = max(worst['rel'], float(np.max(rel)))
            if tolerance:
                r_at = int(np.argmax(ratio))
                if ratio[r_at] > worst['ratio'] or worst['ratio_at'] is None:
                    worst['ratio'], worst['ratio_at'] = float(ratio[r_at]), offset + r_at
    nan_only = nan & ~same
    if worst['nan_at'] is None and nan_only.any():
        worst['nan_at'] = offset + int(np.argmax(nan_only))
    return outside, int(nan_only.sum())
