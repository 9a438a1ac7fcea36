from .scicode import SciCodeSummarizer  # noqa: F401
