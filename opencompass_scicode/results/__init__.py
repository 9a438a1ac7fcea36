"""What scoring produced: one typed record per step verdict, as results files keep them."""
from .record import STATUSES, StepRecord

__all__ = ['STATUSES', 'StepRecord']
