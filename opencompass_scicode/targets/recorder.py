"""Used inside a regeneration process: collects each test's value, then writes them.

A test that records nothing gets an empty group, which the reader turns into
an empty tuple; the official program still reads a group for every test.
"""
import h5py

from .h5format import write_step_targets


class TargetRecorder:
    def __init__(self, out_path, step_id, n_tests):
        self.out_path = out_path
        self.step_id = step_id
        self.values = [None] * n_tests
        self.current = None

    def begin(self, index) -> None:
        """Test `index` begins: the values recorded next are its."""
        self.current = index

    def record(self, value) -> None:
        """Record `value`, the one the running test compares against."""
        self.values[self.current] = value

    def finish(self) -> None:
        """Write what was recorded to the targets file."""
        with h5py.File(self.out_path, 'w') as fh:
            write_step_targets(fh, self.step_id, self.values, as_tuple=True)
