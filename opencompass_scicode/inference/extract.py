"""Code extraction from a model response: the official rule, and the rules other harnesses use
(`infer_cfg.extraction` names one; a protocol's `extraction` knob fills it in, see protocols/).

- `official` (default): the first block opened by ```python, else the first fenced block;
  with no fence at all, the whole response is the code.
- `fenced` (AgentCompass's): the same blocks, but a response with no fence, or whose block
  holds no code, has none: the step is a `parse_error` with null code, and its prose never
  reaches a later step's prompt or program (the engine asks the later steps without it).
- `opencompass`: the first ```python block, nothing without one.
- `inspect_evals`: the fence markers removed, the rest kept, imports included.

Except under `inspect_evals`, the import lines are removed afterwards: the problem's
dependencies are put in front of the program instead (datasets/chain.py).
"""
from typing import Callable

from ..datasets.chain import strip_imports


def fenced_block(response) -> str:
    """The code the official harness takes from a response (before import removal)."""
    if '```' not in response:
        return response
    if '```python' in response:
        return response.split('```python')[1].split('```')[0]
    return response.split('```')[1].split('```')[0]


def extract_code(response) -> str:
    """The official rule."""
    return strip_imports(fenced_block(response))


def python_block_only(response) -> str:
    """OpenCompass's rule (datasets/scicode.py, extract_python_script): the first ```python block,
    nothing without one; import lines removed."""
    if '```python' not in response or '```' not in response.split('```python', 1)[1]:
        return ''
    return strip_imports(response.split('```python')[1].split('```')[0])


def fences_removed(response) -> str:
    """inspect_evals' rule (scicode/util.py, extract_code): every fence marker removed, the rest
    kept as it is, imports included."""
    return response.replace('```python', '').replace('```', '').strip()


def fenced_only(response) -> str | None:
    """AgentCompass's rule: the official blocks, but None (no code) where there is no fence or
    the block holds no code."""
    if '```' not in response:
        return None
    code = extract_code(response)
    return code if code.strip() else None


EXTRACTIONS = {'official': extract_code, 'fenced': fenced_only, 'opencompass': python_block_only,
               'inspect_evals': fences_removed}


def extractor(name) -> Callable[[str], str | None]:
    """The function of extraction rule `name` (a key of EXTRACTIONS): response -> code, or None
    where the rule finds none."""
    return EXTRACTIONS[name]


def extract(response, rule='official') -> str | None:
    """The code of `response` under `rule` (a key of EXTRACTIONS); None where the rule finds none."""
    if rule not in EXTRACTIONS:
        raise ValueError(f'unknown extraction {rule!r}; one of {", ".join(EXTRACTIONS)}')
    return EXTRACTIONS[rule](response)
