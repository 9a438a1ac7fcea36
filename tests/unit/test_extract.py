import pytest

from opencompass_scicode.datasets.chain import strip_imports
from opencompass_scicode.inference.extract import extract_code, fenced_block


def test_python_fence_wins_over_earlier_generic_fence():
    response = 'text\n```\nnot this\n```\nmore\n```python\ndef f():\n    return 1\n```\n```python\nsecond\n```'
    assert fenced_block(response) == '\ndef f():\n    return 1\n'


def test_generic_fence_when_no_python_fence():
    assert fenced_block('a\n```\nx = 1\n```\nb') == '\nx = 1\n'


def test_language_tag_is_case_sensitive():
    # "```Python" is not "```python": the official code takes the generic block,
    # whose first line is then the tag itself.
    assert fenced_block('```Python\nx = 1\n```') == 'Python\nx = 1\n'


def test_no_fence_means_whole_response():
    assert fenced_block('def f():\n    return 2') == 'def f():\n    return 2'


def test_import_lines_are_removed_including_indented_ones():
    code = 'import numpy as np\nfrom scipy import linalg\ndef f():\n    import math\n    return 1\n'
    out = strip_imports(code)
    assert 'import' not in out
    assert 'def f():' in out and 'return 1' in out


def test_lines_that_only_look_like_imports_stay():
    code = 'important = 1\nfromage = 2\nx = "from a import b"\n'
    out = strip_imports(code)
    assert 'important = 1' in out and 'fromage = 2' in out
    # A string starting a line with `from ... import ...` is removed too: official regex.
    assert strip_imports('from a import b') == ''


def test_extract_code_end_to_end():
    response = 'Here:\n```python\nimport numpy as np\n\ndef g(x):\n    return np.sum(x)\n```\nDone.'
    assert extract_code(response) == '\n\ndef g(x):\n    return np.sum(x)\n'


def test_the_fenced_rule_finds_no_code_in_prose_or_an_empty_block_and_the_official_rule_is_unchanged():
    from opencompass_scicode.inference.extract import extract
    prose = 'I would first normalise the vector, then return it.'
    assert extract(prose, 'fenced') is None and extract(prose) == prose          # official: the whole answer
    for empty in ('```python\n```', 'Here:\n```python\n\n   \n```', '```python\nimport numpy as np\n```'):
        assert extract(empty, 'fenced') is None, empty
    assert extract('```python\n```') == '\n'                                      # official keeps the block
    fenced = 'Here:\n```python\nimport numpy as np\ndef f():\n    return 1\n```'
    assert extract(fenced, 'fenced') == extract(fenced, 'official') == '\ndef f():\n    return 1\n'
    with pytest.raises(ValueError, match="unknown extraction 'loose'"):
        extract(fenced, 'loose')


def test_the_extraction_is_an_inference_setting_that_only_changes_fingerprints_when_not_official():
    from opencompass_scicode.errors import ConfigError
    from opencompass_scicode.inference.settings import InferConfig
    assert 'extraction' not in InferConfig().settings()
    assert InferConfig(extraction='fenced').settings()['extraction'] == 'fenced'
    with pytest.raises(ConfigError, match="unknown extraction rule 'loose'") as caught:
        InferConfig(extraction='loose')
    assert caught.value.key == 'extraction' and "'official', 'fenced'" in caught.value.fix
