"""The task contract: everything a runner needs to launch and watch a task, and nothing more.

A partitioner writes one task file per task; its `task` entry is a TaskSpec:
the task's name, the command that runs it, its log, progress and output
paths, and the tasks it depends on. A runner launches `command` (a local
process, or a job on a cluster) and reads the exit status; it never looks at
what the task does. The task itself decides whether its outputs are already
complete (`-r`), and then exits with EXIT_SKIPPED without redoing anything.
A task that fails, or ends with steps in error, says why on a line of its log
starting `error: ` (CAUSE); `failure_cause` reads it back for the terminal.

Beside the spec, a task file holds the task's work: typed records per kind of
task (`InferTaskFile`, `MergeTaskFile`, `EvalTaskFile`, `TargetsTaskFile`),
read with `read_task_file`. The model and dataset entries in them are the
config's, checked when the config was (config/validate.py), types as import
paths.
"""
import json
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import UserFacingError

EXIT_OK = 0            # done: every output written
EXIT_FAILED = 1        # failed: the log says why (the runner marks the task failed)
EXIT_STEP_ERRORS = 3   # finished, but some steps have no answer (not generated, or their request refused)
EXIT_SKIPPED = 4       # outputs were complete already
EXIT_NO_SPACE = 5      # stopped: a file system it writes to is full (errors.NoSpaceError)
EXIT_INTERRUPTED = 130  # stopped by Ctrl-C or SIGTERM; what it finished is saved

STATES = ('done', 'errors', 'skipped', 'failed', 'interrupted', 'not run')

# Every task runs as `python -m TASK_PACKAGE TASK_FILE`. The module and class of each kind of
# task: tasks/__main__.py loads it, and a warm launcher imports the module ahead (runners/warm.py).
TASK_PACKAGE = 'opencompass_scicode.tasks'
TASK_CODE = {'infer': ('infer', 'InferTask'), 'merge': ('merge', 'MergePredictionsTask'),
             'eval': ('evaluate', 'EvalTask'), 'targets': ('targets', 'TargetsTask')}


def task_code(stage: str, action: Optional[str] = None) -> tuple:
    """(module, class name) of a task of `stage`; an inference task with action 'merge' brings
    shards together."""
    module, name = TASK_CODE[task_kind(stage, action)]
    return f'{TASK_PACKAGE}.{module}', name


class TaskSpec(BaseModel):
    """What a runner needs of a task: how to start it, where it logs, what it writes, after what."""

    model_config = ConfigDict(extra='forbid')

    name: str = Field(description="e.g. 'infer/<model>', 'eval/<model>/<dataset>'")
    stage: Literal['targets', 'infer', 'eval']
    command: list[str] = Field(description='argv that runs the task')
    config_path: str = Field(description="the task file (the command's argument)")
    log_path: str
    progress_path: str = Field(description='JSON written by the task (utils/progress.py)')
    outputs: list[str] = Field(default_factory=list)
    depends_on: list[str] = Field(default_factory=list, description='names of tasks that must succeed first')
    labels: dict[str, Any] = Field(default_factory=dict, description='model / dataset, for tables and status')
    env: dict[str, str] = Field(default_factory=dict, description="added to the runner's environment")
    resources: dict[str, Any] = Field(default_factory=dict,
                                      description='cpus / gpus / procs / shares_cpu: asks of a cluster; '
                                                  'api_only: the task only waits on an API endpoint (an '
                                                  'inference task of an API model without a server), so it '
                                                  'takes no runner slot')
    # Modules the task will import, that a warm launcher may import once for many tasks before
    # forking each (runners/warm.py): the task's own code and pure-Python SDKs, no GPU runtime.
    preload: list[str] = Field(default_factory=list)

    @classmethod
    def from_dict(cls, data: dict) -> 'TaskSpec':
        """The spec a task file's `task` entry holds."""
        return cls.model_validate(dict(data))

    def to_dict(self) -> dict:
        """The spec as a task file's `task` entry."""
        return self.model_dump()

    @property
    def takes_slot(self) -> bool:
        """Whether the task counts against a runner's max_num_workers. A task that only waits on
        an API uses next to no CPU: every such task may run at once, bounded by its endpoint's
        request limits instead."""
        return not self.resources.get('api_only')


class TaskFile(BaseModel):
    """What every task file holds: the spec, and the run it belongs to."""

    model_config = ConfigDict(extra='forbid')

    task: TaskSpec
    work_dir: str
    timestamp: str


class InferTaskFile(TaskFile):
    """One model's inference over its datasets (a shard: some problems of each, `sample_ids`)."""
    model: dict[str, Any] = Field(description="the model's config entry (secrets moved to the environment)")
    datasets: list[dict[str, Any]]
    shard: Optional[str] = None
    eager_eval: bool = False
    discard_stale: bool = False


class MergeTaskFile(TaskFile):
    """Brings the shards' predictions part files of one model together."""
    action: Literal['merge']
    model_abbr: str
    datasets: list[dict[str, Any]]
    shards: list[str]


class EvalTaskFile(TaskFile):
    """Scoring of one model on one dataset (a shard, or the merge of the shards' parts)."""
    model_abbr: str
    dataset: dict[str, Any]
    shard: Optional[str] = None
    merge_shards: list[str] = Field(default_factory=list)


class TargetsTaskFile(TaskFile):
    """Regenerating one dataset's validation targets."""
    dataset: dict[str, Any]


