"""Scores predictions: every scored step in its own sandboxed process, official semantics."""
import os
import threading
from typing import Optional

from ..datasets.chain import PREFILLED_MODES, code_chain
from ..errors import ConfigError
from ..results import StepRecord
from ..sandbox.executor import EXECUTORS, Limits, StepJob
from .metrics import score
from .program import SIMPS_SHIM, code_prefix, dependency_imports, needs_simps_shim
from .schedule import Planner
from .sharing import (LocalVerdicts, SharedVerdicts, StepDurations, durations_path, program_key,
                      targets_identity)
from .verdict import decide


def _record(step, status, message='', run=None, violation=None):
    if run is None:
        return StepRecord(step.step_id, status, message=message, violation=violation)
    return StepRecord(step.step_id, status, run.returncode, run.duration_s, run.stdout, run.stderr,
                      message, violation)


# The official harness gives each step program 1800 s.
STEP_TIMEOUT_S = 1800


def dependency_modules(dependencies):
    """Modules named by a problem's import lines (fast workers import them once)."""
    return tuple(sorted({module for module, _ in dependency_imports(dependencies) if module}))


def dependency_names(dependencies):
    """Names a problem's import lines bind: the tests use them, so the model's code must not rebind them."""
    return tuple(name for _, name in dependency_imports(dependencies) if name)


def targets_reader(path, step_id, n_tests):
    """A step's targets, read when the executor asks for them (h5py is imported only then)."""
    def read():
        from ..targets.h5format import read_step_targets
        return read_step_targets(path, step_id, n_tests)
    return read


