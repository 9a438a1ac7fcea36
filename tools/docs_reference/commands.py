"""reference/commands.md: every command line, read from the argparse parser that parses it.

Each entry point builds its parser inside its `main` (or `cli.parse_args`) and parses at once.
The generator calls it with no arguments while `ArgumentParser.parse_args` is replaced by one
that hands the parser back instead of parsing: what is shown is exactly what the command
accepts, flags, defaults, choices and help, with nothing run.
"""
import argparse
import contextlib
import importlib
import inspect
import sys
from pathlib import Path

from .markdown import cell, code, generated_note, table

ROOT = Path(__file__).resolve().parents[2]


class _Parsed(Exception):
    def __init__(self, parser):
        super().__init__(parser.prog)
        self.parser = parser


@contextlib.contextmanager
def _capturing():
    original = argparse.ArgumentParser.parse_args

    def hand_back(self, args=None, namespace=None):
        raise _Parsed(self)

    argparse.ArgumentParser.parse_args = hand_back
    try:
        yield
    finally:
        argparse.ArgumentParser.parse_args = original


def parser_of(call):
    """The parser `call()` builds and parses with."""
    with _capturing():
        try:
            call()
        except _Parsed as parsed:
            return parsed.parser
    raise LookupError(f'{call} parsed no command line')


def _call_main(module):
    main = importlib.import_module(module).main
    return main([]) if inspect.signature(main).parameters else main()


def _module_main(module, path=None):
    """The `main` of a package module, or of a script outside the package (benchmarks/, tests/)."""
    def call():
        if path is None:
            return _call_main(module)
        folder = str(path.parent)
        added = folder not in sys.path
        if added:
            sys.path.insert(0, folder)
        try:
            return _call_main(module)
        finally:
            if added:
                sys.path.remove(folder)
    return call


def _compare():
    def call():
        from opencompass_scicode.launch.compare import run_compare
        return run_compare([], 'opencompass-scicode')
    return call


def _run_py(argv):
    def call():
        from opencompass_scicode.cli import parse_args
        return parse_args(argv, prog='run.py')
    return call


# (anchor, title, the commands that start it, what it is for, the call that builds its parser)
COMMANDS = (
    ('run-py', 'run.py CONFIG', ('python run.py', 'opencompass-scicode', 'python -m opencompass_scicode'),
     'Runs a config: plan, fetch and check, infer, evaluate, summarize. OpenCompass\'s flags '
     '(`--datasets`, `--models`, `--hf-path`, ...) build the config from names instead of a file '
     '([Coming from OpenCompass](../from-opencompass.md)).', _run_py([])),
    ('run-py-run', 'run.py run scicode ...', ('python run.py run scicode scicode_tool_use MODEL ...',),
     'AgentCompass\'s command line, translated into one ordinary config: one `OpenAIChatModel`, one '
     '`SciCodeDataset`, `agentcompass_outputs=True`, work dir `outputs/agentcompass` '
     '([Coming from AgentCompass](../from-agentcompass.md)).', _run_py(['run'])),
    ('compare', 'compare A [B]', ('opencompass-scicode compare', 'python run.py compare'),
     'Compares two results step by step: fixed, broken and changed steps, the paired difference, and '
     'why each step changed ([Comparing results](../guide/compare.md)).', _compare()),
    ('targets-fetch', 'targets.fetch', ('python -m opencompass_scicode.targets.fetch',),
     'Fetches the test targets into the data directory on its own (a login node), or checks the files '
     'there ([Data and test targets](../guide/test-targets.md)).',
     _module_main('opencompass_scicode.targets.fetch')),
    ('targets-standin', 'targets.standin', ('python -m opencompass_scicode.targets.standin',),
     'Writes a stand-in targets file, so that the test split runs offline to check the pipeline '
     '([A stand-in targets file](../guide/test-targets.md#a-stand-in-targets-file)).',
     _module_main('opencompass_scicode.targets.standin')),
    ('run-py-regrade', 'run.py regrade RUN_DIR', ('python run.py regrade RUN_DIR', 'opencompass-scicode regrade RUN_DIR'),
     'Scores a finished run\'s predictions again, under another protocol or with other scoring knobs, into '
     '`RUN_DIR/regrades/<label>/`; no model is asked ([Protocols](../protocols.md#re-grading-a-finished-run)).',
     _run_py(['regrade', 'RUN_DIR'])),
    ('environments', 'environments', ('python -m opencompass_scicode.environments NAME',),
     'Builds (once) and checks a scoring environment in the data directory\'s cache, as a run scoring in '
     'it would ([Protocols](../protocols.md#scoring-environments)).',
     _module_main('opencompass_scicode.environments.__main__')),
)
# Developers' commands: the benchmarks and the loopback model server of the tests.
DEVELOPMENT = tuple(
    (f'benchmarks-{name.replace("_", "-")}', f'benchmarks/{name}.py', (f'python benchmarks/{name}.py',),
     f'[Benchmarks](../benchmarks.md).', _module_main(f'benchmarks.{name}'))
    for name in ('eval_speed', 'origin_cost', 'infer_throughput', 'sweep_scale', 'scale', 'report_scale', 'faults',
                 'protocols')
) + (
    ('tests-openai-server', 'tests/openai_server.py', ('python tests/openai_server.py',),
     'A loopback OpenAI-compatible server that answers with the gold code ([Development](../development.md)).',
     _module_main('openai_server', ROOT / 'tests' / 'openai_server.py')),
)


