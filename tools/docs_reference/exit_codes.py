"""reference/exit-codes.md: the exit statuses, read from the constants that define them.

Where it reads: the `EXIT_*` constants of `opencompass_scicode/errors.py` (the commands) and of
`opencompass_scicode/tasks/contract.py` (a task process, as its runner reads it), each with the
comment on its line, which says what it means. A constant without a comment stops the build.
"""
import ast
import importlib
import inspect
import io
import tokenize

from .markdown import cell, code, generated_note, table


def exit_codes(module_name):
    """[(name, value, meaning)] of the module's EXIT_* constants, in the order it defines them."""
    module = importlib.import_module(module_name)
    source = inspect.getsource(module)
    comments = {tok.start[0]: tok.string.lstrip('#').strip()
                for tok in tokenize.generate_tokens(io.StringIO(source).readline) if tok.type == tokenize.COMMENT}
    out = []
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        name = node.targets[0].id
        if not name.startswith('EXIT_'):
            continue
        if node.lineno not in comments:
            raise LookupError(f'{module_name}.{name} has no comment on its line saying what it means')
        out.append((name, getattr(module, name), comments[node.lineno]))
    if not out:
        raise LookupError(f'{module_name} defines no EXIT_* constants')
    return out


def _table(module_name):
    return table(['status', 'name', 'meaning'],
                 [[code(value), code(name), cell(meaning)] for name, value, meaning in exit_codes(module_name)])


def page():
    return '\n'.join([
        '# Exit codes', '',
        generated_note('opencompass_scicode/errors.py', 'opencompass_scicode/tasks/contract.py'),
        '## Commands {#commands}', '',
        '`python run.py`, `opencompass-scicode`, `python -m opencompass_scicode`, '
        '`python -m opencompass_scicode.targets.fetch` and `python -m opencompass_scicode.targets.standin` '
        'end with one of these ([Command lines](commands.md)). A command line that argparse refuses '
        '(an unknown flag, a missing value) also ends with 2.', '',
        _table('opencompass_scicode.errors'), '',
        '## Task processes {#task-processes}', '',
        'Each task (`python -m opencompass_scicode.tasks TASK_FILE`) tells its runner how it ended; '
        'the runner shows that as the task\'s state (`status.json` and the table at the end of a run) '
        'and never looks at what the task did. See [Runs, runners and shards](../guide/running.md).', '',
        _table('opencompass_scicode.tasks.contract'), '',
    ])