class SciCodeEvaluator:
    """Runs the official tests of every scored step against the model's code.

    timeout: seconds per step (default: the official harness's, STEP_TIMEOUT_S).
    max_workers: steps run in parallel (default: CPUs shared among parallel eval tasks).
    prefilled_mode: 'official' or 'full' (see datasets/chain.py); also used for prompts.
    simps_shim: provide `scipy.integrate.simps` on SciPy >= 1.14 (problems 2 and 28).
    executor: 'forkserver' (workers preload the scientific stack and fork per step)
        or 'subprocess' (a new Python per step). Same sandbox, same verdicts.
    memory_limit_mb, max_processes, max_file_mb, max_output_bytes: per-step limits.
    isolate_network, restrict_files, drop_privileges: sandbox layers (see sandbox/lockdown.py).
    """

    def __init__(self, timeout: float = STEP_TIMEOUT_S, max_workers: Optional[int] = None,
                 prefilled_mode: str = 'official', simps_shim: bool = True,
                 max_output_bytes: int = 64 * 1024, executor: str = 'forkserver',
                 memory_limit_mb: Optional[int] = 8192, max_processes: Optional[int] = 64,
                 max_file_mb: Optional[int] = 1024, isolate_network: bool = True,
                 restrict_files: bool = True, drop_privileges: bool = True):
        for name, value in (('timeout', timeout), ('max_workers', max_workers),
                            ('max_output_bytes', max_output_bytes), ('memory_limit_mb', memory_limit_mb),
                            ('max_processes', max_processes), ('max_file_mb', max_file_mb)):
            if value is not None and not value > 0:
                raise ConfigError(f'must be positive, got {value!r}', key=name)
        if prefilled_mode not in PREFILLED_MODES:
            raise ConfigError(f'unknown prefilled_mode {prefilled_mode!r}', key='prefilled_mode',
                              fix=f'use one of {", ".join(map(repr, PREFILLED_MODES))}')
        if executor not in EXECUTORS:
            raise ConfigError(f'unknown executor {executor!r}', key='executor',
                              fix=f'use one of {", ".join(map(repr, EXECUTORS))}')
        self.max_workers = max_workers or default_workers()
        self.prefilled_mode = prefilled_mode
        self.simps_shim = simps_shim
        self.executor_name = executor
        self.limits = Limits(timeout=timeout, memory_mb=memory_limit_mb, max_processes=max_processes,
                             max_file_mb=max_file_mb, max_output_bytes=max_output_bytes,
                             isolate_network=isolate_network, landlock=restrict_files,
                             drop_privileges=drop_privileges)
        self.protections = {}

    def settings(self):
        return {'executor': self.executor_name, 'max_workers': self.max_workers,
                'prefilled_mode': self.prefilled_mode, 'simps_shim': self.simps_shim,
                **self.verdict_settings()}

    def identity(self):
        """The settings a stored result must match to be reused."""
        return {'prefilled_mode': self.prefilled_mode, **self.verdict_settings()}

    def verdict_settings(self):
        """Settings that can change a verdict (part of the key for sharing verdicts)."""
        limits = self.limits
        return {'timeout': limits.timeout, 'memory_limit_mb': limits.memory_mb,
                'max_processes': limits.max_processes, 'max_file_mb': limits.max_file_mb,
                'max_output_bytes': limits.max_output_bytes, 'isolate_network': limits.isolate_network,
                'restrict_files': limits.landlock, 'drop_privileges': limits.drop_privileges,
                'simps_shim': self.simps_shim}

    def inactive_protections(self):
        """Requested sandbox layers the OS did not provide in the last evaluation."""
        p, missing = self.protections, []
        if not p:
            return missing
        if self.limits.landlock and not p.get('landlock'):
            missing.append(f'file restrictions (Landlock): {p.get("landlock_why", "unavailable")}')
        if self.limits.isolate_network and not str(p.get('network', '')).startswith('isolated'):
            missing.append('network isolation')
        if self.limits.max_processes and p.get('process_limit') == 'polling':
            missing.append('kernel process limit (the worker polls the process count instead)')
        return missing

    # ------------------------------------------------------------ jobs
    def jobs(self, dataset, predictions, targets):
        """step_id -> StepJob for runnable steps, plus records for the steps that cannot run."""
        jobs, records = {}, {}
        codes = {sid: rec.get('code') for sid, rec in predictions.items()}
        for problem in dataset.problems:
            for step in problem.scored_steps:
                pred = predictions.get(step.step_id)
                if pred is None:
                    records[step.step_id] = _record(step, 'parse_error', 'no prediction for this step')
                elif pred.get('error'):
                    records[step.step_id] = _record(step, 'parse_error', pred['error'])
                elif pred.get('truncated'):
                    records[step.step_id] = _record(
                        step, 'fail', 'the response was cut off by the token limit (finish_reason=length)')
                elif step.step_id not in targets.step_ids:
                    records[step.step_id] = _record(step, 'eval_error',
                                                    'the targets file has no entry for this step')
                elif pred.get('program') is not None:
                    jobs[step.step_id] = self._job(problem, step, pred['program'], targets)
                elif not (pred.get('code') or '').strip():
                    records[step.step_id] = _record(step, 'parse_error',
                                                    'no code could be extracted from the response')
                else:
                    prior = code_chain(problem, step.index, codes, dataset.prefilled_file,
                                       self.prefilled_mode)
                    program = code_prefix(problem.dependencies, [c or '' for c in prior], pred['code'])
                    jobs[step.step_id] = self._job(problem, step, program, targets)
        return jobs, records

    def _job(self, problem, step, program, targets):
        tests = list(step.test_cases)
        return StepJob(step_id=step.step_id, program=program, tests=tests,
                       dependencies=problem.dependencies,
                       targets=targets_reader(str(targets.path), step.step_id, len(tests)),
                       preamble=self._preamble(program, tests),
                       guarded_names=dependency_names(problem.dependencies),
                       modules=dependency_modules(problem.dependencies))

    def _preamble(self, program, tests):
        """The simps shim, where the step uses simps (the official-style program text gets the same)."""
        return SIMPS_SHIM if self.simps_shim and needs_simps_shim(program, *tests) else ''

    def make_executor(self):
        return EXECUTORS[self.executor_name](self.limits, workers=self.max_workers)

    # ------------------------------------------------------------ running
    def run_jobs(self, steps_by_id, jobs, targets_path, on_step=None, shared=None, durations=None,
                 executor=None):
        """Run jobs on `max_workers` workers, one record per job, in the order schedule.py plans.

        A program another eval task has already run (or is running) is not run
        again: its verdict is shared.
        """
        shared = shared or LocalVerdicts()
        durations = durations or StepDurations(None)
        identity = targets_identity(targets_path)
        settings = self.verdict_settings()
        keys = {sid: program_key(job, identity, settings) for sid, job in jobs.items()}
        records, observed, imported = {}, {}, {}

        def finish(step_id, record):
            records[step_id] = record
            if on_step:
                on_step(record)

        for sid in jobs:              # run by another task (or early evaluation) already
            cached = shared.get(keys[sid])
            if cached is not None:
                finish(sid, StepRecord.from_dict(cached, step_id=sid, shared=True))
        jobs = {sid: job for sid, job in jobs.items() if sid not in records}
        if not jobs:
            return records
        own = executor is None
        if own:
            executor = self.make_executor()
            executor.start()
        workers = min(executor.workers, len(jobs))
        if executor.loaded is not None:
            executor.watch |= set().union(*(job.modules for job in jobs.values()))
        planner = Planner({sid: durations.expected(sid, keys[sid]) for sid in jobs},
                          {sid: job.modules for sid, job in jobs.items()}, workers,
                          durations.imports, executor.loaded, copy_s=executor.copy_s)
        executor.prefetch([jobs[sid] for sid in planner.pending])
        changed = threading.Condition(threading.RLock())

        def next_step(slot):
            """(step to run now, worker to copy first or None), or None when all are done; waits
            while the rest is better run by another worker or is being run by another eval task."""
            with changed:
                while planner.pending:
                    for sid in planner.order(slot):
                        cached = shared.get(keys[sid])
                        if cached is not None:       # another task (or early evaluation) ran it
                            planner.drop(sid)
                            finish(sid, StepRecord.from_dict(cached, step_id=sid, shared=True))
                        elif shared.try_claim(keys[sid]):
                            return sid, planner.take(slot, sid)
                    changed.wait(0.1)
                return None

        def work(slot):
            while True:
                chosen = next_step(slot)
                if chosen is None:
                    return
                sid, source = chosen
                step = steps_by_id[sid]
                run = None
                try:
                    if source is not None:
                        executor.copy_worker(source, slot)   # else: the worker imports them itself
                    run = executor.run(jobs[sid], slot)
                    status, message, violation = decide(run, len(step.test_cases))
                    record = _record(step, status, message, run, violation)
                    protections = next((e.get('protections') for e in run.events
                                        if e.get('event') == 'sandbox'), None)
                    if protections and not self.protections:
                        self.protections = protections
                except Exception as exc:  # the harness failed, not the model
                    record = _record(step, 'eval_error', f'{type(exc).__name__}: {exc}')
                if record.status == 'eval_error':
                    shared.release(keys[sid])      # do not share a harness failure
                else:
                    shared.put(keys[sid], record.to_dict())
                with changed:
                    if run is not None and record.status != 'eval_error':
                        observed[sid] = (keys[sid], max(0.0, run.duration_s - run.import_s))
                        imported.update(run.imported)
                    planner.finished(slot)
                    finish(sid, record)
                    changed.notify_all()

        try:
            threads = [threading.Thread(target=work, args=(slot,), daemon=True) for slot in range(workers)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            if own:
                executor.close()
        durations.save(observed, imported)
        return records

    def evaluate(self, dataset, predictions, targets, on_step=None, shared_dir=None):
        """Per-step records and metrics for one model on one dataset."""
        steps_by_id = {s.step_id: s for p in dataset.problems for s in p.steps}
        jobs, records = self.jobs(dataset, predictions, targets)
        for record in records.values():
            if on_step:
                on_step(record)
        shared = SharedVerdicts(shared_dir) if shared_dir else None
        durations = StepDurations(durations_path(dataset.data_dir))
        records.update(self.run_jobs(steps_by_id, jobs, targets.path, on_step, shared, durations))
        if shared is not None:
            # Every step may have been run by another task: report its sandbox.
            if self.protections:
                shared.put_meta('protections', self.protections)
            else:
                self.protections = shared.get_meta('protections') or {}
        return score(dataset.problems, records)


def default_workers():
    """CPUs divided among the eval tasks the runner started in parallel."""
    cpus = os.cpu_count() or 1
    try:
        parallel = max(1, int(os.environ.get('OPENCOMPASS_SCICODE_PARALLEL_EVALS', '1')))
    except ValueError:
        parallel = 1
    return max(1, cpus // parallel)
