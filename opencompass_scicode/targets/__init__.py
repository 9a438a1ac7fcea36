"""Test targets: the official HDF5 file or regenerated ones; where they are and how to read them.

Light on purpose: nothing is imported here, so a process that needs one module
of this package does not pay for the others.
"""
__all__ = []
