"""What models answered: one append-only JSONL file of step records per model and dataset."""
from .record import ANSWER_FIELDS, Prediction, as_prediction
from .store import PredictionStore, merge_parts, record_key

__all__ = ['ANSWER_FIELDS', 'Prediction', 'PredictionStore', 'as_prediction', 'merge_parts', 'record_key']
