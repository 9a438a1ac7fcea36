"""Partitioners: turn a config's models x datasets into task files for one stage."""
from .base import BasePartitioner
from .naive import NaivePartitioner

__all__ = ['BasePartitioner', 'NaivePartitioner']
