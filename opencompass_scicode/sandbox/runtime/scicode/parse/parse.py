"""`process_hdf5_to_tuple` for SciCode tests; reads the run's targets file.

The harness names the targets file in SCICODE_H5_PATH.
"""
import os


def process_hdf5_to_tuple(step_id, test_num, h5py_file=None):
    from opencompass_scicode.targets.h5format import read_step_targets   # h5py only when used
    path = h5py_file or os.environ.get('SCICODE_H5_PATH')
    if not path:
        raise FileNotFoundError('SCICODE_H5_PATH is not set: no test targets available')
    return read_step_targets(path, step_id, test_num)
