"""What scoring produced: one typed record per step verdict, as results files keep them, and
the statistics read from them."""
from .record import CATEGORIES, STATUSES, StepRecord, environments_differ

__all__ = ['CATEGORIES', 'STATUSES', 'StepRecord', 'environments_differ']
