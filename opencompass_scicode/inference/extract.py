"""Code extraction from a model response: the official rule, and AgentCompass's.

- `official` (default): the first block opened by ```python, else the first fenced block;
  with no fence at all, the whole response is the code.
- `fenced` (AgentCompass's): the same blocks, but a response with no fence, or whose block
  holds no code, has none: the step is a `parse_error` with null code, and its prose never
  reaches a later step's prompt or program (the engine asks the later steps without it).

Either way, the import lines are removed afterwards: the problem's dependencies are put in
front of the program instead (datasets/chain.py).
"""
from ..datasets.chain import strip_imports

EXTRACTIONS = ('official', 'fenced')


def fenced_block(response):
    """The code the official harness takes from a response (before import removal)."""
    if '```' not in response:
        return response
    if '```python' in response:
        return response.split('```python')[1].split('```')[0]
    return response.split('```')[1].split('```')[0]


def extract_code(response):
    """The official rule."""
    return strip_imports(fenced_block(response))


def extract(response, rule='official'):
    """The code of `response` under `rule` (one of EXTRACTIONS); None where the rule finds none."""
    if rule == 'official':
        return extract_code(response)
    if rule != 'fenced':
        raise ValueError(f'unknown extraction {rule!r}; one of {", ".join(EXTRACTIONS)}')
    if '```' not in response:
        return None
    code = extract_code(response)
    return code if code.strip() else None
