"""Scoring environments: named library versions a step can be scored in.

A step's verdict can depend on the libraries that run it: `scipy.integrate.simps` is gone from
SciPy 1.14, `np.float_` and `np.NaN` from NumPy 2.0, so code that was right in 2024 fails today.
Each environment is a requirement list shipped with the package (requirements/<name>.txt):

- `current`: this interpreter and its libraries; nothing to build.
- `2024`: NumPy 1.26.4, SciPy 1.13.1 (still with simps), SymPy 1.13.3, h5py 3.12.1, the pins of
  SciCode-Verified's 2024 grading environment.

An environment other than `current` is built on first use into the data cache
(`<data dir>/cache/environments/<name>-<key>/`, a virtualenv of this interpreter with its
requirements installed by pip, pip's output shown), its versions checked against the pins, and
reused from then on. Offline (or when pip cannot reach a package index) the run stops with exit
2 naming the one command that prepares it:

    python -m opencompass_scicode.environments 2024 --data-dir data/scicode

The step pool's workers for an environment run its interpreter with this package's sandbox on
their path: the same sandbox and forensics, only the libraries differ.
"""
from .build import (CURRENT, LIBRARIES, NAMES, Environment, EnvironmentMissing, check_names, ensure, is_built,
                    prepare_command, requirements)

__all__ = ['CURRENT', 'LIBRARIES', 'NAMES', 'Environment', 'EnvironmentMissing', 'check_names', 'ensure',
           'is_built', 'prepare_command', 'requirements']
