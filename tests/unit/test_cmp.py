import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse
import sympy

from opencompass_scicode.sandbox.scripts import RUNTIME_DIR

sys.path.insert(0, str(RUNTIME_DIR))
from scicode.compare.cmp import are_dicts_close, cmp_tuple_or_list  # noqa: E402


def test_cmp_tuple_accepts_close_values_and_rejects_others():
    assert cmp_tuple_or_list((np.array([1.0, 2.0]), 3.0), (np.array([1.0, 2.0 + 1e-10]), 3.0))
    assert not cmp_tuple_or_list((np.array([1.0, 2.0]), 3.0), (np.array([1.0, 2.1]), 3.0))
    assert not cmp_tuple_or_list((1.0,), (1.0, 2.0))          # length differs


def test_cmp_tuple_bool_sparse_and_fallback_to_equality():
    assert cmp_tuple_or_list([True], [True]) and not cmp_tuple_or_list([True], [False])
    a = scipy.sparse.csr_matrix(np.eye(3))
    assert cmp_tuple_or_list([a], [scipy.sparse.csr_matrix(np.eye(3))])
    assert not cmp_tuple_or_list([a], [scipy.sparse.csr_matrix(2 * np.eye(3))])
    # ragged -> np.allclose raises ValueError -> compared with ==
    assert cmp_tuple_or_list([[[1], [1, 2]]], [[[1], [1, 2]]]) is True


def test_are_dicts_close():
    assert are_dicts_close({'a': 1.0, 'b': 'x'}, {'a': 1.0 + 1e-9, 'b': 'x'})
    assert not are_dicts_close({'a': 1.0}, {'a': 1.1})
    assert not are_dicts_close({'a': 1.0}, {'b': 1.0})
    x = sympy.Symbol('x')
    assert are_dicts_close({x: 2.0, 'v': x}, {'x': 2.0, 'v': 'x'})
    sp = scipy.sparse.coo_matrix(np.eye(2))
    assert are_dicts_close({'m': sp}, {'m': scipy.sparse.coo_matrix(np.eye(2))})
    assert not are_dicts_close({'m': sp}, {'m': scipy.sparse.coo_matrix(np.zeros((2, 2)))})


def test_runtime_package_is_importable_in_a_test_process():
    from opencompass_scicode.sandbox.scripts import test_process_env
    out = subprocess.run([sys.executable, '-c',
                          'from scicode.compare.cmp import cmp_tuple_or_list, are_dicts_close;'
                          'from scicode.parse.parse import process_hdf5_to_tuple; print("ok")'],
                         env=test_process_env(), capture_output=True, text=True, cwd='/')
    assert out.stdout.strip() == 'ok', out.stderr
