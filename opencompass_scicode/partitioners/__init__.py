"""Partitioners: turn a config's models x datasets into task files for one stage."""
from .base import BasePartitioner
from .naive import NaivePartitioner
from .sharded import NumWorkerPartitioner, SizePartitioner

__all__ = ['BasePartitioner', 'NaivePartitioner', 'NumWorkerPartitioner', 'SizePartitioner']
