"""Scoring of one model on one dataset: its predictions in, its results file out."""
import json
import time
from datetime import datetime, timezone

from ..evaluation.regenerate import ensure_targets
from ..inference.settings import InferConfig
from ..predictions import PredictionStore, record_key
from ..registry import build_dataset, build_evaluator
from ..utils.progress import ProgressFile
from ..utils.workdir import write_json_atomic
from .base import BaseTask
from .contract import EXIT_FAILED, EXIT_OK


# What a reader needs beside each verdict, so that the results file alone explains it: the
# question, the answer as given and as run, and the tests it was run against.
ANSWER_FIELDS = ('prompt', 'response', 'code', 'program', 'reasoning', 'finish_reason', 'usage', 'error')


def with_answers(problems, dataset, predictions):
    """The problems of a results file, each step record with its answer and tests (and, where the
    split has it, the gold code)."""
    steps = {s.step_id: s for p in dataset.problems for s in p.steps}
    for problem in problems:
        for record in problem['steps']:
            step = steps[record['step_id']]
            pred = predictions.get(record_key(record['step_id'], record.get('sample', 0))) or {}
            record['answer'] = {k: pred[k] for k in ANSWER_FIELDS if pred.get(k) not in (None, '', {})}
            record['tests'] = list(step.test_cases)
            if step.ground_truth_code is not None:
                record['gold_code'] = step.ground_truth_code
    return problems


class EvalTask(BaseTask):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.model_abbr = cfg['model_abbr']
        self.dataset_cfg = dict(cfg['dataset'])
        self.dataset_abbr = self.dataset_cfg['abbr']

    @property
    def store(self):
        return PredictionStore(self.run_dir.predictions_path(self.model_abbr, self.dataset_abbr))

    @property
    def results_path(self):
        return self.run_dir.results_path(self.model_abbr, self.dataset_abbr)

    def is_complete(self):
        """Results exist and were computed from the current predictions and evaluator settings."""
        try:
            results = json.loads(self.results_path.read_text())
        except (OSError, ValueError):
            return False
        evaluator = build_evaluator(self.dataset_cfg)
        saved = results.get('evaluator') or {}
        # Worker counts and the executor do not change verdicts; the rest does.
        return (results.get('predictions_digest') == self.store.digest()
                and all(saved.get(k) == v for k, v in evaluator.identity().items()))

    def run(self):
        if not self.store.exists():
            self.log(f'no predictions at {self.store.path}; run inference first (-m all or -m infer)')
            return EXIT_FAILED
        dataset = build_dataset(self.dataset_cfg)
        evaluator = build_evaluator(self.dataset_cfg)
        targets = ensure_targets(dataset)
        predictions = self.store.load()
        digest = self.store.digest()
        progress = ProgressFile(self.progress_path, self.name, dataset.scored_step_count
                                * InferConfig.of(self.dataset_cfg.get('infer_cfg')).n)
        counts = {'done': 0, 'failed': 0}

        def on_step(record):
            counts['done'] += 1
            counts['failed'] += not record.passed
            progress.update(done=counts['done'], errors=counts['failed'])

        start = time.monotonic()
        samples = InferConfig.of(self.dataset_cfg.get('infer_cfg')).n
        scores = evaluator.evaluate(dataset, predictions, targets, on_step=on_step,
                                    shared_dir=self.run_dir.root / 'cache' / 'verdicts', n=samples,
                                    ks=(self.dataset_cfg.get('eval_cfg') or {}).get('pass_at_k', ()))
        results = {
            'model': self.model_abbr,
            'dataset': self.dataset_abbr,
            'split': dataset.split,
            'with_bg': dataset.with_bg,
            'targets': targets.kind,
            **{k: v for k, v in scores.items() if k != 'problems'},
            'targets_file': str(targets.path),
            'evaluator': evaluator.settings(),
            'protections': evaluator.protections,
            'predictions_digest': digest,
            'duration_s': round(time.monotonic() - start, 3),
            'created_at': datetime.now(timezone.utc).isoformat(timespec='seconds'),
            'problems': with_answers(scores['problems'], dataset, predictions),
        }
        for missing in evaluator.inactive_protections():
            self.log(f'warning: sandbox layer not active on this machine: {missing}')
        write_json_atomic(self.results_path, results)
        progress.update(done=results['subproblem_total'], force=True)
        self.log(f'main problems {results["main_problem_resolved"]}/{results["main_problem_total"]}, '
                 f'steps {results["subproblem_correct"]}/{results["subproblem_total"]} '
                 f'(targets: {targets.kind}) -> {self.results_path}')
        return EXIT_OK
