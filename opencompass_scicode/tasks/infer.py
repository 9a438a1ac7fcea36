from ..config.builder import build_dataset, build_model, prefilled_mode
from ..inference.engine import Inferencer, infer_settings
from ..predictions import PredictionStore, fingerprint
from ..utils.progress import ProgressFile
from .base import EXIT_OK, EXIT_STEP_ERRORS, BaseTask


class InferTask(BaseTask):
    stage = 'infer'

    @property
    def store(self):
        return PredictionStore(self.run_dir.predictions_path(self.model_abbr, self.dataset_abbr))

    def _objects(self):
        model = build_model(self.model_cfg)
        dataset = build_dataset(self.dataset_cfg)
        return model, dataset

    def is_complete(self):
        """Every scored step has an error-free record made with today's settings."""
        if not self.store.exists():
            return False
        model, dataset = self._objects()
        settings_fp = fingerprint(infer_settings(model, dataset, self.dataset_cfg.get('infer_cfg', {}),
                                                 prefilled_mode(self.dataset_cfg)))
        records = self.store.load()
        for problem in dataset.problems:
            for step in problem.scored_steps:
                rec = records.get(step.step_id)
                if rec is None or rec.get('error') or rec.get('settings_fp') != settings_fp:
                    return False
        return True

    def run(self):
        model, dataset = self._objects()
        model.check_dataset(dataset)
        progress = ProgressFile(self.progress_path, self.name, dataset.scored_step_count)
        inferencer = Inferencer(
            model, dataset, self.store, self.dataset_cfg.get('infer_cfg', {}),
            prefilled_mode(self.dataset_cfg),
            on_progress=lambda s: progress.update(done=s.done, errors=s.errors))
        stats = inferencer.run()
        progress.update(done=stats.done, errors=stats.errors, force=True)
        self.log(f'{stats.done}/{stats.total} steps ({stats.reused} reused), {stats.errors} errors '
                 f'-> {self.store.path}')
        if stats.errors:
            self.log(f'steps without code: {", ".join(stats.error_steps)}')
            return EXIT_STEP_ERRORS
        return EXIT_OK
