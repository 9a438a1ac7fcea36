from .scicode import SciCodeDataset, Problem, Step  # noqa: F401
