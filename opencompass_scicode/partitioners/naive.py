"""Today's plan: one inference task per model, one evaluation task per model and dataset.

Inference runs a model over all its datasets in one task, so that the model's
concurrency and rate limits hold for the whole run.
"""
from ..registry import register
from .base import BasePartitioner


@register
class NaivePartitioner(BasePartitioner):
    """Every dataset in one shard: the plan above."""

    def split(self, costs: list[tuple], stage: str) -> list[list[str]]:
        """One shard of all the problem ids in `costs`, in dataset order."""
        return [[pid for pid, _ in costs]]