TASK_FILES = {'infer': InferTaskFile, 'merge': MergeTaskFile, 'eval': EvalTaskFile, 'targets': TargetsTaskFile}
AnyTaskFile = Union[InferTaskFile, MergeTaskFile, EvalTaskFile, TargetsTaskFile]


class TaskFileError(UserFacingError):
    """A task file that is not one this version writes."""


def task_kind(stage: str, action: Optional[str] = None) -> str:
    """'infer', 'merge', 'eval' or 'targets': an inference task with action 'merge' brings shards together."""
    kind = 'merge' if stage == 'infer' and action == 'merge' else stage
    if kind not in TASK_CODE:
        raise ValueError(f'unknown task stage {stage!r}')
    return kind


def task_file(data: dict, path: Union[str, Path, None] = None) -> AnyTaskFile:
    """The typed record of a task file's content (TaskFileError naming the file and key if it is not one)."""
    try:
        kind = task_kind(data['task']['stage'], data.get('action'))
        return TASK_FILES[kind].model_validate(data)
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, ValidationError):
            why = '; '.join(f'{".".join(map(str, e["loc"]))}: {e["msg"]}' for e in exc.errors()[:3])
        else:
            why = f'no task stage ({exc})' if isinstance(exc, (KeyError, TypeError)) else str(exc)
        raise TaskFileError(f'{path or "task file"}: not a task file of this version: {why}\n'
                            f'  fix: plan the run again (run.py CONFIG -r) to write its task files anew') from None


def read_task_file(path: Union[str, Path]) -> AnyTaskFile:
    """The task file at `path`, typed."""
    with open(path, encoding='utf-8') as fh:
        return task_file(json.load(fh), path)


@dataclass
class TaskStatus:
    name: str
    state: str            # one of STATES
    duration_s: float
    log_path: str
    returncode: Optional[int] = None
    note: str = ''
    labels: dict = field(default_factory=dict)

    @classmethod
    def not_run(cls, spec, stopped) -> 'TaskStatus':
        """`spec`'s task, never started: the tasks it depends on named in `stopped` did not finish."""
        if not stopped:
            raise ValueError(f'{spec.name}: a task is not run only because others did not finish')
        return cls(spec.name, 'not run', 0.0, spec.log_path, note=f'{", ".join(stopped)} did not finish',
                   labels=dict(spec.labels, stage=spec.stage))

    @property
    def ok(self) -> bool:
        """Whether the task ended done or skipped."""
        return self.state in ('done', 'skipped')

    @property
    def stopped_others(self) -> bool:
        """Tasks depending on this one cannot run."""
        return self.state in ('failed', 'interrupted', 'not run')

    def record(self) -> dict[str, Any]:
        """The task's entry in the run's status.json."""
        return {'state': self.state, 'duration_s': self.duration_s, 'log': self.log_path,
                'note': self.note, **self.labels}


def state_of(returncode) -> str:
    """A task's state from its exit code: done, errors, skipped, interrupted or failed."""
    if returncode == EXIT_OK:
        return 'done'
    if returncode == EXIT_STEP_ERRORS:
        return 'errors'
    if returncode == EXIT_SKIPPED:
        return 'skipped'
    if returncode in (EXIT_INTERRUPTED, -signal.SIGINT):
        return 'interrupted'
    return 'failed'


NOTES = {'skipped': 'outputs complete'}


def _signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return f'signal {number}'


def status_of(spec, returncode, duration_s, log_path=None) -> TaskStatus:
    """The TaskStatus of `spec`'s task from how its process ended."""
    state = state_of(returncode)
    note = 'no space left on device' if returncode == EXIT_NO_SPACE else NOTES.get(state, '')
    if returncode is not None and returncode < 0 and state == 'failed':
        note = f'killed by {_signal_name(-returncode)}'      # from outside: an operator, the OOM killer
    return TaskStatus(spec.name, state, round(duration_s, 1), log_path or spec.log_path, returncode,
                      note, dict(spec.labels, stage=spec.stage))


CAUSE = 'error: '
CAUSE_CHARS = 400          # of one line on the terminal; the log keeps it whole


def failure_cause(log_path) -> list[str]:
    """Why a task failed or ended with errors, in at most two lines of its log: its last `error: `
    line (and the `fix:` line after it), else the last line of a traceback; [] if the log says
    neither (or cannot be read)."""
    try:
        with open(log_path, 'rb') as fh:
            fh.seek(max(0, Path(log_path).stat().st_size - 64 * 1024))
            lines = fh.read().decode('utf-8', errors='replace').splitlines()
    except OSError:
        return []
    # the task's own lines carry its name first ("[infer/m] error: ..."): the cause follows the prefix
    said = [i for i, line in enumerate(lines) if line.startswith(CAUSE) or f'] {CAUSE}' in line[:200]]
    if said:
        first = lines[said[-1]]
        cause = [first[first.index(CAUSE) + len(CAUSE):]]
        after = lines[said[-1] + 1] if said[-1] + 1 < len(lines) else ''
        if after.strip().startswith('fix:'):
            cause.append(after.strip())
    elif any(line.startswith('Traceback') for line in lines):
        cause = [next(line for line in reversed(lines) if line.strip())]
    else:
        return []
    # a server's or a program's words: no terminal control sequences reach the screen
    cause = [''.join(c if c.isprintable() else '?' for c in line) for line in cause]
    return [line if len(line) <= CAUSE_CHARS else line[:CAUSE_CHARS] + '...' for line in cause]
