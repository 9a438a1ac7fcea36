"""Code extraction from a model response: the official rule, and the rules other harnesses use
(a protocol's `extraction` knob names one, see protocols/)."""
from ..datasets.chain import strip_imports


def fenced_block(response):
    """The code the official harness takes from a response (before import removal)."""
    if '```' not in response:
        return response
    if '```python' in response:
        return response.split('```python')[1].split('```')[0]
    return response.split('```')[1].split('```')[0]


def extract_code(response):
    return strip_imports(fenced_block(response))


def python_block_only(response):
    """OpenCompass's rule (datasets/scicode.py, extract_python_script): the first ```python block,
    nothing without one; import lines removed."""
    if '```python' not in response or '```' not in response.split('```python', 1)[1]:
        return ''
    return strip_imports(response.split('```python')[1].split('```')[0])


def fences_removed(response):
    """inspect_evals' rule (scicode/util.py, extract_code): every fence marker removed, the rest
    kept as it is, imports included."""
    return response.replace('```python', '').replace('```', '').strip()


EXTRACTIONS = {'official': extract_code, 'opencompass': python_block_only, 'inspect_evals': fences_removed}


def extractor(name):
    """The function of extraction rule `name` (a key of EXTRACTIONS)."""
    return EXTRACTIONS[name]
