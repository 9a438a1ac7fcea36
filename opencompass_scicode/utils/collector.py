"""Python's cycle collector held off while a large, long-lived structure is built.

The summary of a large run builds hundreds of thousands of objects it keeps until it has
written the report (the records of every step, the report's chunks). The collector's full
passes walk all of them again and again as they grow, and find nothing to free: the records
hold no cycles. Measured on benchmarks/scale.py, those passes cost about a quarter of the
summary's time.
"""
import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cycle collection inside the block (objects without cycles are freed as ever); the
    collector is back as it was after it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
