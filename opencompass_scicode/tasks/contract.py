"""The task contract: everything a runner needs to launch and watch a task, and nothing more.

A partitioner writes one task file per task; its `task` entry is a TaskSpec:
the task's name, the command that runs it, its log, progress and output
paths, and the tasks it depends on. A runner launches `command` (a local
process, or a job on a cluster) and reads the exit status; it never looks at
what the task does. The task itself decides whether its outputs are already
complete (`-r`), and then exits with EXIT_SKIPPED without redoing anything.
"""
import signal
from dataclasses import asdict, dataclass, field
from typing import Optional

EXIT_OK = 0            # done: every output written
EXIT_FAILED = 1        # failed: the log says why (the runner marks the task failed)
EXIT_STEP_ERRORS = 3   # finished, but some steps could not be generated
EXIT_SKIPPED = 4       # outputs were complete already
EXIT_NO_SPACE = 5      # stopped: a file system it writes to is full (errors.NoSpaceError)
EXIT_INTERRUPTED = 130  # stopped by Ctrl-C or SIGTERM; what it finished is saved

STATES = ('done', 'errors', 'skipped', 'failed', 'interrupted', 'not run')

# Every task runs as `python -m TASK_PACKAGE TASK_FILE`. The module and class of each kind of
# task: tasks/__main__.py loads it, and a warm launcher imports the module ahead (runners/warm.py).
TASK_PACKAGE = 'opencompass_scicode.tasks'
TASK_CODE = {'infer': ('infer', 'InferTask'), 'merge': ('merge', 'MergePredictionsTask'),
             'eval': ('evaluate', 'EvalTask'), 'targets': ('targets', 'TargetsTask')}


def task_code(stage, action=None):
    """(module, class name) of a task of `stage`; an inference task with action 'merge' brings
    shards together."""
    kind = 'merge' if stage == 'infer' and action == 'merge' else stage
    if kind not in TASK_CODE:
        raise ValueError(f'unknown task stage {stage!r}')
    module, name = TASK_CODE[kind]
    return f'{TASK_PACKAGE}.{module}', name


@dataclass
class TaskSpec:
    name: str                       # e.g. 'infer/<model>', 'eval/<model>/<dataset>'
    stage: str                      # 'targets' | 'infer' | 'eval'
    command: list                   # argv that runs the task
    config_path: str                # the task file (the command's argument)
    log_path: str
    progress_path: str              # JSON written by the task (utils/progress.py)
    outputs: list = field(default_factory=list)
    depends_on: list = field(default_factory=list)   # names of tasks that must succeed first
    labels: dict = field(default_factory=dict)       # model / dataset, for tables and status
    env: dict = field(default_factory=dict)          # added to the runner's environment
    # cpus / gpus / procs / shares_cpu: asks of a cluster; api_only: the task only waits on an API
    # endpoint (an inference task of an API model without a server), so it takes no runner slot
    resources: dict = field(default_factory=dict)
    # Modules the task will import, that a warm launcher may import once for many tasks before
    # forking each (runners/warm.py): the task's own code and pure-Python SDKs, no GPU runtime.
    preload: list = field(default_factory=list)

    @classmethod
    def from_dict(cls, data):
        return cls(**{k: (list(v) if isinstance(v, tuple) else v) for k, v in dict(data).items()})

    def to_dict(self):
        return asdict(self)

    @property
    def takes_slot(self):
        """Whether the task counts against a runner's max_num_workers. A task that only waits on
        an API uses next to no CPU: every such task may run at once, bounded by its endpoint's
        request limits instead."""
        return not self.resources.get('api_only')


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
    def not_run(cls, spec, stopped):
        """`spec`'s task, never started: the tasks it depends on named in `stopped` did not finish."""
        if not stopped:
            raise ValueError(f'{spec.name}: a task is not run only because others did not finish')
        return cls(spec.name, 'not run', 0.0, spec.log_path, note=f'{", ".join(stopped)} did not finish',
                   labels=dict(spec.labels, stage=spec.stage))

    @property
    def ok(self):
        return self.state in ('done', 'skipped')

    @property
    def stopped_others(self):
        """Tasks depending on this one cannot run."""
        return self.state in ('failed', 'interrupted', 'not run')

    def record(self):
        """The task's entry in the run's status.json."""
        return {'state': self.state, 'duration_s': self.duration_s, 'log': self.log_path,
                'note': self.note, **self.labels}


def state_of(returncode):
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


def status_of(spec, returncode, duration_s, log_path=None):
    state = state_of(returncode)
    note = 'no space left on device' if returncode == EXIT_NO_SPACE else NOTES.get(state, '')
    return TaskStatus(spec.name, state, round(duration_s, 1), log_path or spec.log_path, returncode,
                      note, dict(spec.labels, stage=spec.stage))
