import os

import h5py  # noqa: F401  (imported by the official module)
import numpy as np  # noqa: F401
import scipy  # noqa: F401
from sympy import Symbol  # noqa: F401

from opencompass_scicode.targets.h5format import read_step_targets


def process_hdf5_to_tuple(step_id, test_num, h5py_file=None):
    return read_step_targets(h5py_file or os.environ['SCICODE_H5_PATH'], step_id, test_num)
