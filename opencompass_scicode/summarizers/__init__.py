"""Summaries of a run: tables (text, CSV, Markdown) and a plot, from its results files."""
from .scicode import SciCodeSummarizer

__all__ = ['SciCodeSummarizer']
