"""Scores predictions: every scored step in its own sandboxed process, official semantics.

The evaluator says what each step's job is (jobs), hands the jobs to a step
pool (pool/) that runs them, turns each run into a record (verdict.py) and the
records into metrics (metrics.py).
"""
import os
import queue
import threading
from typing import Any, Literal, Optional, Union

from ..datasets.chain import PREFILLED_MODES, PrefilledMode, code_chain, prefilled_code
from ..environments import CURRENT, Environment, check_names, ensure
from ..errors import ConfigError
from ..pool import StepPool, Submission
from ..pool.machine import MachinePool
from ..pool.timings import StepDurations, durations_path
from ..predictions import as_prediction, record_key
from ..results import StepRecord
from ..sandbox.executor import EXECUTORS, ForkServerExecutor, SubprocessExecutor
from ..sandbox.job import Limits, StepJob, default_limit
from ..targets.reader import StepTargets
from ..utils.checks import check_number
from ..utils.parallel import PARALLEL_ENV
from ..registry import register
from .environments import check_rule, combine
from .metrics import score
from .origin import OriginCheck, read_reference
from .program import SIMPS_SHIM, code_prefix, dependency_imports, needs_simps_shim
from .sharing import LocalVerdicts, SharedVerdicts, program_key, targets_identity, verdicts_dir
from .verdict import record_for


# The official harness gives each step program 1800 s. The one default of the step timeout: it
# goes from here (the evaluator's `timeout`) into every step job's Limits, and so to the kill.
STEP_TIMEOUT_S = 1800
PREFILLED_STEPS = ('skipped', 'failed', 'scored')


def dependency_modules(dependencies) -> tuple[str, ...]:
    """Modules named by a problem's import lines (fast workers import them once)."""
    return tuple(sorted({module for module, _ in dependency_imports(dependencies) if module}))


def dependency_names(dependencies) -> tuple[str, ...]:
    """Names a problem's import lines bind: the tests use them, so the model's code must not rebind them."""
    return tuple(name for _, name in dependency_imports(dependencies) if name)


