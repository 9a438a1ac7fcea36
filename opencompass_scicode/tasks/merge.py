"""Brings the part files of an inference task's shards into the model's predictions files.

It runs after every shard has ended well; the predictions files it writes are
those an unsharded run writes (the same records; each file the run's earlier
records, then the shards' records). Usage is counted over the merged files.
"""
from ..predictions import PredictionStore, merge_parts
from ..utils.workdir import write_json_atomic
from .base import BaseTask
from .contract import EXIT_OK


class MergePredictionsTask(BaseTask):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.model_abbr = cfg.model_abbr
        self.dataset_abbrs = [d['abbr'] for d in cfg.datasets]
        self.shards = list(cfg.shards)

    def _finals_and_parts(self):
        for abbr in self.dataset_abbrs:
            final = self.run_dir.predictions_path(self.model_abbr, abbr)
            yield abbr, final, [self.run_dir.part_path(final, shard) for shard in self.shards]

    def is_complete(self) -> bool:
        """Nothing left to merge (the shards found their work done, or it was merged already)."""
        return not any(part.is_file() for _, _, parts in self._finals_and_parts() for part in parts)

    def run(self) -> int:
        usage = {}
        for abbr, final, parts in self._finals_and_parts():
            found = [p for p in parts if p.is_file()]
            merge_parts(final, found)
            usage[abbr] = PredictionStore(final).usage()
            self.log(f'{abbr}: {len(found)} part(s) merged -> {final}')
        write_json_atomic(self.run_dir.usage_path(self.model_abbr), usage)
        return EXIT_OK
