"""What models answered: one append-only JSONL file of step records per model and dataset."""
from .store import PredictionStore, record_key

__all__ = ['PredictionStore', 'record_key']
