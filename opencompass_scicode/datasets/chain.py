"""The chain of code a step builds on: earlier steps' code and the three prefilled steps.

Prompts show it to the model and test programs run it, so both read it from
here. Model and gold code have their import lines removed (indented ones
too, as the official extraction does): a problem's dependency lines are put
in front of the program instead.

Prefilled steps (13.6, 62.1, 76.3):
`official`: what the official generator inserts. It looks up the name from
the step's function header (the first `def` it finds, so `__init__` for the
two class steps) and keeps only that definition, re-rendered by `ast.unparse`.
Later steps that need the whole class then fail unless the model redefines it.
`full`: the whole file, which is what the benchmark authors meant.
"""
import ast
import re
from typing import Literal

PREFILLED_MODES = ('official', 'full')
PrefilledMode = Literal[PREFILLED_MODES]      # the annotation: a config check refuses others

_IMPORT_LINE = re.compile(r'^\s*(import .*|from .*\s+import\s+.*)', re.MULTILINE)


def strip_imports(code) -> str:
    """`code` without its import lines: a step's dependencies are put in front of the program
    instead."""
    return _IMPORT_LINE.sub('', code)


def gold_code(step) -> str | None:
    """The step's gold code as it stands in a chain (validation split only; None elsewhere)."""
    if step.ground_truth_code is None:
        return None
    return strip_imports(step.ground_truth_code)


def header_name(function_header) -> str:
    """The name of the function (or class) a step's header defines; ValueError if it defines none."""
    match = re.search(r'\bdef\s+(\w+)\s*\(', function_header)
    if match is None:
        match = re.search(r'\bclass\s+(\w+)\s*\(', function_header)
    if match is None:
        raise ValueError('no function or class name in header')
    return match.group(1)


def first_definition(source, name) -> str | None:
    """Source of the first def/class called `name`, in ast.walk (breadth-first) order; all of
    `source` where it does not parse, None where it holds no such definition."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            return ast.unparse(node)
    return None


def prefilled_code(step, file_text, mode) -> str | None:
    """The code of prefilled `step` from its file's text: the whole file (`mode` 'full') or only the
    definition its header names ('official')."""
    if mode == 'full':
        return file_text
    if mode == 'official':
        return first_definition(file_text, header_name(step.function_header))
    raise ValueError(f'unknown prefilled_mode {mode!r}; use one of {PREFILLED_MODES}')


def code_chain(problem, upto_index, codes_by_step, prefilled_text, mode) -> str:
    """Code of steps 1..upto_index-1, the model's own code except for prefilled steps.

    `codes_by_step` maps step_id -> extracted code (None if the model gave none);
    `prefilled_text(step_id)` returns the prefilled file's text.
    """
    chain = []
    for step in problem.steps[:upto_index - 1]:
        if step.prefilled:
            chain.append(prefilled_code(step, prefilled_text(step.step_id), mode))
        else:
            chain.append(codes_by_step.get(step.step_id))
    return chain
