from .local import LocalRunner, TaskStatus  # noqa: F401