@register
class SciCodeEvaluator:
    """Runs the official tests of every scored step against the model's code.

    timeout: seconds per step (default: the official harness's, STEP_TIMEOUT_S).
    max_workers: steps run in parallel by a pool of this evaluator's own (default: none of its
        own; in a run, the run's step pool on each machine, one worker per CPU, serves all tasks).
    prefilled_mode: the dataset's (`SciCodeDataset(prefilled_mode=...)`, see datasets/chain.py),
        which prompts read too; build_evaluator gives it here so that the settings record it. A
        config may still set it here, its old place (SciCodeDataset.entry_options); a
        dataset with another one is refused. None: the dataset's, unrecorded.
    simps_shim: provide `scipy.integrate.simps` on SciPy >= 1.14 (problems 2 and 28).
    executor: 'forkserver' (workers preload the scientific stack and fork per step)
        or 'subprocess' (a new Python per step). Same sandbox, same verdicts.
    memory_limit_mb, max_processes, max_file_mb, max_output_bytes: per-step limits.
    isolate_network, restrict_files, drop_privileges: sandbox layers (see sandbox/lockdown.py).
    forensics: for a step that fails in a test, keep what its failing assert compared and run its
        remaining tests for information (sandbox/forensics.py); verdicts are the same either way.
    later_tests_s: at most this many seconds for those remaining tests (and never longer than the
        step took until its verdict); 0 runs none.
    prefilled_steps: the prefilled steps 13.6, 62.1, 76.3 in the counts: 'skipped' (official), 'failed'
        (counted, never passed: the official inspect_ai task) or 'scored' (their given code run as a
        step: inspect_evals, where the model writes them).
    environments: the scoring environments each step runs in (environments/: 'current' is this
        interpreter; another is built once into the data cache); environment_rule: how their
        verdicts make the step's: 'any', 'all' or one environment's name (evaluation/environments.py).
    inherited_check: run a failed step once more with the gold code of its earlier steps in place
        of the model's, and say in its record whether it then passes (inherited from an earlier
        step) or not (its own bug); see origin.py. None (default): where gold code exists (the
        validation split, or reference_code); True: the same, and an error where none does;
        False: never. One extra step run per failed step; verdicts are the same either way.
    reference_code: a JSON file {step id: code}, the gold code of steps the split has none for
        (or to use instead of it), for inherited_check.
    A dataset's protocol (protocols/) fills in those its entry leaves out.
    """

    def __init__(self, timeout: float = STEP_TIMEOUT_S, max_workers: Optional[int] = None,
                 prefilled_mode: Optional[PrefilledMode] = None, simps_shim: bool = True,
                 max_output_bytes: int = default_limit('max_output_bytes'),
                 executor: Literal[tuple(EXECUTORS)] = 'forkserver',
                 memory_limit_mb: Optional[int] = default_limit('memory_mb'),
                 max_processes: Optional[int] = default_limit('max_processes'),
                 max_file_mb: Optional[int] = default_limit('max_file_mb'),
                 isolate_network: bool = default_limit('isolate_network'),
                 restrict_files: bool = default_limit('landlock'),
                 drop_privileges: bool = default_limit('drop_privileges'),
                 forensics: bool = StepJob.model_fields['forensics'].default,
                 later_tests_s: float = StepJob.model_fields['later_tests_s'].default,
                 prefilled_steps: Literal[PREFILLED_STEPS] = 'skipped',
                 environments: Union[list, tuple] = (CURRENT,), environment_rule: str = 'any',
                 inherited_check: Optional[bool] = None, reference_code: Optional[str] = None) -> None:
        check_number('timeout', timeout, above=0, example=STEP_TIMEOUT_S)
        for name, value, example in (('max_workers', max_workers, 2), ('max_output_bytes', max_output_bytes, 65536),
                                     ('memory_limit_mb', memory_limit_mb, 8192), ('max_processes', max_processes, 64),
                                     ('max_file_mb', max_file_mb, 1024)):
            check_number(name, value, whole=True, at_least=1, optional=name != 'max_output_bytes', example=example)
        check_number('later_tests_s', later_tests_s, at_least=0, example=10.0)     # 0: no later tests
        if prefilled_mode is not None and prefilled_mode not in PREFILLED_MODES:
            raise ConfigError(f'unknown prefilled_mode {prefilled_mode!r}', key='prefilled_mode',
                              fix=f'use one of {", ".join(map(repr, PREFILLED_MODES))}')
        if executor not in EXECUTORS:
            raise ConfigError(f'unknown executor {executor!r}', key='executor',
                              fix=f'use one of {", ".join(map(repr, EXECUTORS))}')
        if prefilled_steps not in PREFILLED_STEPS:
            raise ConfigError(f'unknown prefilled_steps {prefilled_steps!r}', key='prefilled_steps',
                              fix=f'use one of {", ".join(map(repr, PREFILLED_STEPS))}')
        self.prefilled_steps = prefilled_steps
        self.environments = check_names(environments)
        self.environment_rule = check_rule(environment_rule, self.environments)
        self.own_workers = max_workers is not None
        self.max_workers = max_workers or default_workers()
        self.prefilled_mode = prefilled_mode
        self.simps_shim = simps_shim
        self.executor_name = executor
        self.limits = Limits(timeout=timeout, memory_mb=memory_limit_mb, max_processes=max_processes,
                             max_file_mb=max_file_mb, max_output_bytes=max_output_bytes,
                             isolate_network=isolate_network, landlock=restrict_files,
                             drop_privileges=drop_privileges)
        self.forensics = bool(forensics)
        self.later_tests_s = float(later_tests_s)
        if inherited_check not in (None, True, False):
            raise ConfigError(f'inherited_check must be True, False or None, not {inherited_check!r}',
                              key='inherited_check', fix='None (default): where gold code exists; False: never')
        self.inherited_check = inherited_check
        self.reference_code = str(reference_code) if reference_code is not None else None
        self.reference = read_reference(reference_code) if reference_code is not None else None
        self.protections = {}
        self.scored_with = {}       # environment -> versions of python and the libraries, once evaluated

    def settings(self) -> dict[str, Any]:
        """Every setting of this evaluator, as the results file records it."""
        return {'executor': self.executor_name, 'max_workers': self.max_workers,
                'prefilled_mode': self.prefilled_mode, 'simps_shim': self.simps_shim,
                **self.verdict_settings(), **self.forensics_settings(), **self.counting_settings(),
                'inherited_check': self.inherited_check, 'reference_code': self.reference_code}

    def counting_settings(self) -> dict[str, Any]:
        """Settings that change which verdicts count and how, beside the official ones (left out
        where official, so that results of earlier runs stay current)."""
        out = {}
        if self.prefilled_steps != 'skipped':
            out['prefilled_steps'] = self.prefilled_steps
        if self.environments != [CURRENT]:
            out.update(environments=self.environments, environment_rule=self.environment_rule)
        return out

    def forensics_settings(self) -> dict[str, Any]:
        """Settings that change what a failed step's record tells, never its verdict."""
        return {'forensics': self.forensics, 'later_tests_s': self.later_tests_s}

    def identity(self) -> dict[str, Any]:
        """The settings a stored result must match to be reused."""
        official = {'prefilled_steps': None, 'environments': None, 'environment_rule': None}
        return {'prefilled_mode': self.prefilled_mode, **self.verdict_settings(), **official,
                **self.counting_settings()}

    def verdict_settings(self) -> dict[str, Any]:
        """Settings that can change a verdict (part of the key for sharing verdicts)."""
        limits = self.limits
        return {'timeout': limits.timeout, 'memory_limit_mb': limits.memory_mb,
                'max_processes': limits.max_processes, 'max_file_mb': limits.max_file_mb,
                'max_output_bytes': limits.max_output_bytes, 'isolate_network': limits.isolate_network,
                'restrict_files': limits.landlock, 'drop_privileges': limits.drop_privileges,
                'simps_shim': self.simps_shim}

    def inactive_protections(self) -> list[str]:
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
    def jobs(self, dataset, predictions, targets, n=1, samples=None) -> tuple[dict[tuple[str, int], StepJob], dict[tuple[str, int], StepRecord]]:
        """(step_id, sample) -> StepJob for runnable steps, plus records for the steps that cannot
        run. `n`: samples per problem (infer_cfg n); `samples`: only these of them."""
        mode = dataset.prefilled_mode
        if self.prefilled_mode not in (None, mode):
            raise ConfigError(f'this evaluator is given prefilled_mode {self.prefilled_mode!r}, its dataset '
                              f'{dataset.abbr!r} {mode!r}', key='prefilled_mode',
                              fix='set prefilled_mode on the dataset only: prompts read it there too')
        jobs, records = {}, {}
        for sample in (range(n) if samples is None else samples):
            mark = sample if n > 1 else None          # one sample: records as they always were

            def cannot_run(step, status, message, category):
                records[step.step_id, sample] = StepRecord(step.step_id, status, message=message,
                                                           category=category, sample=mark)

            preds = {s.step_id: as_prediction(predictions.get(record_key(s.step_id, sample)))
                     for p in dataset.problems for s in p.steps}
            codes = {sid: pred.code if pred is not None else None for sid, pred in preds.items()}
            for problem in dataset.problems:
                for step in problem.steps:
                    if step.prefilled:
                        if self.prefilled_steps == 'scored':
                            jobs[step.step_id, sample] = self._given_job(problem, step, codes, dataset, targets)
                        continue
                    pred = preds[step.step_id]
                    if pred is None:
                        cannot_run(step, 'parse_error', 'no prediction for this step', 'no_code')
                    elif pred.error:     # no answer: refused by the API, or not asked
                        cannot_run(step, 'parse_error', pred.error, 'refused' if pred.refused else 'no_code')
                    elif pred.truncated:
                        cannot_run(step, 'fail', 'the response was cut off by the token limit '
                                                 '(finish_reason=length)', 'truncated')
                    elif step.test_cases and step.step_id not in targets.step_ids:    # no tests: no entry needed
                        cannot_run(step, 'eval_error', 'the targets file has no entry for this step',
                                   'eval_error')
                    elif pred.program is not None:
                        jobs[step.step_id, sample] = self._job(problem, step, pred.program, targets)
                    elif not (pred.code or '').strip():
                        cannot_run(step, 'parse_error', 'no code could be extracted from the response',
                                   'no_code')
                    else:
                        prior = code_chain(problem, step.index, codes, dataset.prefilled_file, mode)
                        program = code_prefix(problem.dependencies, [c or '' for c in prior], pred.code)
                        jobs[step.step_id, sample] = self._job(problem, step, program, targets)
        return jobs, records

    def _given_job(self, problem, step, codes, dataset, targets):
        """A prefilled step scored as a step (prefilled_steps='scored'): its given code after the
        chain before it, run as any step's program (these steps have no tests: it passes if it runs)."""
        mode = dataset.prefilled_mode
        prior = code_chain(problem, step.index, codes, dataset.prefilled_file, mode)
        given = prefilled_code(step, dataset.prefilled_file(step.step_id), mode) or ''
        program = code_prefix(problem.dependencies, [c or '' for c in prior], given)
        return self._job(problem, step, program, targets)

    def _job(self, problem, step, program, targets):
        tests = list(step.test_cases)
        return StepJob(step_id=step.step_id, program=program, tests=tests,
                       dependencies=problem.dependencies,
                       targets=StepTargets(str(targets.file_for(step.step_id)), step.step_id, len(tests)),
                       preamble=self._preamble(program, tests),
                       guarded_names=dependency_names(problem.dependencies),
                       modules=dependency_modules(problem.dependencies),
                       forensics=self.forensics, later_tests_s=self.later_tests_s, limits=self.limits)

    def _preamble(self, program, tests):
        """The simps shim, where the step uses simps (the official-style program text gets the same)."""
        return SIMPS_SHIM if self.simps_shim and needs_simps_shim(program, *tests) else ''

    def make_executor(self, python=None) -> ForkServerExecutor | SubprocessExecutor:
        """Workers of this evaluator's settings (`python`: the interpreter of a scoring environment)."""
        return EXECUTORS[self.executor_name](workers=self.max_workers, python=python)

    # ------------------------------------------------------------ running
    def submissions(self, jobs, targets_path, durations, done, n=1, verdicts=None, environment=CURRENT,
                    on_start=None) -> list[Submission]:
        """What the step pool needs of each job ({(step_id, sample): job}); `done(record)` is
        called with its verdict (which names its sample when n > 1), `on_start(step_id, sample)`
        when a worker starts it. `verdicts`: the verdicts shared with the run's other tasks (the
        pool's claims), where each new one is kept. `environment`: the scoring environment's name
        (its verdicts are its own)."""
        identity = targets_identity(targets_path)
        verdicts = verdicts if verdicts is not None else LocalVerdicts()
        # a record is shared only with tasks that would write the same record
        settings = {**self.verdict_settings(), **self.forensics_settings()}
        if environment != CURRENT:
            settings['environment'] = environment
        out = []
        for (sid, sample), job in jobs.items():
            key = program_key(job, identity, settings)
            judge = _judge(job, key, verdicts, done, sample if n > 1 else None)
            started = (lambda sid=sid, sample=sample: on_start(sid, sample)) if on_start else None
            out.append(Submission(key, job, durations.expected(sid, key), judge, started=started))
        return out

    @property
    def shares_machine_pool(self) -> bool:
        """Whether this evaluator's steps may run in the run's pool on this machine (pool/server.py),
        beside other tasks' steps: not when it asks for a number of workers of its own, nor for a
        new Python per step."""
        return self.executor_name == 'forkserver' and not self.own_workers

    def pool(self, verdicts=None, durations=None, run_root=None, environment=None) -> MachinePool | StepPool:
        """Where the steps run (started on first use): with `run_root`, the run's pool on this
        machine where the settings allow it; else a pool of `max_workers` workers of its own.
        `verdicts`: those already known (not run again), and where each new one is kept.
        `environment` (environments.Environment): a scoring environment other than this
        interpreter gets a pool of its own, whose workers run its interpreter."""
        verdicts = verdicts if verdicts is not None else LocalVerdicts()
        if environment is not None and not environment.is_current:
            return StepPool(lambda: self.make_executor(environment.python), verdicts, durations)
        if run_root is not None and self.shares_machine_pool:
            return MachinePool(run_root, durations, verdicts)
        return StepPool(self.make_executor, verdicts, durations)

    @property
    def current_only(self) -> bool:
        """Scored in this interpreter alone (early evaluation in the inference task scores those)."""
        return self.environments == [CURRENT]

    def ready_environments(self, data_dir, say=print) -> list[Environment]:
        """The Environment of each name in `environments`, built first where needed (environments/)."""
        return [ensure(name, data_dir, say=say) for name in self.environments]

    def run_jobs(self, jobs, targets_path, on_step=None, verdicts=None, durations=None, n=1, run_root=None,
                 environment=None, on_start=None, origins=None) -> dict[tuple[str, int], StepRecord]:
        """Run jobs in the order the pool plans; (step_id, sample) -> StepRecord.

        A program another task of the run has already run (or is running) is not
        run again: its verdict is shared. `environment`: the scoring environment to run them in
        (default: this interpreter). `origins` (an OriginCheck): each failed step is run once
        more with the gold code of its earlier steps, in the same pool as soon as its verdict is
        in (what the rerun says is kept in `origins`).
        """
        records = {}
        pending = queue.Queue()           # verdicts to look at for a rerun, handed from the pool's threads

        def done(record):
            records[record.step_id, record.sample or 0] = record
            if on_step:
                on_step(record)
            if origins is not None:
                pending.put(record)

        durations = durations or StepDurations(None)
        verdicts = verdicts if verdicts is not None else LocalVerdicts()
        pool = self.pool(verdicts, durations, run_root, environment)
        name = environment.name if environment is not None else CURRENT
        try:
            pool.submit(self.submissions(jobs, targets_path, durations, done, n, verdicts, name, on_start))
            if origins is not None:
                _rerun_failed(pool, origins, pending, len(jobs),
                              lambda rerun, to: self.submissions(rerun, targets_path, durations, to, n, verdicts,
                                                                 name))
        finally:
            pool.close()
        self.protections = self.protections or pool.protections
        return records

    def origin_check(self, dataset, predictions, targets) -> OriginCheck | None:
        """The OriginCheck of an evaluation, or None where inherited_check is off or no gold code
        of the dataset's steps is at hand."""
        if self.inherited_check is False:
            return None
        check = OriginCheck(dataset, predictions, self.reference,
                            lambda problem, step, program: self._job(problem, step, program, targets))
        if check.available:
            return check
        if self.inherited_check:
            raise ConfigError(f'inherited_check=True needs gold code, and dataset {dataset.abbr!r} has none',
                              key='inherited_check', fix="use split='validation', give reference_code='FILE.json', "
                                                         'or leave inherited_check unset')
        return None

    def rerun_failed_in_environments(self, origins, records, targets_path, environments, verdicts=None,
                                     durations=None, n=1, run_root=None) -> None:
        """The inherited-or-own reruns after the steps were scored in several environments: each
        rerun is scored as the step was (in every environment, combined by the rule)."""
        reruns = {}
        for key, record in records.items():
            plan = origins.plan(record, key[1])
            if plan is not None and plan[0] == 'own':
                origins.found[key] = plan
            elif plan is not None:
                reruns[key] = plan[1]
        if reruns:
            found = self.run_in_environments(reruns, targets_path, environments, None, verdicts, durations, n,
                                             run_root)
            origins.found.update({key: ('rerun', record) for key, record in found.items()})

    def run_in_environments(self, jobs, targets_path, environments, on_step=None, verdicts=None, durations=None,
                            n=1, run_root=None, on_start=None) -> dict[tuple[str, int], StepRecord]:
        """run_jobs in every environment at once (each its own pool; the machine's CPU slots bound
        them together); each step's record is their verdicts combined by environment_rule, handed
        to `on_step` once every environment has given its verdict; `on_start` hears of the steps
        the first environment starts."""
        if [e.name for e in environments] == [CURRENT]:
            return self.run_jobs(jobs, targets_path, on_step, verdicts, durations, n, run_root, on_start=on_start)
        per_env = {env.name: {} for env in environments}
        lock = threading.Lock()

        def arrived(name):
            def done(record):
                key = record.step_id, record.sample or 0
                with lock:
                    per_env[name][key] = record
                    complete = all(key in got for got in per_env.values())
                if complete and on_step:
                    on_step(combine({n: per_env[n][key] for n in per_env}, self.environment_rule))
            return done

        errors = []

        def work(env):
            try:
                self.run_jobs(jobs, targets_path, arrived(env.name), verdicts, durations, n, run_root, env,
                              on_start if env is environments[0] else None)
            except BaseException as exc:     # raised again below, in the caller's thread
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(env,), name=f'environment-{env.name}')
                   for env in environments]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[0]
        return {key: combine({n: per_env[n][key] for n in per_env}, self.environment_rule)
                for key in per_env[environments[0].name]}

    def evaluate(self, dataset, predictions, targets, on_step=None, run_root=None, n=1, ks=(), known=None,
                 environments=None, on_start=None) -> dict[str, Any]:
        """Per-step records and metrics for one model on one dataset (`n` samples per problem;
        `ks`: pass@k for these k besides 1 and n; `known`: (step_id, sample) -> StepRecord already
        decided, e.g. by the shards of this evaluation, not run again). `run_root`: the run this
        is part of: its verdicts are shared, its steps run in the run's pool on this machine.
        `environments`: the Environments to score in (default: those named, made ready here);
        their versions are kept in `scored_with`. `on_step(record)` hears of each verdict,
        `on_start(step_id, sample)` of each step a worker starts."""
        environments = environments or self.ready_environments(dataset.data_dir)
        self.scored_with = {env.name: env.versions for env in environments}
        jobs, records = self.jobs(dataset, predictions, targets, n)
        known = known or {}
        jobs = {key: job for key, job in jobs.items() if key not in known}
        records.update(known)
        for record in records.values():
            if on_step:
                on_step(record)
        shared = SharedVerdicts(verdicts_dir(run_root)) if run_root else None
        durations = StepDurations(durations_path(dataset.data_dir))
        origins = self.origin_check(dataset, predictions, targets)
        verdicts = shared or LocalVerdicts()
        if origins is not None and [env.name for env in environments] == [CURRENT]:
            # the reruns go to the same pool as soon as a verdict is in
            records.update(self.run_jobs(jobs, targets.path, on_step, verdicts, durations, n, run_root,
                                         on_start=on_start, origins=origins))
        else:
            scored = self.run_in_environments(jobs, targets.path, environments, on_step, verdicts, durations, n,
                                              run_root, on_start)
            records.update(scored)
            if origins is not None:
                self.rerun_failed_in_environments(origins, scored, targets.path, environments, verdicts, durations,
                                                  n, run_root)
        if shared is not None:
            # Every step may have been run by another task: report its sandbox.
            if self.protections:
                shared.put_meta('protections', self.protections)
            else:
                self.protections = shared.get_meta('protections') or {}
        out = score(dataset.problems, origins.annotate(records) if origins else records, n, ks, self.prefilled_steps)
        if origins is not None:
            out['origins'] = origins.counts()
        return out


