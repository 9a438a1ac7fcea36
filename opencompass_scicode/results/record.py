"""One step's verdict: what evaluation decides, metrics count, results files keep and reports show.

A record says what happened to the step (`status`), why (`message`, and
`violation` when the step's code tried to fake its verdict) and what the step
process left behind (exit code, time, stdout and stderr, capped).
"""
from dataclasses import dataclass, fields
from typing import Optional

STATUSES = ('pass', 'fail', 'timeout', 'parse_error', 'eval_error', 'skipped')


@dataclass
class StepRecord:
    step_id: str
    status: str                     # one of STATUSES
    returncode: Optional[int] = None
    duration_s: float = 0.0
    stdout: str = ''
    stderr: str = ''
    message: str = ''
    violation: Optional[str] = None  # what the step's code tried, if it tampered with its verdict
    shared: bool = False             # verdict of the same program run by another task of this run

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f'unknown step status {self.status!r}; one of {", ".join(STATUSES)}')

    @property
    def passed(self):
        return self.status == 'pass'

    @classmethod
    def missing(cls, step_id):
        return cls(step_id, 'parse_error', message='no prediction for this step')

    @classmethod
    def skipped(cls, step_id):
        return cls(step_id, 'skipped', message='prefilled step: code given by the benchmark, not scored')

    def to_dict(self):
        """The step's entry in a results file (`violation` and `shared` only when they say something)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        if out['violation'] is None:
            del out['violation']
        if not out['shared']:
            del out['shared']
        return out

    @classmethod
    def from_dict(cls, data, **changes):
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in {**data, **changes}.items() if k in names})
