"""OpenCompass-style evaluation pipeline for the SciCode benchmark.

Kept import-light on purpose: test processes import the targets reader from
this package, and they should not pay for the rest of it.
"""

__version__ = '0.1.0'
