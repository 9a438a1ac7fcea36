"""Comparison helpers imported by SciCode tests, with the official semantics."""
import sys

import numpy as np


def _sparse(*names):
    # scipy.sparse is slow to import; if it is not loaded, nothing is a sparse matrix.
    sparse = sys.modules.get('scipy.sparse')
    return tuple(getattr(sparse, n) for n in names) if sparse is not None else ()


def _is_symbol(value):
    # sympy is heavy to import; if it is not loaded, nothing can be a Symbol.
    sympy = sys.modules.get('sympy')
    return sympy is not None and isinstance(value, sympy.Symbol)


def process_symbol_in_dict(mapping) -> dict:
    """Replace sympy Symbols, in keys and values, by their string form."""
    out = {}
    for key, value in mapping.items():
        if _is_symbol(key):
            # Official quirk: a Symbol key keeps its value unconverted.
            out[str(key)] = value
        elif _is_symbol(value):
            out[key] = str(value)
        else:
            out[key] = value
    return out


def are_dicts_close(dict1, dict2, atol=1e-8, rtol=1e-5) -> bool:
    """Whether two dicts have the same keys and close values (official semantics: numbers by
    np.allclose, the rest by ==)."""
    dict1 = process_symbol_in_dict(dict1)
    dict2 = process_symbol_in_dict(dict2)
    if dict1.keys() != dict2.keys():
        return False
    for key, left in dict1.items():
        right = dict2[key]
        if isinstance(left, str) or _is_symbol(left):
            same = left == right
        elif isinstance(left, _sparse('csr_matrix', 'csc_matrix', 'bsr_matrix', 'coo_matrix')):
            same = np.allclose(left.toarray(), right.toarray(), atol=atol, rtol=rtol)
        else:
            try:
                same = np.allclose(left, right, atol=atol, rtol=rtol)
            except ValueError:
                same = left == right
        if not same:
            return False
    return True


def are_csc_matrix_close(matrix1, matrix2) -> bool:
    """Whether two sparse matrices are close, compared dense."""
    return np.allclose(matrix1.toarray(), matrix2.toarray())


def cmp_tuple_or_list(var1, var2) -> bool:
    """Whether two lists or tuples have the same length and close items, item by item (official
    semantics)."""
    if len(var1) != len(var2):
        return False
    for left, right in zip(var1, var2):
        if isinstance(left, dict):
            same = are_dicts_close(left, right)
        elif isinstance(left, _sparse('csr_matrix', 'csc_matrix')):
            same = are_csc_matrix_close(left, right)
        elif isinstance(left, bool):
            same = left == right
        else:
            try:
                same = np.allclose(left, right)
            except ValueError as exc:
                print(exc)
                same = left == right
        if not same:
            return False
    return True
