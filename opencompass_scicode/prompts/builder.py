"""The official SciCode prompt for one step, byte for byte.

Template choice is the official one and looks inverted: *with* background
uses multistep_template.txt, *without* uses background_comment_template.txt
(which asks the model to write the background itself). The dataset object
picks the file; this module only fills it.
"""


def step_text(step, with_bg) -> str:
    """A step's description, with its background when `with_bg`."""
    # The official generator appends the background even when it is empty.
    if with_bg:
        return step.description + '\n' + step.background
    return step.description


def previous_steps_text(steps, codes, with_bg) -> str:
    """The earlier steps' texts, each followed by its code, as the official prompt shows them."""
    parts = []
    for step, code in zip(steps, codes):
        parts.extend([step_text(step, with_bg), code, '------'])
    return '\n\n'.join(parts[:-1])


def next_step_text(step, with_bg) -> str:
    """The text of the step being asked, then its function header and return line."""
    header = step.function_header + '\n\n' + step.return_line
    return '\n\n'.join([step_text(step, with_bg), header])


def build_prompt(template, problem, step_index, prior_codes, with_bg) -> str:
    """Prompt for step `step_index` (1-based) given the code of the steps before it."""
    steps = problem.steps[:step_index - 1]
    if len(prior_codes) != len(steps):
        raise ValueError(f'step {step_index} of problem {problem.problem_id} needs '
                         f'{len(steps)} earlier code blocks, got {len(prior_codes)}')
    return template.format(
        problem_steps_str=previous_steps_text(steps, prior_codes, with_bg),
        next_step_str=next_step_text(problem.steps[step_index - 1], with_bg),
        dependencies=problem.dependencies,
    )


def build_chat_prompt(template, problem, step_index, with_bg, earlier_steps_note, given=(), given_note='') -> str:
    """A later turn of the chat mode: the earlier steps are already in the conversation, except
    prefilled steps (13.6, 62.1, 76.3), never asked, whose code no turn holds: `given` is
    [(step, code)] of those right before this one, shown after `given_note`."""
    text = earlier_steps_note if step_index > 1 else ''
    if given:
        steps, codes = zip(*given)
        text += f'\n\n{given_note}\n\n' + previous_steps_text(steps, codes, with_bg)
    return template.format(problem_steps_str=text,
                           next_step_str=next_step_text(problem.steps[step_index - 1], with_bg),
                           dependencies=problem.dependencies)
