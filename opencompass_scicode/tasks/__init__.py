"""Tasks: one unit of work each (prepare targets, infer one model, evaluate one model on one
dataset), described by a task file the partitioner writes.

Only the contract is imported here: runners and run.py read task specs without
loading what the tasks themselves need (models, the evaluator, the sandbox).
"""
from .contract import EXIT_FAILED, EXIT_OK, EXIT_SKIPPED, EXIT_STEP_ERRORS, TaskSpec, TaskStatus

__all__ = ['EXIT_FAILED', 'EXIT_OK', 'EXIT_SKIPPED', 'EXIT_STEP_ERRORS', 'TaskSpec', 'TaskStatus']
