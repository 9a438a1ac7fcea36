"""Scoring: sandboxed execution of the official tests.

`SciCodeEvaluator` is loaded on first use, so that worker processes, which
import modules of this package, do not pay for the evaluator's imports.
"""


def __getattr__(name):
    if name == 'SciCodeEvaluator':
        from .evaluator import SciCodeEvaluator
        return SciCodeEvaluator
    raise AttributeError(name)


__all__ = ['SciCodeEvaluator']
