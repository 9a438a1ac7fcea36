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

It is a typed record (pydantic): a results file's steps are validated against
it when read (results/schema.py). Fields it does not name are kept as they
are (`extra='allow'`), so that a record written by a newer version, or one
with facts another part of the pipeline adds, passes through whole.
"""
from typing import Any, ClassVar, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, model_serializer

STATUSES = ('pass', 'fail', 'timeout', 'parse_error', 'eval_error', 'skipped')
# Why a step failed, in a word (decided in evaluation/verdict.py), in the order tables show them.
CATEGORIES = ('pass', 'no_code', 'refused', 'truncated', 'syntax_error', 'name_error', 'import_error',
              'wrong_value', 'exception', 'timeout', 'resource_limit', 'tamper', 'eval_error',
              'skipped')
# The fields a record may be built with by position, in this order (as verdict.py builds one).
_POSITIONAL = ('step_id', 'status', 'returncode', 'duration_s', 'stdout', 'stderr', 'message', 'violation')
# What a results file's step entry adds to the verdict (results/schema.py); not part of a verdict.
RESULTS_ONLY = ('answer', 'tests', 'tests_sha256', 'gold_code', 'gold_code_sha256')


class Record(BaseModel):
    """A typed record of a file: fields it does not name are kept, and the fields in `OPTIONAL`
    are written only when they say something (None, or False, is left out)."""

    model_config = ConfigDict(extra='allow')
    OPTIONAL: ClassVar[tuple] = ()

    @model_serializer(mode='wrap')
    def _written(self, handler: Any) -> dict:
        out = handler(self)
        for name in self.OPTIONAL:
            if name in out and (out[name] is None or out[name] is False):
                del out[name]
        return out


class StepRecord(Record):
    """A step's verdict. Built by keyword, or by position as `StepRecord(step_id, status, ...)`."""

    step_id: str = Field(description="the step, as SciCode numbers it ('13.5': problem 13, step 5)")
    status: Literal[STATUSES] = Field(description='what happened to it (categories below say why)')
    returncode: Optional[int] = Field(None, description="the step process's exit code")
    duration_s: float = Field(0.0, description='how long the step process ran')
    stdout: str = Field('', description='what it printed (capped: head and tail kept)')
    stderr: str = Field('', description='what it printed to stderr (capped: head and tail kept)')
    message: str = Field('', description='the verdict in a sentence')
    violation: Optional[str] = Field(None, description="what the step's code tried, if it tampered with its verdict")
    shared: bool = Field(False, description='verdict of the same program run by another task of this run')
    category: Optional[str] = Field(None, description='why it failed, in a word (evaluation/verdict.py)')
    error_type: Optional[str] = Field(None, description="the exception's class (`NameError: x` names what was "
                                                        "missing)")
    sample: Optional[int] = Field(None, description='which sample of its problem, when there are several (0-based)')
    tests_total: Optional[int] = Field(None, description="the step's test cases")
    tests_passed: Optional[int] = Field(None, description="how many pass (the failing test's later tests ran for "
                                                          "information)")
    tests_not_run: Optional[int] = Field(None, description='tests not reached')
    tests_note: Optional[str] = Field(None, description='why some tests were not run')
    failed_test: Optional[int] = Field(None, description='1-based: the test the verdict comes from')
    assertion: Optional[str] = Field(None, description='`test_case_k, line n: <source>` of the failing assert or '
                                                       'line')
    raised_at: Optional[str] = Field(None, description="`program.py, line n, in f: <source>`: the model's line "
                                                       "that raised")
    comparison: Optional[dict] = Field(None, description='what the failing assert compared (sandbox/comparisons.py)')
    timeout_stack: Optional[dict] = Field(None, description='where a timed-out step was: its own and its tests\' '
                                                            'frames at the kill (sandbox/tracebacks.py)')
    origin: Optional[dict] = Field(None, description='a failed step\'s own bug, or inherited from an earlier step '
                                                     '(evaluation/origin.py)')
    targets_digest: Optional[str] = Field(None, description='of the expected values its tests got (by value, '
                                                            'whatever numpy)')
    environment_verdicts: Optional[dict] = Field(
        None, description="scored in several library environments: {environment: {'status', 'category', "
                          "'message'}}, the record itself being the one the environment rule chose "
                          "(evaluation/environments.py)")

    OPTIONAL: ClassVar[tuple] = ('violation', 'shared', 'category', 'error_type', 'sample', 'tests_total',
                                'tests_passed', 'tests_not_run', 'tests_note', 'failed_test', 'assertion',
                                'raised_at', 'comparison', 'timeout_stack', 'origin', 'targets_digest',
                                'environment_verdicts')

    def __init__(self, *args: Any, **fields: Any) -> None:
        if len(args) > len(_POSITIONAL):
            raise TypeError(f'StepRecord takes at most {len(_POSITIONAL)} fields by position')
        fields.update(zip(_POSITIONAL, args))
        super().__init__(**fields)

    @property
    def passed(self) -> bool:
        """Whether the step passed."""
        return self.status == 'pass'

    @property
    def near_miss(self) -> bool:
        """A failed comparison off by less than 10x its tolerance (sandbox/values.py)."""
        return not self.passed and bool((self.comparison or {}).get('near_miss'))

    @classmethod
    def missing(cls, step_id: str, sample: Optional[int] = None) -> 'StepRecord':
        """The record of a step no prediction answers."""
        return cls(step_id, 'parse_error', message='no prediction for this step', category='no_code',
                   sample=sample)

    @classmethod
    def prefilled_failed(cls, step_id: str, sample: Optional[int] = None) -> 'StepRecord':
        """A prefilled step counted as failed (protocols whose scorer counts every sub-step, as the
        official inspect_ai task does: the model is never asked for it, so it never passes)."""
        return cls(step_id, 'fail', message='prefilled step: never generated, counted as failed '
                                            '(prefilled_steps=\'failed\')', category='no_code', sample=sample)

    @classmethod
    def skipped(cls, step_id: str, sample: Optional[int] = None) -> 'StepRecord':
        """The record of a prefilled step (its code is the benchmark's; never scored)."""
        return cls(step_id, 'skipped', message='prefilled step: code given by the benchmark, not scored',
                   category='skipped', sample=sample)

    def replace(self, **changes: Any) -> 'StepRecord':
        """A copy with `changes` (field: value) made."""
        return self.model_copy(update=changes)

    def to_dict(self) -> dict:
        """The step's entry in a results file (the optional fields only when they say something;
        extra fields as they came)."""
        return self.model_dump()

    @classmethod
    def from_dict(cls, data: dict, **changes: Any) -> 'StepRecord':
        """The verdict a step entry (of a results file, or a shared verdict) holds, with `changes`
        made; what a results file adds beside the verdict (its answer, tests) is left out."""
        return cls(**{k: v for k, v in {**data, **changes}.items() if k not in RESULTS_ONLY})


def environments_differ(step: dict) -> bool:
    """Whether a step's record (a results file's dict) has environments that gave different statuses."""
    return len({v.get('status') for v in (step.get('environment_verdicts') or {}).values()}) > 1
