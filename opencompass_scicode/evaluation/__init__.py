"""Scoring: sandboxed execution of the official tests.

`SciCodeEvaluator` is loaded on first use, so that a task that needs one of this package's
small modules (regeneration, early evaluation) does not pay for the evaluator's imports first.
"""


def __getattr__(name):
    if name == 'SciCodeEvaluator':
        from .evaluator import SciCodeEvaluator
        return SciCodeEvaluator
    raise AttributeError(name)


__all__ = ['SciCodeEvaluator']
