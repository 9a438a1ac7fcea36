"""A step's targets as a value that reads them when called.

Step jobs carry one instead of the targets themselves: they are read only when
the step is about to run (and h5py imported only then). It is plain data, so a
step pool in another process (pool/server.py) can be handed it and read the
targets there.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class StepTargets:
    path: str
    step_id: str
    n_tests: int

    def __call__(self):
        from .h5format import read_step_targets
        return read_step_targets(self.path, self.step_id, self.n_tests)
