"""Scores predictions: one isolated process per scored step, official semantics."""
import os
from concurrent.futures import ThreadPoolExecutor, as_completed

from ..errors import ConfigError
from ..prompts import PREFILLED_MODES, code_chain
from .executor import SubprocessExecutor
from .metrics import score
from .program import code_prefix, step_program
from .verdict import verdict

EXECUTORS = {'subprocess': SubprocessExecutor}


def _record(step, status, message='', result=None):
    record = {'step_id': step.step_id, 'status': status, 'returncode': None,
              'duration_s': 0.0, 'stdout': '', 'stderr': '', 'message': message}
    if result is not None:
        record.update(returncode=result.returncode, duration_s=result.duration_s,
                      stdout=result.stdout, stderr=result.stderr)
        if result.error:
            record['message'] = result.error
        elif result.timed_out:
            record['message'] = 'timed out'
    return record


class SciCodeEvaluator:
    """Runs the official tests of every scored step against the model's code.

    timeout: seconds per step program (official: 1800).
    max_workers: step programs run in parallel (default: number of CPUs).
    prefilled_mode: 'official' or 'full' (see prompts/prefilled.py); also
        decides the prefilled code in prompts.
    simps_shim: make `scipy.integrate.simps` available on SciPy >= 1.14.
    """

    def __init__(self, timeout=1800, max_workers=None, prefilled_mode='official',
                 simps_shim=True, max_output_bytes=64 * 1024, executor='subprocess'):
        if prefilled_mode not in PREFILLED_MODES:
            raise ConfigError(f'unknown prefilled_mode {prefilled_mode!r}', key='prefilled_mode',
                              fix=f'use one of {", ".join(map(repr, PREFILLED_MODES))}')
        if executor not in EXECUTORS:
            raise ConfigError(f'unknown executor {executor!r}', key='executor',
                              fix=f'use one of {", ".join(map(repr, EXECUTORS))}')
        self.timeout = timeout
        self.max_workers = max_workers or os.cpu_count() or 1
        self.prefilled_mode = prefilled_mode
        self.simps_shim = simps_shim
        self.max_output_bytes = max_output_bytes
        self.executor_name = executor

    def settings(self):
        return {'timeout': self.timeout, 'max_workers': self.max_workers,
                'prefilled_mode': self.prefilled_mode, 'simps_shim': self.simps_shim,
                'max_output_bytes': self.max_output_bytes, 'executor': self.executor_name}

    def make_executor(self):
        return EXECUTORS[self.executor_name](timeout=self.timeout,
                                             max_output_bytes=self.max_output_bytes)

    # ------------------------------------------------------------ programs
    def programs(self, dataset, predictions, target_steps):
        """step_id -> program text for runnable steps, plus records for the others."""
        programs, records = {}, {}
        for problem in dataset.problems:
            codes = {sid: rec.get('code') for sid, rec in predictions.items()}
            for step in problem.scored_steps:
                pred = predictions.get(step.step_id)
                if pred is None:
                    records[step.step_id] = _record(step, 'parse_error', 'no prediction for this step')
                    continue
                if pred.get('error'):
                    records[step.step_id] = _record(step, 'parse_error', pred['error'])
                    continue
                if step.step_id not in target_steps:
                    records[step.step_id] = _record(step, 'eval_error',
                                                    'the targets file has no entry for this step')
                    continue
                if pred.get('program') is not None:
                    prefix = pred['program']
                else:
                    code = pred.get('code') or ''
                    if not code.strip():
                        records[step.step_id] = _record(step, 'parse_error',
                                                        'no code could be extracted from the response')
                        continue
                    prior = code_chain(problem, step.index, codes, dataset.prefilled_file,
                                       self.prefilled_mode)
                    prefix = code_prefix(problem.dependencies, [c or '' for c in prior], code)
                programs[step.step_id] = step_program(prefix, step.step_id, step.test_cases,
                                                      simps_shim=self.simps_shim)
        return programs, records

    # ------------------------------------------------------------ running
    def run_programs(self, steps_by_id, programs, targets_path, on_step=None):
        executor = self.make_executor()
        records = {}
        with ThreadPoolExecutor(max_workers=self.max_workers) as pool:
            futures = {pool.submit(executor.run, program, targets_path): step_id
                       for step_id, program in programs.items()}
            for future in as_completed(futures):
                step_id = futures[future]
                step = steps_by_id[step_id]
                try:
                    result = future.result()
                except Exception as exc:  # the harness failed, not the model
                    records[step_id] = _record(step, 'eval_error', f'{type(exc).__name__}: {exc}')
                else:
                    records[step_id] = _record(step, verdict(result), result=result)
                if on_step:
                    on_step(records[step_id])
        return records

    def evaluate(self, dataset, predictions, targets, on_step=None):
        """Per-step records and metrics for one model on one dataset.

        `targets` is a targets.Targets (path, kind, step ids it covers).
        """
        steps_by_id = {s.step_id: s for p in dataset.problems for s in p.steps}
        programs, records = self.programs(dataset, predictions, targets.step_ids)
        for record in records.values():
            if on_step:
                on_step(record)
        records.update(self.run_programs(steps_by_id, programs, targets.path, on_step))
        return score(dataset.problems, records)
