"""Runners: launch the task files of a stage and report how each ended."""
from .local import LocalRunner

__all__ = ['LocalRunner']
