"""Runs each task as one Slurm job, with the same live progress as LocalRunner.

Jobs are submitted with `sbatch`, not `srun`: a batch job outlives the
terminal and run.py itself (a lost connection does not lose the work), its
output goes straight to the task's log, and no process on the login node
holds a slot per task. The job script runs the task's command and writes its
exit status next to the log, so that how the task ended is known whether or
not the cluster keeps accounting (`sacct`): jobs are watched with `squeue`,
which lists finished jobs for a few minutes (MinJobAge), then `sacct` where
it works, then that file.

An inference job whose model needs no GPU and no server of its own (an API
model) spends its time waiting for answers. All of them are submitted at once
(they hold no slot of max_num_workers), each asking for one CPU and no GPU,
with `--oversubscribe` and a small memory ask (`shared_mem`), so that a partition
that allows it (OverSubscribe=YES) runs many of them on one CPU instead of
queueing them one per CPU. Such a job therefore does not score problems as
they finish (early evaluation): that needs CPUs and memory it does not own.
The evaluation jobs score, on CPUs of their own.

A job that ends without its task having ended (cancelled by someone else,
node failure, preemption, time limit, out of memory) is submitted again, up
to `retry` times; the task continues from what it saved. Ctrl-C or SIGTERM
on run.py cancels every job it submitted.
"""
import os
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError
from ..tasks.contract import EXIT_FAILED, TaskStatus, status_of
from ..utils.checks import check_number
from ..utils.writes import write_whole
from ..registry import register
from .base import BaseRunner

ENDED_BY_TASK = {'COMPLETED', 'FAILED'}
# Ends that say nothing about the task: it was stopped from outside, so it may run again.
STOPPED_FROM_OUTSIDE = {'CANCELLED', 'TIMEOUT', 'NODE_FAIL', 'OUT_OF_MEMORY', 'PREEMPTED', 'BOOT_FAIL',
                        'DEADLINE'}
ENDED = ENDED_BY_TASK | STOPPED_FROM_OUTSIDE
COMMANDS = ('sbatch', 'squeue', 'scancel', 'sinfo')


@dataclass
class _Job:
    spec: object
    job_id: str
    started: float
    attempt: int = 1
    state: str = 'PENDING'
    history: list = field(default_factory=list)     # ['12 CANCELLED', ...] of earlier attempts
    ended_at: float = None                          # when it was first seen ended


