"""One step's verdict: what evaluation decides, metrics count, results files keep and reports show.

A record says what happened to the step (`status`), why (`message`, and
`violation` when the step's code tried to fake its verdict) and what the step
process left behind (exit code, time, stdout and stderr, capped).
"""
from dataclasses import dataclass, fields
from typing import Optional

STATUSES = ('pass', 'fail', 'timeout', 'parse_error', 'eval_error', 'skipped')
# Why a step failed, in a word (decided in evaluation/verdict.py), in the order tables show them.
CATEGORIES = ('pass', 'no_code', 'truncated', 'syntax_error', 'name_error', 'import_error',
              'wrong_value', 'exception', 'timeout', 'resource_limit', 'tamper', 'eval_error',
              'skipped')


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
    category: Optional[str] = None   # why it failed, in a word (evaluation/verdict.py)
    error_type: Optional[str] = None  # the exception's class (`NameError: x` names what was missing)
    sample: Optional[int] = None     # which sample of its problem, when there are several (0-based)

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f'unknown step status {self.status!r}; one of {", ".join(STATUSES)}')

    @property
    def passed(self):
        return self.status == 'pass'

    @classmethod
    def missing(cls, step_id, sample=None):
        return cls(step_id, 'parse_error', message='no prediction for this step', category='no_code',
                   sample=sample)

    @classmethod
    def skipped(cls, step_id, sample=None):
        return cls(step_id, 'skipped', message='prefilled step: code given by the benchmark, not scored',
                   category='skipped', sample=sample)

    def to_dict(self):
        """The step's entry in a results file (the optional fields only when they say something)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        for name in ('violation', 'shared', 'category', 'error_type', 'sample'):
            if out[name] is None or out[name] is False:
                del out[name]
        return out

    @classmethod
    def from_dict(cls, data, **changes):
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in {**data, **changes}.items() if k in names})
