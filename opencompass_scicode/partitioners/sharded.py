"""Partitioners that split work into shards of whole problems, for more machines than one.

A shard holds whole problems: a problem's steps stay together and in order,
because each step's program is built on the problem's earlier steps.
"""
import math

from ..utils.checks import check_number
from ..registry import register
from .base import BasePartitioner, spread


@register
class NumWorkerPartitioner(BasePartitioner):
    """num_worker: shards per model (inference) and per model and dataset (evaluation); problems
    are spread longest first so that shards take about as long."""

    def __init__(self, num_worker: int = 8):
        self.num_worker = check_number('num_worker', num_worker, whole=True, at_least=1, example=8)

    def split(self, costs: list[tuple], stage: str) -> list[list[str]]:
        """num_worker shards (fewer when there are fewer problems) of the problem ids in `costs`."""
        return spread(costs, min(self.num_worker, len(costs)) or 1)


@register
class SizePartitioner(BasePartitioner):
    """Shards no bigger than a budget, in the estimated costs of partitioners/costs.py:
    max_task_size: inference, in characters of prompt sent (steps x prompt length);
    max_eval_seconds: evaluation, in remembered step seconds."""

    def __init__(self, max_task_size: int = 400_000, max_eval_seconds: float = 600.0):
        self.max_task_size = check_number('max_task_size', max_task_size, above=0, example=400_000)
        self.max_eval_seconds = check_number('max_eval_seconds', max_eval_seconds, above=0, example=600.0)

    def split(self, costs: list[tuple], stage: str) -> list[list[str]]:
        """As few shards of the problem ids in `costs` as keep each within `stage`'s budget (on
        average: the problems are spread longest first)."""
        budget = self.max_task_size if stage == 'infer' else self.max_eval_seconds
        count = max(1, math.ceil(sum(c for _, c in costs) / budget))
        return spread(costs, min(count, len(costs)) or 1)
