import importlib.util
import os

import numpy as np  # noqa: F401  (imported by the official module)
import scipy.sparse  # noqa: F401
import sympy  # noqa: F401

_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', '..',
                     'opencompass_scicode', 'sandbox', 'runtime', 'scicode', 'compare', 'cmp.py')
_spec = importlib.util.spec_from_file_location('_scicode_cmp_impl', _path)
_impl = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_impl)

are_dicts_close = _impl.are_dicts_close
are_csc_matrix_close = _impl.are_csc_matrix_close
cmp_tuple_or_list = _impl.cmp_tuple_or_list
process_symbol_in_dict = _impl.process_symbol_in_dict
