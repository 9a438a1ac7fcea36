"""Scoring of one model on one dataset: its predictions in, its results file out.

A shard (`shard` in the task file) scores some problems only and writes a part
file. The task that merges them (`merge_shards`) is this same task over the
whole dataset: it takes the verdicts of the parts that were made from the
current predictions and settings, scores whatever is left, and writes the
results file an unsharded run writes.
"""
import time
from datetime import datetime, timezone
from typing import Any
from pathlib import Path

from ..evaluation.regenerate import ensure_targets
from ..inference.extract import extractor
from ..inference.settings import InferConfig
from ..predictions import Prediction, PredictionStore, as_prediction, record_key
from ..protocols import record as protocol_record
from ..results import environments_differ
from ..results.schema import ResultsFile, ResultsFileError, load_results, results_paths, write_results
from ..registry import build_dataset, build_evaluator
from ..targets.locate import targets_digest
from ..utils.progress import ProgressFile
from ..utils.workdir import remove_parts
from .base import BaseTask
from .contract import EXIT_FAILED, EXIT_OK


def with_answers(problems, dataset, predictions) -> list[dict[str, Any]]:
    """The problems of a results file, each step record with its answer and tests (and, where the
    split has it, the gold code): what a reader needs beside each verdict, so that the results
    file alone explains it (the question, the answer as given and as run, the tests)."""
    steps = {s.step_id: s for p in dataset.problems for s in p.steps}
    for problem in problems:
        for record in problem['steps']:
            step = steps[record['step_id']]
            pred = as_prediction(predictions.get(record_key(record['step_id'], record.get('sample', 0))))
            record['answer'] = pred.answer() if pred is not None else {}
            record['tests'] = list(step.test_cases)
            if step.ground_truth_code is not None:
                record['gold_code'] = step.ground_truth_code
    return problems


def _harness_failed(results):
    """Whether a results file holds a step the harness failed (an eval_error)."""
    return any(step.status == 'eval_error' for step in results.steps())


def extracted_again(predictions, extraction) -> dict[str, Prediction]:
    """The predictions with each answer's code taken by `extraction` where it was taken by another
    rule (a protocol's scoring knob: a re-grade may score saved answers with another rule)."""
    rule = extractor(extraction)
    out = {}
    for key, record in predictions.items():
        pred = as_prediction(record)
        made_with = (pred.settings or {}).get('extraction', 'official')
        if made_with != extraction and pred.response is not None and not pred.error and pred.program is None:
            pred = pred.model_copy(update={'code': rule(pred.response)})
        out[key] = pred
    return out


def answers_settings(predictions) -> dict[str, Any]:
    """The knobs of the answers (protocols/knobs.py, phase 'answers') as the predictions were made:
    their settings, and the temperature their model was asked with."""
    settings = next((p.settings for p in map(as_prediction, predictions.values()) if p is not None and p.settings),
                    None)
    if not settings:
        return None
    out = {k: settings[k] for k in ('split', 'with_bg', 'prefilled_mode', 'mode', 'max_out_len',
                                    'tool_use_max_loops', 'code_timeout_seconds') if k in settings}
    out['n'] = settings.get('n', 1)
    model = settings.get('model') or {}
    if 'temperature' in model:
        out['temperature'] = model['temperature']
    return out


def environment_differences(problems) -> list[dict[str, Any]]:
    """The steps whose scoring environments gave different verdicts, for the summary and the report."""
    return [{'step_id': s['step_id'], 'sample': p.get('sample'), 'status': s['status'],
             'verdicts': s['environment_verdicts']}
            for p in problems for s in p['steps'] if environments_differ(s)]


