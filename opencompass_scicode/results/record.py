"""One step's verdict: what evaluation decides, metrics count, results files keep and reports show.

A record says what happened to the step (`status`), why (`message`, and
`violation` when the step's code tried to fake its verdict) and what the step
process left behind (exit code, time, stdout and stderr, capped). A step that
failed in a test also says which (`failed_test` of `tests_total`), on which line
(`assertion`, and `raised_at`: the model's own line for an exception), what the
failing assert compared (`comparison`) and how many of its tests pass
(`tests_passed`; `tests_not_run` were not reached, `tests_note` says why). A step stopped for
its time limit says where it was (`timeout_stack`: the model's and the test's frames at that
moment). Where gold code of the earlier steps was at hand, a failed step says whether it fails
on its own or because of an earlier step (`origin`, evaluation/origin.py).
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
    tests_total: Optional[int] = None
    tests_passed: Optional[int] = None   # the failing test's later tests ran for information
    tests_not_run: Optional[int] = None
    tests_note: Optional[str] = None     # why some tests were not run
    failed_test: Optional[int] = None    # 1-based: the test the verdict comes from
    assertion: Optional[str] = None      # `test_case_k, line n: <source>` of the failing assert or line
    raised_at: Optional[str] = None      # `program.py, line n, in f: <source>`: the model's line that raised
    comparison: Optional[dict] = None    # what the failing assert compared (sandbox/comparisons.py)
    timeout_stack: Optional[dict] = None  # where a timed-out step was (sandbox/tracebacks.py, hung_stack)
    origin: Optional[dict] = None        # own bug or inherited from an earlier step (evaluation/origin.py)
    targets_digest: Optional[str] = None  # of the expected values the step's tests got (by value, any numpy)
    # scored in several library environments: {environment: {'status', 'category', 'message'}}, the
    # record itself being the one its environment rule chose (evaluation/environments.py)
    environment_verdicts: Optional[dict] = None

    OPTIONAL = ('violation', 'shared', 'category', 'error_type', 'sample', 'tests_total', 'tests_passed',
                'tests_not_run', 'tests_note', 'failed_test', 'assertion', 'raised_at', 'comparison',
                'timeout_stack', 'origin', 'targets_digest', 'environment_verdicts')

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f'unknown step status {self.status!r}; one of {", ".join(STATUSES)}')

    @property
    def passed(self):
        return self.status == 'pass'

    @property
    def near_miss(self):
        """A failed comparison off by less than 10x its tolerance (sandbox/values.py)."""
        return not self.passed and bool((self.comparison or {}).get('near_miss'))

    @classmethod
    def missing(cls, step_id, sample=None):
        return cls(step_id, 'parse_error', message='no prediction for this step', category='no_code',
                   sample=sample)

    @classmethod
    def prefilled_failed(cls, step_id, sample=None):
        """A prefilled step counted as failed (protocols whose scorer counts every sub-step, as the
        official inspect_ai task does: the model is never asked for it, so it never passes)."""
        return cls(step_id, 'fail', message='prefilled step: never generated, counted as failed '
                                            '(prefilled_steps=\'failed\')', category='no_code', sample=sample)

    @classmethod
    def skipped(cls, step_id, sample=None):
        return cls(step_id, 'skipped', message='prefilled step: code given by the benchmark, not scored',
                   category='skipped', sample=sample)

    def to_dict(self):
        """The step's entry in a results file (the optional fields only when they say something)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        for name in self.OPTIONAL:
            if out[name] is None or out[name] is False:
                del out[name]
        return out

    @classmethod
    def from_dict(cls, data, **changes):
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in {**data, **changes}.items() if k in names})


def environments_differ(step):
    """Whether a step's record (a results file's dict) has environments that gave different statuses."""
    return len({v.get('status') for v in (step.get('environment_verdicts') or {}).values()}) > 1