def _flags(action):
    if action.option_strings:
        return ', '.join(code(s) for s in action.option_strings)
    return code(action.metavar or action.dest)


def _argument(action):
    if action.nargs == 0:
        return ''
    if action.choices:
        shown = ' \\| '.join(code(c) for c in action.choices)
    else:
        shown = code(action.metavar or action.dest.upper())
    if action.nargs in ('+', '*') or isinstance(action, argparse._AppendAction):
        shown += ' ...'
    elif action.nargs == '?':
        shown = f'[{shown}]'
    return shown


def _default(action):
    if action.nargs == 0 or action.default in (None, argparse.SUPPRESS):
        return ''
    if action.default == [] or action.default == ():
        return ''
    return code(repr(action.default))


def arguments_table(parser):
    rows = []
    for group in parser._action_groups:
        for action in group._group_actions:
            if isinstance(action, argparse._HelpAction):
                continue
            rows.append([_flags(action), _argument(action), _default(action),
                         cell((action.help or '') % {'default': action.default} if action.help else '')])
    return table(['argument', 'takes', 'default', 'what it does'], rows)


def command_section(anchor, title, started, what, call, level='##'):
    parser = parser_of(call)
    usage = parser.format_usage().strip().removeprefix('usage: ')
    out = [f'{level} {title} {{#{anchor}}}', '', f'Started as {" or ".join(code(s) for s in started)}. {what}', '']
    if parser.description:
        out += [cell(parser.description), '']
    out += ['```text', usage, '```', '', arguments_table(parser), '']
    return '\n'.join(out)


def page():
    out = ['# Command lines', '',
           generated_note('opencompass_scicode/cli.py', 'opencompass_scicode/adapters/opencompass/command_line.py',
                          'opencompass_scicode/adapters/agentcompass/command_line.py',
                          'opencompass_scicode/launch/compare.py',
                          'opencompass_scicode/targets/fetch.py', 'opencompass_scicode/targets/standin.py',
                          'tools/docs_reference/commands.py'),
           'Each command\'s own argparse parser is read as the command builds it.', '',
           'Exit statuses: [Exit codes](exit-codes.md).', '']
    for command in COMMANDS:
        out.append(command_section(*command))
    out += ['## For developers {#for-developers}', '']
    for command in DEVELOPMENT:
        out.append(command_section(*command, level='###'))
    return '\n'.join(out)
