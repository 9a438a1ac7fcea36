"""OpenCompass-style evaluation pipeline for the SciCode benchmark.

Kept import-light on purpose: sandbox workers and task processes import single
modules of this package, and should not pay for the rest of it.
"""

__version__ = '0.1.0'

__all__ = ['__version__']