class EvalTask(BaseTask):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.model_abbr = cfg.model_abbr
        self.dataset_cfg = dict(cfg.dataset)
        self.dataset_abbr = self.dataset_cfg['abbr']
        self.shard = cfg.shard
        self.merge_shards = list(cfg.merge_shards)

    @property
    def store(self) -> PredictionStore:
        """The predictions of this evaluation's model and dataset."""
        return PredictionStore(self.run_dir.predictions_path(self.model_abbr, self.dataset_abbr))

    @property
    def final_path(self) -> Path:
        """The results file of this model and dataset."""
        return self.run_dir.results_path(self.model_abbr, self.dataset_abbr)

    @property
    def results_path(self) -> Path:
        """Where this task writes: its shard's part file, or the results file."""
        return self.run_dir.part_path(self.final_path, self.shard) if self.shard else self.final_path

    @property
    def part_paths(self) -> list[Path]:
        """The part files of the shards this task merges."""
        return [self.run_dir.part_path(self.final_path, shard) for shard in self.merge_shards]

    def _current(self, paths):
        """The results files among `paths` that were computed from the current predictions and
        evaluator settings (the predictions are hashed once for all of them)."""
        digest, identity = self.store.digest(), build_evaluator(self.dataset_cfg).identity()
        current = []
        for path in paths:
            if not path.is_file():
                continue
            try:
                results = load_results(path, texts=False)     # the verdicts alone
            except ResultsFileError:
                continue
            saved = results.evaluator
            # Worker counts and the executor do not change verdicts; the rest does.
            if results.predictions_digest == digest and all(saved.get(k) == v for k, v in identity.items()):
                current.append(results)
        return current

    def is_complete(self) -> bool:
        """Results exist and were computed from the current predictions and evaluator settings
        (for a shard: its part, or the merged results), and none of their steps is an eval_error:
        the harness failed there (e.g. a worker killed under it), so -r scores it again (the
        other verdicts are read back from the run's verdict cache)."""
        return any(not _harness_failed(results) for results in self._current({self.results_path, self.final_path}))

    def _from_parts(self):
        """(step_id, sample) -> StepRecord decided by the shards, from their current parts."""
        known = {}
        for part in self._current(self.part_paths) if self.part_paths else ():
            for step in part.steps():
                if step.status != 'skipped':
                    record = step.verdict()
                    known[record.step_id, record.sample or 0] = record
        return known

    def run(self) -> int:
        if not self.store.exists():
            self.log(f'no predictions at {self.store.path}; run inference first (-m all or -m infer)')
            return EXIT_FAILED
        dataset = build_dataset(self.dataset_cfg)
        evaluator = build_evaluator(self.dataset_cfg)
        targets = ensure_targets(dataset)
        infer = InferConfig.of(self.dataset_cfg.get('infer_cfg'))
        predictions = extracted_again(self.store.load(), infer.extraction)
        digest = self.store.digest()
        samples = infer.n
        progress = ProgressFile(self.progress_path, self.name, dataset.scored_step_count * samples)
        counts = {'done': 0, 'failed': 0}

        def step_name(step_id, sample):
            return f'{step_id} (sample {sample})' if samples > 1 else step_id

        def on_step(record):
            counts['done'] += 1
            counts['failed'] += not record.passed
            progress.finished(step_name(record.step_id, record.sample or 0))
            progress.update(done=counts['done'], errors=counts['failed'])

        start = time.monotonic()
        known = self._from_parts()
        if self.merge_shards:
            self.log(f'{len(known)} verdicts from {len(self.part_paths)} shards')
        environments = evaluator.ready_environments(dataset.data_dir, say=self.log)
        scores = evaluator.evaluate(dataset, predictions, targets, on_step=on_step,
                                    run_root=self.run_dir.root, n=samples,
                                    ks=(self.dataset_cfg.get('eval_cfg') or {}).get('pass_at_k', ()),
                                    known=known, environments=environments,
                                    on_start=lambda sid, sample: progress.started(step_name(sid, sample)))
        protocol = protocol_record(self.dataset_cfg, answers_settings(predictions))
        results = ResultsFile.model_validate({
            'model': self.model_abbr,
            'dataset': self.dataset_abbr,
            'split': dataset.split,
            'with_bg': dataset.with_bg,
            'targets': targets.kind,
            **{k: v for k, v in scores.items() if k != 'problems'},
            # how these numbers were made (protocols/), what scored them, against which targets
            'protocol': protocol,
            'scored_with': evaluator.scored_with,
            'targets_sha256': targets_digest(targets),
            'environment_differences': environment_differences(scores['problems']),
            'targets_file': str(targets.path),
            'evaluator': evaluator.settings(),
            'protections': evaluator.protections,
            'predictions_digest': digest,
            'duration_s': round(time.monotonic() - start, 3),
            'created_at': datetime.now(timezone.utc).isoformat(timespec='seconds'),
            'problems': with_answers(scores['problems'], dataset, predictions),
        })
        for missing in evaluator.inactive_protections():
            self.log(f'warning: sandbox layer not active on this machine: {missing}')
        write_results(self.results_path, results)
        remove_parts([file for part in self.part_paths for file in results_paths(part)])
        progress.update(done=results.subproblem_total, force=True)
        self.log(f'main problems {results.main_problem_resolved}/{results.main_problem_total}, '
                 f'steps {results.subproblem_correct}/{results.subproblem_total} '
                 f'(targets: {targets.kind}; protocol: {protocol["name"]} {protocol["fingerprint"]}) '
                 f'-> {self.results_path}')
        return EXIT_OK
