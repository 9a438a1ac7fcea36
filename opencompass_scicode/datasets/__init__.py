"""SciCode data: the official files, problems and steps, and the chain of code a step builds on."""
from .chain import PREFILLED_MODES, code_chain, gold_code, prefilled_code, strip_imports
from .scicode import Problem, SciCodeDataset, Step

__all__ = ['PREFILLED_MODES', 'Problem', 'SciCodeDataset', 'Step', 'code_chain', 'gold_code',
           'prefilled_code', 'strip_imports']
