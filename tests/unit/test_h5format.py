"""The reader on every layout of the official file, written by our writer (and by hand)."""
import h5py
import numpy as np
import pytest
import scipy.sparse

from opencompass_scicode.targets.h5format import (UnstorableValue, read_step_targets,
                                                  write_step_targets, write_value)


def roundtrip(tmp_path, targets, step_id='1.1'):
    path = tmp_path / 't.h5'
    with h5py.File(path, 'w') as fh:
        write_step_targets(fh, step_id, targets)
    return read_step_targets(path, step_id, len(targets))


def test_single_values(tmp_path):
    out = roundtrip(tmp_path, [np.arange(4.0), 3.5, True, 'hello', 7])
    assert np.array_equal(out[0], np.arange(4.0))
    assert out[1] == 3.5 and bool(out[2]) is True
    assert out[3] == 'hello' and isinstance(out[3], str)
    assert out[4] == 7


def test_tuple_becomes_several_vars_and_reads_back_as_tuple(tmp_path):
    out = roundtrip(tmp_path, [(np.eye(2), 5.0, 'x')])
    assert isinstance(out[0], tuple) and len(out[0]) == 3
    assert np.array_equal(out[0][0], np.eye(2)) and out[0][1] == 5.0 and out[0][2] == 'x'


def test_long_tuple_keeps_its_order(tmp_path):
    values = tuple(float(i) for i in range(12))
    out = roundtrip(tmp_path, [values])
    assert out[0] == values


def test_official_var_names_are_read_in_lexicographic_order(tmp_path):
    # The official file names children var1..var11; its reader sorts them by name.
    path = tmp_path / 'o.h5'
    with h5py.File(path, 'w') as fh:
        g = fh.create_group('2.1/test1')
        for i in range(1, 12):
            g.create_dataset(f'var{i}', data=i)
    (out,) = read_step_targets(path, '2.1', 1)
    assert list(out) == [1, 10, 11, 2, 3, 4, 5, 6, 7, 8, 9]


def test_list_group_ragged(tmp_path):
    out = roundtrip(tmp_path, [[np.arange(2), np.arange(3)]])
    assert isinstance(out[0], list) and len(out[0]) == 2
    assert np.array_equal(out[0][1], np.arange(3))


def test_homogeneous_list_is_one_array(tmp_path):
    out = roundtrip(tmp_path, [[1.0, 2.0, 3.0]])
    assert np.array_equal(out[0], [1.0, 2.0, 3.0])


@pytest.mark.parametrize('kind', ['csr', 'csc', 'coo', 'bsr'])
def test_sparse_matrices(tmp_path, kind):
    dense = np.array([[0, 1.0, 0, 0], [2.0, 0, 0, 3.0], [0, 0, 0, 0], [4.0, 0, 5.0, 0]])
    matrix = getattr(scipy.sparse, f'{kind}_matrix')(dense)
    (out,) = roundtrip(tmp_path, [matrix])
    assert scipy.sparse.issparse(out)
    expected_kind = {'csc': 'csr'}.get(kind, kind)
    assert out.format == expected_kind
    assert np.array_equal(out.toarray(), dense)


def test_dict_with_float_keys_strings_and_sparse(tmp_path):
    value = {'0.5': 1.0, 'name': 'abc', 'm': scipy.sparse.csr_matrix(np.eye(2)), 'k': np.arange(3)}
    (out,) = roundtrip(tmp_path, [value])
    assert out[0.5] == 1.0                      # float-looking key became a float
    assert out['name'] == 'abc'                 # bytes decoded, key kept as a string
    assert np.array_equal(out['m'].toarray(), np.eye(2))
    assert np.array_equal(out['k'], np.arange(3))


def test_empty_test_group_reads_as_empty_tuple(tmp_path):
    out = roundtrip(tmp_path, [None, 1.0])
    assert out[0] == () and out[1] == 1.0


def test_missing_step_is_an_error(tmp_path):
    path = tmp_path / 'x.h5'
    with h5py.File(path, 'w') as fh:
        write_step_targets(fh, '1.1', [1.0])
    with pytest.raises(KeyError):
        read_step_targets(path, '1.2', 1)
    with pytest.raises(KeyError):
        read_step_targets(path, '1.1', 2)       # asks for more tests than stored


def test_writer_refuses_what_it_cannot_store_faithfully(tmp_path):
    with h5py.File(tmp_path / 'y.h5', 'w') as fh:
        for bad in (None, {}, {'list': 1.0}, {'a': {'b': 1}}, [object()]):
            with pytest.raises((UnstorableValue, TypeError)):
                write_value(fh, f'v{id(bad)}', bad)