@register
class SlurmRunner(BaseRunner):
    """partition, qos, time ('HH:MM:SS', '2-00:00:00', minutes), mem ('16G'): as sbatch takes them;
    cpus_per_task: for every task but the inference of API models, which asks for one (default:
    what the task asks for, e.g. an evaluator's max_workers, else 1); GPUs come from a model's
    run_cfg=dict(num_gpus=...); shared_mem:
    the memory asked by jobs that may share CPUs (inference without GPU or server; `mem`, when
    given, applies to every job instead); extra_args: more sbatch options; retry: submissions
    again of a job stopped from outside; max_num_workers: jobs in flight at once, besides the
    inference jobs of API models (all submitted at once)."""

    # A task's exit file is looked for every turn (a stat); Slurm is asked once a second.
    poll_interval = 0.25
    squeue_interval = 1.0
    early_evaluation = False       # see the module's docstring

    def __init__(self, partition: str, qos: str = None, time: str = None, mem: str = None,
                 cpus_per_task: int = None, shared_mem: str = '1G', extra_args: list = (),
                 retry: int = 2, max_num_workers: int = 32, debug: bool = False):
        super().__init__(max_num_workers, debug)
        if not isinstance(partition, str) or not partition:
            raise ConfigError('SlurmRunner needs a partition', key='partition',
                              fix='pass -p PARTITION with --slurm, or partition=... in the runner entry')
        check_number('retry', retry, whole=True, at_least=0, example=2)
        self.partition = partition
        self.qos = qos
        self.time = None if time is None else str(time)
        self.mem = mem
        self.shared_mem = shared_mem
        self.cpus_per_task = cpus_per_task
        self.extra_args = [str(a) for a in extra_args]
        self.retry = retry
        self._states = {}          # the latest squeue answer; None when it gave none
        self._asked_at = None

    # ------------------------------------------------------------ before anything is submitted
    def check(self) -> None:
        """Check before any work that Slurm's commands exist and the partition is there; ConfigError
        otherwise."""
        missing = [c for c in COMMANDS if shutil.which(c) is None]
        if missing:
            raise ConfigError(f'--slurm: {", ".join(missing)} not found on this machine; Slurm\'s '
                                  f'client commands are needed to submit and watch jobs',
                                  fix='run from a machine of the cluster (a login node), or without --slurm')
        out = _run(['sinfo', '-h', '-o', '%P'])
        if out.returncode != 0:
            raise ConfigError(f'--slurm: sinfo failed: {(out.stderr or out.stdout).strip()}',
                                  fix='check that the cluster\'s controller is reachable (sinfo)')
        partitions = [p.strip().rstrip('*') for p in out.stdout.split()]
        if self.partition not in partitions:
            raise ConfigError(f'Slurm has no partition {self.partition!r}', key='partition',
                              fix=f'use one of: {", ".join(partitions) or "(none listed by sinfo)"}')

    # ------------------------------------------------------------ submission
    def sbatch_args(self, spec) -> list[str]:
        """The sbatch command line of `spec`'s job."""
        res = spec.resources or {}
        shares = bool(res.get('shares_cpu'))
        # a job that only waits on an API needs one CPU, whatever the other jobs are given
        cpus = 1 if res.get('api_only') else self.cpus_per_task or res.get('cpus') or 1
        args = ['sbatch', '--parsable', f'--job-name={spec.name}', f'--partition={self.partition}',
                '--ntasks=1', f'--cpus-per-task={cpus}', f'--output={spec.log_path}', '--open-mode=append',
                f'--chdir={os.getcwd()}']
        if shares:
            args.append('--oversubscribe')
        if self.qos:
            args.append(f'--qos={self.qos}')
        if self.time:
            args.append(f'--time={self.time}')
        mem = self.mem or (self.shared_mem if shares else None)
        if mem:
            args.append(f'--mem={mem}')
        if res.get('gpus'):
            args.append(f'--gres=gpu:{res["gpus"]}')
        return args + self.extra_args + [str(_script_path(spec))]

    def describe(self, spec) -> str:
        return shlex.join(self.sbatch_args(spec))

    def _script(self, spec):
        exports = ''.join(f'export {k}={shlex.quote(str(v))}\n' for k, v in spec.env.items())
        exit_file = shlex.quote(str(_exit_path(spec)))
        return (f'#!/bin/bash\n# {spec.name}: a task of opencompass-scicode (its exit status goes to the '
                f'file below, read by the runner)\n{exports}{shlex.join(spec.command)}\nrc=$?\n'
                f'echo "$rc" > {exit_file}\nexit "$rc"\n')

    def _submit(self, spec):
        script = _script_path(spec)
        write_whole(script, self._script(spec))          # a full disk: one NoSpaceError naming it
        _exit_path(spec).unlink(missing_ok=True)
        out = _run(self.sbatch_args(spec))
        if out.returncode != 0:
            raise ConfigError(f'sbatch refused {spec.name}: {(out.stderr or out.stdout).strip()}',
                                  fix='check the runner options (partition, qos, time, mem, extra_args)')
        return out.stdout.strip().split(';')[0]

    def start(self, spec, parallel) -> '_Job':
        return _Job(spec, self._submit(spec), time.monotonic())

    # ------------------------------------------------------------ watching
    def where(self, job) -> str:
        again = f' (attempt {job.attempt})' if job.attempt > 1 else ''
        return f'job {job.job_id} {job.state}{again}'

    def refresh(self, jobs) -> None:
        """One `squeue` for every job in flight, at most once per squeue_interval."""
        now = time.monotonic()
        if self._asked_at is None or now - self._asked_at >= self.squeue_interval:
            self._states = _squeue([j.job_id for j in jobs]) if jobs else {}
            self._asked_at = now

    def poll(self, job) -> TaskStatus | None:
        code = _exit_code(job.spec)
        if code is not None:
            # The job script's last act: the task has ended (the file is removed before every
            # submission), whatever Slurm says until it has cleaned up the job.
            job.state = 'COMPLETED' if code == 0 else 'FAILED'
            return self._ended(job, code)
        if self._states is None:
            job.state = 'UNKNOWN (no answer from squeue)'
            return None          # a controller that is restarting is no reason to submit again
        # Forgotten by the controller, no accounting, and no exit file: the task did not end.
        state = (self._states.get(job.job_id) or _scontrol_state(job.job_id) or _sacct_state(job.job_id)
                 or 'NODE_FAIL')
        job.state = state
        if state not in ENDED:
            return None
        if state in ENDED_BY_TASK:
            # The script ended, its exit file is not there yet: allow a shared file system a moment.
            job.ended_at = job.ended_at or time.monotonic()
            if time.monotonic() - job.ended_at < 10:
                return None
        if job.attempt <= self.retry:
            job.history.append(f'{job.job_id} {state}')
            job.job_id, job.attempt, job.state, job.ended_at = self._submit(job.spec), job.attempt + 1, 'PENDING', None
            return None
        return self._ended(job, None)

    def _ended(self, job, code):
        duration = time.monotonic() - job.started
        how = ' -> '.join(job.history + [f'{job.job_id} {job.state}'])
        if code is None:
            return TaskStatus(job.spec.name, 'failed', round(duration, 1), job.spec.log_path, EXIT_FAILED,
                              f'job {how}, after {job.attempt} attempt(s)',
                              dict(job.spec.labels, stage=job.spec.stage))
        status = status_of(job.spec, code, duration)
        status.note = '; '.join(n for n in (status.note, f'job {how}') if n)
        return status

    def stop(self, jobs) -> None:
        ids = [j.job_id for j in jobs]
        if not ids:
            return
        _run(['scancel', *ids])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            states = _squeue(ids)
            if states is not None and all(s in ENDED for s in states.values()):
                break
            time.sleep(0.5)


