from .naive import NaivePartitioner  # noqa: F401
