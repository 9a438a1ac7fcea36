from .evaluator import SciCodeEvaluator  # noqa: F401
