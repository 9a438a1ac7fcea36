import pytest

from helpers import tiny_dataset
from opencompass_scicode.datasets.chain import code_chain, first_definition, header_name, prefilled_code
from opencompass_scicode.prompts import build_prompt


def test_first_step_prompt_without_background(tiny_data):
    ds = tiny_dataset(tiny_data, with_bg=False)
    problem = ds.problems[0]
    prompt = build_prompt(ds.template, problem, 1, [], with_bg=False)
    assert prompt == (
        'NO-BG TEMPLATE\nPREVIOUS:\n\nNEXT:\n'
        'Add two numbers.\n\ndef add(a, b):\n    """Sum."""\n\n    return s\n'
        'DEPS:\nimport numpy as np\nEND')


def test_second_step_prompt_with_background_hand_checked(tiny_data):
    ds = tiny_dataset(tiny_data, with_bg=True)
    problem = ds.problems[0]
    prompt = build_prompt(ds.template, problem, 2, ['MODEL CODE 1'], with_bg=True)
    assert prompt == (
        'BG TEMPLATE\nPREVIOUS:\n'
        'Add two numbers.\nAddition is commutative.\n\nMODEL CODE 1\n'
        'NEXT:\n'
        # empty background still appended after a newline (official)
        'Double a number using add.\n\n\ndef twice(a):\n    """Twice."""\n\n    return t\n'
        'DEPS:\nimport numpy as np\nEND')


def test_template_choice_is_the_official_inverted_one(official_data):
    from opencompass_scicode.datasets import SciCodeDataset
    without = SciCodeDataset(path=str(official_data), with_bg=False).template
    with_bg = SciCodeDataset(path=str(official_data), with_bg=True).template
    assert 'Background: ' in without            # background_comment_template asks for a background
    assert 'background knowledge' in with_bg      # multistep_template gives it
    assert without != with_bg


def test_previous_steps_are_separated_and_last_separator_dropped(tiny_data):
    from opencompass_scicode.prompts.builder import previous_steps_text
    ds = tiny_dataset(tiny_data)
    steps = ds.problems[0].steps
    text = previous_steps_text(steps, ['C1', 'C2'], with_bg=False)
    assert text == 'Add two numbers.\n\nC1\n\n------\n\nDouble a number using add.\n\nC2'


def test_official_prefilled_keeps_only_first_def_of_class_steps(official_data):
    from opencompass_scicode.datasets import SciCodeDataset
    ds = SciCodeDataset(path=str(official_data), split='test')
    p13 = ds.problem('13')
    s136 = p13.steps[5]
    assert s136.step_id == '13.6' and s136.prefilled
    text = ds.prefilled_file('13.6')
    official = prefilled_code(s136, text, 'official')
    assert official.startswith('def __init__(self, n_grid, x_out):')
    assert 'class Maxwell' not in official
    full = prefilled_code(s136, text, 'full')
    assert full == text and 'class Maxwell' in full
    # 76.3 is a plain function: official mode keeps it whole (re-rendered by ast.unparse)
    p76 = ds.problem('76')
    code76 = prefilled_code(p76.steps[2], ds.prefilled_file('76.3'), 'official')
    assert code76.startswith('def generate_dna(N: int, PWM: dict) -> tuple:')


def test_code_chain_uses_model_code_and_prefilled_code(official_data):
    from opencompass_scicode.datasets import SciCodeDataset
    ds = SciCodeDataset(path=str(official_data), split='test')
    p62 = ds.problem('62')
    chain = code_chain(p62, 3, {'62.2': 'MODEL 62.2'}, ds.prefilled_file, 'official')
    assert chain[1] == 'MODEL 62.2'
    assert chain[0].startswith('def __init__(self, length, basis_size, operator_dict):')
    assert code_chain(p62, 3, {}, ds.prefilled_file, 'official')[1] is None


def test_header_name_prefers_def_then_class():
    assert header_name('class A:\n    def __init__(self):') == '__init__'
    assert header_name('class B(Base):\n    pass') == 'B'
    with pytest.raises(ValueError):
        header_name('x = 1')
    assert first_definition('def a():\n  pass\ndef b():\n  return 2', 'b') == 'def b():\n    return 2'
    assert first_definition('def a():\n  pass', 'zzz') is None
