"""Test targets: the official HDF5 file or regenerated ones.

Light on purpose: test processes import `targets.h5format` through here.
"""
