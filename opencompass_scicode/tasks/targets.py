"""Regenerates the validation targets a dataset needs, before inference starts.

Only for the validation split without the official test_data.h5 (see
targets/locate.py). Done first so that early evaluation, inside the
inference task, can score problems as they finish.
"""
from ..evaluation.regenerate import ensure_targets
from ..registry import build_dataset
from ..targets.locate import missing_regenerated
from ..utils.progress import ProgressFile
from .base import BaseTask
from .contract import EXIT_OK


class TargetsTask(BaseTask):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.dataset = build_dataset(cfg.dataset)

    def is_complete(self) -> bool:
        return not missing_regenerated(self.dataset)

    def run(self) -> int:
        wanted = {s.step_id for p in self.dataset.problems for s in p.scored_steps}
        progress = ProgressFile(self.progress_path, self.name, len(missing_regenerated(self.dataset)))
        targets = ensure_targets(self.dataset, progress=lambda done, total: progress.update(done, total=total))
        failed = {k: v for k, v in (targets.report or {}).items() if v != 'ok' and k in wanted}
        progress.update(errors=len(failed), force=True)
        for step_id, why in sorted(failed.items()):
            self.log(f'step {step_id}: no regenerated target ({why.splitlines()[0]})')
        self.log(f'{len(wanted) - len(failed)}/{len(wanted)} steps have targets -> {targets.path}')
        return EXIT_OK
