"""What models answered: one append-only JSONL file of step records per model and dataset."""
from .store import PredictionStore, merge_parts, record_key

__all__ = ['PredictionStore', 'merge_parts', 'record_key']
