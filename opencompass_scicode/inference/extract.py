"""Official code extraction from a model response."""
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
