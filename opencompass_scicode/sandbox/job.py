"""What the sandbox is handed: a step job and its limits, as typed records.

A `StepJob` is one program to run with its tests, the reader of their expected
values and its `Limits`. The limits travel with the job: each job carries its
own (a step pool serves several tasks, each with the evaluator settings of
its own), and nothing on the way fills in a limit the job does not carry. So
the step timeout is one field, `Limits.timeout`, from the evaluator's entry
(evaluation/evaluator.py holds its one default) to the worker that kills the
step when it runs out (worker_watch.py reads it from the job's wire form,
`StepJob.payload`).
"""
from typing import Any, Callable, Optional

from pydantic import BaseModel, ConfigDict, Field

MB = 1024 * 1024


class Limits(BaseModel):
    """What one step may use, and which sandbox layers it runs under."""

    model_config = ConfigDict(frozen=True, extra='forbid')

    timeout: float = Field(gt=0, description='seconds the step may run before it is killed')
    memory_mb: Optional[int] = Field(8192, ge=1, description='address space per step, beyond what is preloaded')
    max_processes: Optional[int] = Field(64, ge=1)
    max_file_mb: Optional[int] = Field(1024, ge=1)
    max_output_bytes: int = Field(64 * 1024, ge=1, description='of stdout and of stderr, each')
    isolate_network: bool = True
    landlock: bool = True
    drop_privileges: bool = True

    def for_job(self) -> dict:
        """The limits as the worker reads them (byte counts; None: no limit)."""
        return {'timeout': self.timeout,
                'memory_bytes': self.memory_mb * MB if self.memory_mb else None,
                'max_processes': self.max_processes,
                'max_file_bytes': self.max_file_mb * MB if self.max_file_mb else None,
                'max_output_bytes': self.max_output_bytes,
                'isolate_network': self.isolate_network, 'landlock': self.landlock,
                'drop_privileges': self.drop_privileges}


def default_limit(name: str) -> Any:
    """The default of one of Limits' fields (the evaluator's options take theirs from here)."""
    return Limits.model_fields[name].default


class StepJob(BaseModel):
    """What to run and with what: the sandbox knows nothing of programs or targets files."""

    model_config = ConfigDict(frozen=True, extra='forbid')

    step_id: str
    program: str = Field(description='everything before the tests (dependencies, earlier steps, this step)')
    tests: list[str]
    dependencies: str
    limits: Limits
    # Returns the expected value of each test; called on the host (maybe ahead, on another thread).
    targets: Optional[Callable[[], list]] = None
    preamble: str = Field('', description='run first, in a namespace of its own (e.g. a compatibility shim)')
    guarded_names: tuple[str, ...] = Field((), description='names the dependency lines bind: the tests rely '
                                                           'on them as bound')
    modules: tuple[str, ...] = Field((), description='what the dependencies import: fast workers import it once')
    threads: Optional[int] = Field(None, description="threads for numerical libraries; None: the worker's share")
    # After the first failing test (the verdict): summarise what its assert compared, and run the
    # remaining tests for information for at most this many seconds (and no longer than the step
    # took until then). See forensics.py.
    forensics: bool = True
    later_tests_s: float = Field(10.0, ge=0)

    def replace(self, **changes: Any) -> 'StepJob':
        """A copy with `changes` (field: value) made."""
        return self.model_copy(update=changes)

    def payload(self, nonce: str, targets: bytes, targets_digest: str = '') -> dict:
        """The job as a worker reads it (sandbox/worker.py): plain data, the targets pickled (and
        the digest of their values, which the run record keeps)."""
        return {'step_id': self.step_id, 'program': self.program, 'tests': list(self.tests),
                'dependencies': self.dependencies, 'targets': targets, 'targets_digest': targets_digest,
                'preamble': self.preamble, 'guarded_names': list(self.guarded_names),
                'modules': list(self.modules), 'nonce': nonce, 'threads': self.threads,
                'forensics': self.forensics, 'later_tests_s': self.later_tests_s if self.forensics else 0.0,
                'limits': self.limits.for_job()}