def _script_path(spec):
    return Path(spec.log_path).with_suffix('.sbatch.sh')


def _exit_path(spec):
    return Path(spec.log_path).with_suffix('.exit')


def _exit_code(spec):
    try:
        return int(_exit_path(spec).read_text().strip())
    except (OSError, ValueError):
        return None


def _run(argv, timeout=60):
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess(argv, 1, '', str(exc))


def _squeue(ids):
    """{job id: state} of the jobs squeue still knows (finished ones too, for MinJobAge), or None
    when the controller did not answer (then nothing can be concluded about any job)."""
    out = _run(['squeue', '-h', '--states=all', '-j', ','.join(ids), '-o', '%i|%T'])
    # Only unknown ids: an error, but an answer all the same.
    if out.returncode != 0 and 'Invalid job id' not in out.stderr:
        return None
    states = {}
    for line in out.stdout.splitlines():
        job_id, _, state = line.strip().partition('|')
        if job_id in ids:
            states[job_id] = state.strip()
    return states


def _scontrol_state(job_id):
    out = _run(['scontrol', '-o', 'show', 'job', job_id])
    for item in out.stdout.split():
        if item.startswith('JobState='):
            return item.split('=', 1)[1]
    return None


def _sacct_state(job_id):
    """The job's state from accounting, where the cluster keeps it (None otherwise)."""
    if shutil.which('sacct') is None:
        return None
    out = _run(['sacct', '-n', '-X', '-P', '-j', job_id, '-o', 'State'])
    if out.returncode != 0:
        return None
    states = [line.split()[0] for line in out.stdout.splitlines() if line.strip()]
    # "CANCELLED by 0" -> CANCELLED
    return states[0] if states else None
