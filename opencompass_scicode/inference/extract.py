"""Official code extraction from a model response."""
import re

# Dependencies are injected by the harness, so every import line goes,
# indented ones included (official behaviour).
_IMPORT_LINE = re.compile(r'^\s*(import .*|from .*\s+import\s+.*)', re.MULTILINE)


def fenced_block(response):
    """The code the official harness takes from a response (before import removal)."""
    if '```' not in response:
        return response
    if '```python' in response:
        return response.split('```python')[1].split('```')[0]
    return response.split('```')[1].split('```')[0]


def strip_imports(code):
    return _IMPORT_LINE.sub('', code)


def extract_code(response):
    return strip_imports(fenced_block(response))
