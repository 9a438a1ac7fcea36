"""Inherited or own: whether a failed step fails because of its own code or an earlier step's.

In SciCode, step k's program runs the model's own code of steps 1..k-1 before its own. A wrong
earlier function can sink a later step whose own code is right. Where gold code of the earlier
steps is at hand (the validation split, or a user's reference file), a failed step is run once
more with the gold code of steps 1..k-1 in place of the model's, and the same tests:
- it passes: the failure is inherited, from the earliest earlier step whose own verdict is not a
  pass (`from_step`; None when every earlier step passes its own tests, e.g. one that defines a
  helper the later step relies on wrongly);
- it still fails: the step has a bug of its own (`with_gold_earlier` is that run's category).
No rerun is needed where the model's earlier code is the gold code already (or there is none):
the step's own bug, checked as such. The rerun never changes a verdict: it is one more record
field, `origin`, and one extra step run per failed step (counted in the results: `origins`).

Steps that did not run (no code, cut off, not scorable) and programs given whole (no step code
to put behind the gold code) get no origin.
"""
import json
from pathlib import Path
from typing import Any

from ..datasets.chain import code_chain, gold_code, strip_imports
from ..errors import ConfigError
from ..predictions import record_key
from ..results import StepRecord
from .program import code_prefix

# Failures that are no run of the step's code: nothing to rerun.
NOT_RUN = frozenset({'no_code', 'truncated', 'eval_error', 'skipped', 'pass'})


def read_reference(path) -> dict[str, str]:
    """{step id: code} of a user's reference file: a JSON object of step ids to code."""
    file = Path(path).expanduser()
    try:
        data = json.loads(file.read_text(encoding='utf-8'))
    except OSError as exc:
        raise ConfigError(f'cannot read the reference code file {file}: {exc.strerror or exc}',
                          key='reference_code', fix='give the path of a JSON file {"10.1": "def ...", ...}')
    except ValueError as exc:
        raise ConfigError(f'the reference code file {file} is no JSON: {exc}', key='reference_code',
                          fix='write it as one JSON object, step id -> code: {"10.1": "def ...", ...}')
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise ConfigError(f'the reference code file {file} is not a JSON object of step ids to code',
                          key='reference_code', fix='write it as {"10.1": "def ...", "10.2": "..."}')
    return data


class OriginCheck:
    """The reruns of one evaluation's failed steps, and what they say.

    `make_job(problem, step, program)`: the evaluator's StepJob for a program (same tests,
    targets and limits as the step's own run)."""

    def __init__(self, dataset, predictions, reference, make_job):
        self.dataset, self.predictions, self.make_job = dataset, predictions, make_job
        self.where = {s.step_id: (p, s) for p in dataset.problems for s in p.steps}
        self.gold = {}
        for problem in dataset.problems:
            for step in problem.steps:
                code = reference.get(step.step_id) if reference else None
                code = strip_imports(code) if code is not None else gold_code(step)
                if code is not None:
                    self.gold[step.step_id] = code
        # (step id, sample) -> ('rerun', the rerun's record) or ('own', origin): filled while
        # the evaluation runs (evaluator.py), read by annotate()
        self.found = {}
        self.records = {}                 # the records annotate() gave, for counts()

    @property
    def available(self) -> bool:
        """Whether there is gold code to check with (validation steps, or a reference file)."""
        return bool(self.gold)

    def _earlier(self, step_id):
        problem, step = self.where[step_id]
        return problem, step, [s for s in problem.steps[:step.index - 1] if not s.prefilled]

    def plan(self, record, sample) -> tuple[str, Any] | None:
        """For a step's record: ('rerun', StepJob), ('own', origin) or None (nothing to say)."""
        if record.status == 'pass' or (record.category or record.status) in NOT_RUN \
                or record.step_id not in self.where:
            return None
        pred = self.predictions.get(record_key(record.step_id, sample))
        code = _field(pred, 'code')
        if _field(pred, 'program') is not None or not (code or '').strip():
            return None
        problem, step, earlier = self._earlier(record.step_id)
        if any(s.step_id not in self.gold for s in earlier):
            return None
        own = {s.step_id: _field(self.predictions.get(record_key(s.step_id, sample)), 'code') for s in earlier}
        if all((own[s.step_id] or '').strip() == self.gold[s.step_id].strip() for s in earlier):
            return 'own', {'kind': 'own', 'checked': 'the earlier steps\' code is the gold code already'
                           if earlier else 'no earlier step of the model\'s'}
        prior = code_chain(problem, step.index, self.gold, self.dataset.prefilled_file, self.dataset.prefilled_mode)
        program = code_prefix(problem.dependencies, [c or '' for c in prior], code)
        return 'rerun', self.make_job(problem, step, program)

    def annotate(self, records) -> dict[tuple[str, int], StepRecord]:
        """`records` ((step id, sample) -> record, every step of the evaluation), each failed step
        that was checked with its `origin`. The message stays the verdict's: the origin is a field
        of its own (a step scored in several environments keeps each one's message as it was)."""
        out = dict(records)
        for key, (kind, found) in self.found.items():
            record = records.get(key)
            origin = found if kind == 'own' else self._origin(record, found, records, key[1])
            if record is not None and origin:
                out[key] = record.model_copy(update={'origin': origin})
        self.records = out
        return out

    def _origin(self, record, rerun, records, sample):
        if rerun.status == 'eval_error':
            return None
        if not rerun.passed:
            return {'kind': 'own', 'with_gold_earlier': rerun.category or rerun.status}
        _, _, earlier = self._earlier(record.step_id)
        failing = [s.step_id for s in earlier if not _passed(records.get((s.step_id, sample)))]
        return {'kind': 'inherited', 'from_step': failing[0] if failing else None}

    def counts(self) -> dict[str, int]:
        """What the check found and what it cost: {'inherited', 'own', 'reruns' (extra step runs),
        'rerun_s' (their seconds, as each verdict's duration)}."""
        kinds = [r.origin.get('kind') for r in self.records.values() if isinstance(r.origin, dict)]
        reruns = [found for kind, found in self.found.values() if kind == 'rerun']
        return {'inherited': kinds.count('inherited'), 'own': kinds.count('own'), 'reruns': len(reruns),
                'rerun_s': round(sum(r.duration_s or 0.0 for r in reruns), 3)}


def _passed(record):
    return record is not None and record.passed


def _field(prediction, name):
    """A prediction's field: a typed Prediction as the task loads them, a plain dict as callers
    that build their own may pass; None for a step without one."""
    if prediction is None:
        return None
    if isinstance(prediction, dict):
        return prediction.get(name)
    return getattr(prediction, name, None)
