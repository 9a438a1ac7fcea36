"""Reader and writer for SciCode's test-target HDF5 layout.

Layout: group `<step_id>/test<k>` (k from 1) holds children `var1`, `var2`, ...
One child -> that value; several -> a tuple in h5 name order (lexicographic,
as the official reader does: var1, var10, var2). A child group is read by its
first key: `list` -> list, `sparse_matrix` -> scipy sparse matrix, anything
else -> dict (float-looking keys become floats, bytes decode as UTF-8).

The reader runs inside test processes, so it imports only h5py/numpy/scipy.
"""
import sys

import h5py
import numpy as np
from typing import Any


# ---------------------------------------------------------------- reading
def _dataset_value(dataset):
    value = dataset[()]
    if isinstance(value, bytes):
        return value.decode('utf-8', errors='strict')
    return value


def _read_sparse(group):
    import scipy.sparse     # only when a file holds one: it is slow to import
    data = group['data'][()]
    shape = tuple(group['shape'][()])
    if 'row' in group and 'col' in group:
        return scipy.sparse.coo_matrix((data, (group['row'][()], group['col'][()])), shape=shape)
    if 'blocksize' in group:
        return scipy.sparse.bsr_matrix((data, group['indices'][()], group['indptr'][()]),
                                       shape=shape, blocksize=tuple(group['blocksize'][()]))
    return scipy.sparse.csr_matrix((data, group['indices'][()], group['indptr'][()]), shape=shape)


def _read_dict(group):
    out = {}
    for key, node in group.items():
        if isinstance(node, h5py.Group):
            out[key] = _read_sparse(node['sparse_matrix'])
            continue
        value = node[()]
        if isinstance(value, bytes):
            out[key] = value.decode('utf-8', errors='strict')
            continue
        try:
            out[float(key)] = value
        except ValueError:
            out[key] = value
    return out


def _read_group(group):
    # Decided by the first key only, like the official reader.
    for key in group.keys():
        if key == 'list':
            return [group['list'][k][()] for k in group['list'].keys()]
        if key == 'sparse_matrix':
            return _read_sparse(group['sparse_matrix'])
        return _read_dict(group)
    return None


def _read_node(node):
    if isinstance(node, h5py.Dataset):
        return _dataset_value(node)
    return _read_group(node)


def read_test_target(test_group) -> Any:
    """The value one test of a step compares against, from its group (a tuple where it holds
    several)."""
    names = list(test_group.keys())
    if len(names) == 1:
        return _read_node(test_group[names[0]])
    return tuple(_read_node(test_group[name]) for name in names)


def read_step_targets(h5_path, step_id, n_tests) -> list[Any]:
    """The `targets` list the official test program sees for one step."""
    out = []
    if not n_tests:         # nothing to read: a step without tests may have no entry, or no file
        return out
    with h5py.File(h5_path, 'r') as fh:
        for k in range(1, n_tests + 1):
            path = f'{step_id}/test{k}'
            if path not in fh:
                raise KeyError(f'{path} not found in {h5_path}')
            node = fh[path]
            if not isinstance(node, h5py.Group):
                raise FileNotFoundError(f'Path {path} not found in the file.')
            out.append(read_test_target(node))
    return out


def step_ids_in(h5_path) -> list[str]:
    """The step ids an HDF5 targets file holds."""
    with h5py.File(h5_path, 'r') as fh:
        return sorted(fh.keys())


# ---------------------------------------------------------------- writing
class UnstorableValue(TypeError):
    """A captured target has a type the layout cannot represent faithfully."""


def _names(count):
    # Zero-padding keeps name order equal to index order past nine items,
    # so the lexicographic reader returns them in the right order.
    width = len(str(count)) if count >= 10 else 1
    return [f'var{i:0{width}d}' for i in range(1, count + 1)]


def _write_sparse(parent, name, matrix):
    import scipy.sparse
    if isinstance(matrix, scipy.sparse.csc_matrix):
        matrix = matrix.tocsr()
    group = parent.create_group(name).create_group('sparse_matrix')
    group.create_dataset('data', data=matrix.data)
    group.create_dataset('shape', data=np.asarray(matrix.shape))
    if isinstance(matrix, scipy.sparse.coo_matrix):
        group.create_dataset('row', data=matrix.row)
        group.create_dataset('col', data=matrix.col)
        return
    group.create_dataset('indices', data=matrix.indices)
    group.create_dataset('indptr', data=matrix.indptr)
    if isinstance(matrix, scipy.sparse.bsr_matrix):
        group.create_dataset('blocksize', data=np.asarray(matrix.blocksize))


def _is_sparse(value):
    sparse = sys.modules.get('scipy.sparse')
    return sparse is not None and sparse.issparse(value)


def _write_scalar_or_array(parent, name, value):
    if isinstance(value, str):
        parent.create_dataset(name, data=value, dtype=h5py.string_dtype('utf-8'))
        return
    array = np.asarray(value)
    if array.dtype == object:
        raise UnstorableValue(f'cannot store {type(value).__name__} value as an array')
    parent.create_dataset(name, data=array if array.ndim else array[()])


def _write_dict(parent, name, mapping):
    group = parent.create_group(name)
    if not mapping:
        raise UnstorableValue('an empty dict reads back as None')
    first = next(iter(mapping))
    if str(first) in ('list', 'sparse_matrix'):
        raise UnstorableValue(f'a dict whose first key is {first!r} reads back as something else')
    for key, value in mapping.items():
        if _is_sparse(value):
            _write_sparse(group, str(key), value)
        elif isinstance(value, dict):
            raise UnstorableValue('nested dicts are not part of the layout')
        else:
            _write_scalar_or_array(group, str(key), value)


def write_value(parent, name, value) -> None:
    """Store one value under `parent[name]` so that the reader returns an equal value."""
    if isinstance(value, dict):
        _write_dict(parent, name, value)
    elif _is_sparse(value):
        _write_sparse(parent, name, value)
    elif isinstance(value, (list, tuple)):
        try:
            array = np.asarray(value)
        except ValueError:  # ragged
            array = None
        if array is not None and array.dtype != object:
            parent.create_dataset(name, data=array)
            return
        group = parent.create_group(name).create_group('list')
        for sub_name, item in zip(_names(len(value)), value):
            _write_scalar_or_array(group, sub_name, item)
    elif value is None:
        raise UnstorableValue('None cannot be stored')
    else:
        _write_scalar_or_array(parent, name, value)


def write_test_target(test_group, value, as_tuple=False) -> None:
    """`as_tuple`: store a tuple as several variables (read back as a tuple)."""
    if as_tuple and isinstance(value, tuple) and len(value) != 1:
        for name, item in zip(_names(len(value)), value):
            write_value(test_group, name, item)
    elif as_tuple and isinstance(value, tuple):
        write_value(test_group, 'var1', value[0])
    else:
        write_value(test_group, 'var1', value)


def write_step_targets(h5_file, step_id, targets, as_tuple=True) -> None:
    """Write one step's targets (a list, one entry per test) into an open h5py.File.

    An entry of `None` writes an empty test group (for tests that never use
    `target`; the official program still reads every test's group).
    """
    step_group = h5_file.require_group(step_id)
    for k, value in enumerate(targets, start=1):
        test_group = step_group.create_group(f'test{k}')
        if value is not None:
            write_test_target(test_group, value, as_tuple=as_tuple)