# How often a wait for the inherited-or-own verdicts looks whether the pool can still send them.
VERDICT_POLL_S = 1.0


def _rerun_failed(pool, origins, pending, expected, submissions):
    """Take each verdict as it comes (`expected` of them, then the reruns'): submit the rerun a
    failed step needs, keep what comes back in `origins`; return when every run is in. The reruns
    are submitted from this thread, never from the pool's, which hold its locks while they hand
    verdicts over."""
    waiting = expected
    while waiting:
        try:
            item = pending.get(timeout=VERDICT_POLL_S)
        except queue.Empty:
            pool.check()                     # a pool whose threads stopped sends no more verdicts
            continue
        waiting -= 1
        if isinstance(item, tuple):          # a rerun's verdict: (the failed step's key, its record)
            origins.found[item[0]] = ('rerun', item[1])
            continue
        key = (item.step_id, item.sample or 0)
        plan = origins.plan(item, key[1])
        if plan is not None and plan[0] == 'own':
            origins.found[key] = plan
        elif plan is not None:
            waiting += 1
            pool.submit(submissions({key: plan[1]}, lambda record, key=key: pending.put((key, record))))


def _judge(job, key, verdicts, done, sample):
    """The pool's callback for one job: the run (None: settled by another task) becomes the
    step's record, kept in `verdicts` unless the harness failed, then handed to `done`."""
    def judge(run, copy):
        if run is None:
            done(StepRecord.from_dict(verdicts.get(key), step_id=job.step_id, shared=True, sample=sample))
            return False
        record = record_for(job, run)
        if not copy:
            if record.status == 'eval_error':
                verdicts.release(key)       # do not share a harness failure
            else:
                verdicts.put(key, record.to_dict())
        done(record.replace(sample=sample, shared=copy))
        return record.status != 'eval_error'
    return judge


def default_workers() -> int:
    """CPUs divided among the eval tasks the runner started in parallel. The CPUs are those this
    process may use (a cluster job gets its allocation, not the whole node)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    allotted = os.environ.get('SLURM_CPUS_PER_TASK', '')
    if allotted.isdigit() and int(allotted) > 0:
        cpus = min(cpus, int(allotted))
    try:
        parallel = max(1, int(os.environ.get(PARALLEL_ENV, '1')))
    except ValueError:
        parallel = 1
    return max(1, cpus // parallel)
