from .base import EXIT_OK, EXIT_STEP_ERRORS, TASK_TYPES, load_task  # noqa: F401
