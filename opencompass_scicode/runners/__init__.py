"""Runners: launch the task files of a stage and report how each ended."""
from .base import BaseRunner
from .local import LocalRunner
from .slurm import SlurmRunner

__all__ = ['BaseRunner', 'LocalRunner', 'SlurmRunner']
