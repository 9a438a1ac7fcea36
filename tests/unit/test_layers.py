"""The package's layers, held against its imports.

From the top: the face; planning and launching; tasks; the work; data; the
step pool; the sandbox. A module imports only from its own layer or below, and a few parts
are held to narrower rules (the `NEVER` and `ONLY` tables). Every import
counts, including those inside functions: a lazy import is still a
dependency.
"""
import ast
import textwrap
from pathlib import Path

from helpers import ROOT as CHECKOUT

PACKAGE = 'opencompass_scicode'
ROOT = CHECKOUT / PACKAGE

LAYERS = (                                   # top to bottom
    ('face', {'cli', '__main__', 'adapters'}),   # adapters: other harnesses' configs, translated
    # launch: planning a run and running it (the face's work, apart from the command line)
    ('plan', {'config', 'partitioners', 'runners', 'launch'}),
    ('tasks', {'tasks'}),
    ('work', {'inference', 'prompts', 'models', 'evaluation', 'summarizers'}),
    ('data', {'datasets', 'predictions', 'targets', 'results', 'protocols', 'environments'}),
    ('pool', {'pool'}),
    ('ground', {'sandbox'}),
)
# Anyone may import these; they import nothing else of the package.
BASE = {'errors', 'utils', 'registry', '__init__'}

# part -> the parts (or modules, dotted below the package) it may import besides BASE and itself.
ONLY = {
    'cli': {'config', 'launch', 'adapters'},   # the face parses, loads the config, plans and runs (launch), prints
    'sandbox': set(),
    'pool': {'sandbox'},           # runs programs; what their runs mean is scoring's (evaluation)
    'targets': {'datasets'},
    'summarizers': {'results'},
    'protocols': set(),            # pure data: the table every layer that reads dataset entries reads
    'environments': {'datasets.files'},   # requirement lists and the builder: nothing of scoring
    'runners': {'tasks.contract'},
    **{name: set() for name in BASE},
}
# part -> {part it must never import: why}
NEVER = {
    'evaluation': {'models': 'scoring never depends on who answered',
                   'inference': 'scoring never depends on how the answer was asked',
                   'prompts': 'scoring never depends on how the answer was asked'},
    'partitioners': {'models': 'partitioners plan; they never build models',
                     'sandbox': 'partitioners plan', 'evaluation': 'partitioners plan',
                     'inference': 'partitioners plan'},
}


def _rank(part):
    for rank, (_, parts) in enumerate(LAYERS):
        if part in parts:
            return rank
    return None


def _module_of(path, root):
    rel = path.relative_to(root).with_suffix('')
    parts = list(rel.parts)
    if parts[-1] == '__init__':
        parts = parts[:-1]
        is_package = True
    else:
        is_package = False
    return parts, is_package


def _imported(node, parts, is_package):
    """Dotted names (below the package) that an import node brings in; [] for other packages."""
    if isinstance(node, ast.Import):
        return [a.name.split('.', 1)[1] for a in node.names
                if a.name.startswith(PACKAGE + '.')]
    if node.level == 0:
        if node.module == PACKAGE:
            return [a.name for a in node.names]
        if node.module and node.module.startswith(PACKAGE + '.'):
            return [node.module.split('.', 1)[1]]
        return []
    here = parts if is_package else parts[:-1]
    base = here[:len(here) - (node.level - 1)] if node.level > 1 else here
    if node.level - 1 > len(here):
        return []
    if node.module:
        return ['.'.join(base + node.module.split('.'))]
    # `from .. import x`: each name may be a module of its own
    return ['.'.join(base + [a.name]) for a in node.names]


def _part(dotted):
    return dotted.split('.', 1)[0] if dotted else '__init__'


def _allowed(src, dotted):
    """None if `src` may import `dotted`, else why not."""
    dst = _part(dotted)
    if dst == src or dst in BASE:
        return None
    if src in ONLY:
        ok = ONLY[src]
        if dst in ok or any(dotted == m or dotted.startswith(m + '.') for m in ok):
            return None
        allowed = ', '.join(sorted(ok | BASE)) or 'nothing'
        return f'{src} may import only {allowed}'
    why = NEVER.get(src, {}).get(dst)
    if why:
        return f'{src} never imports {dst}: {why}'
    src_rank, dst_rank = _rank(src), _rank(dst)
    if src_rank is not None and dst_rank is not None and dst_rank < src_rank:
        return f'{dst} is in a layer above {src}'
    return None


def violations(root=ROOT):
    """[(file, line, imported module, why)] for every import that breaks a rule."""
    found = []
    for path in sorted(Path(root).rglob('*.py')):
        parts, is_package = _module_of(path, root)
        src = parts[0] if parts else '__init__'
        if len(parts) == 1 and not is_package:
            src = parts[0]
        tree = ast.parse(path.read_text(encoding='utf-8'), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for dotted in _imported(node, parts, is_package):
                why = _allowed(src, dotted)
                if why:
                    found.append((str(path.relative_to(Path(root).parent)), node.lineno, dotted, why))
    return found


def test_imports_follow_the_layers():
    broken = violations()
    assert not broken, 'imports that break the layering:\n' + '\n'.join(
        f'  {file}:{line}: imports {mod} ({why})' for file, line, mod, why in broken)


def _tree(tmp_path, files):
    root = tmp_path / PACKAGE
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def test_the_checker_names_file_and_line_of_a_back_import(tmp_path):
    root = _tree(tmp_path, {
        '__init__.py': '',
        'sandbox/__init__.py': '',
        'sandbox/harness.py': 'import os\n\nfrom ..evaluation.program import SIMPS_SHIM\n',
        'evaluation/__init__.py': '',
        'evaluation/program.py': 'from ..sandbox import harness\n',
        'runners/local.py': 'def f():\n    from ..tasks import load_task\n'
                            'from ..tasks.contract import TaskSpec\n',
        'summarizers/scicode.py': 'from opencompass_scicode.predictions import PredictionStore\n'
                                  'from ..results import StepRecord\n',
        'targets/regenerate.py': 'from .. import sandbox\n',
        'datasets/scicode.py': 'from ..models.base import BaseModel\n',
        'evaluation/evaluator.py': 'from ..prompts import code_chain\nfrom ..datasets import chain\n',
        'sandbox/bad.py': 'from .. import errors, verdicts\nfrom . import executor\n'
                          'def late():\n    import opencompass_scicode.targets.h5format\n',
        'sandbox/inner/deep.py': 'from ...utils import workdir\nfrom ...targets import h5format\n',
        'pool/step_pool.py': 'from ..sandbox.executor import StepRun\nfrom ..evaluation.verdict import decide\n',
        'cli.py': 'from .launch import plan_run\nfrom .inference.preflight import check_mode\n',
    })
    found = {(file, line, mod) for file, line, mod, _ in violations(root)}
    assert found == {
        (f'{PACKAGE}/sandbox/harness.py', 3, 'evaluation.program'),
        (f'{PACKAGE}/runners/local.py', 2, 'tasks'),
        (f'{PACKAGE}/summarizers/scicode.py', 1, 'predictions'),
        (f'{PACKAGE}/targets/regenerate.py', 1, 'sandbox'),
        (f'{PACKAGE}/datasets/scicode.py', 1, 'models.base'),
        (f'{PACKAGE}/evaluation/evaluator.py', 1, 'prompts'),
        (f'{PACKAGE}/sandbox/bad.py', 1, 'verdicts'),
        (f'{PACKAGE}/sandbox/bad.py', 4, 'targets.h5format'),
        (f'{PACKAGE}/sandbox/inner/deep.py', 2, 'targets'),
        (f'{PACKAGE}/pool/step_pool.py', 2, 'evaluation.verdict'),
        (f'{PACKAGE}/cli.py', 2, 'inference.preflight'),
    }


def _modules_after(code):
    import subprocess
    import sys
    out = subprocess.run([sys.executable, '-c', code + '\nimport sys\nprint("\\n".join(sorted(sys.modules)))'],
                         cwd=ROOT.parent, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


def test_runners_and_partitioners_load_only_the_task_contract():
    # Sharing out a model's default request limits reads them from the model's class, as a
    # config names its type and as a task file does: the class's module is imported to read
    # them (models/ only, where the class registers itself), nothing is built, and neither the
    # API SDK nor scoring or inference code is loaded.
    loaded = _modules_after(
        'import opencompass_scicode.runners, opencompass_scicode.partitioners\n'
        'from opencompass_scicode.partitioners.limits import share_limits\n'
        'for kind in ("OpenAIChatModel", "opencompass_scicode.models.openai_api.OpenAIChatModel"):\n'
        '    assert share_limits({"type": kind, "path": "m"}, 3)["max_concurrency"] == 2, kind')
    heavy = {m for m in loaded if m.split('.')[:2] in (
        [PACKAGE, 'evaluation'], [PACKAGE, 'sandbox'], [PACKAGE, 'inference'])}
    assert not heavy
    assert f'{PACKAGE}.models.openai_api' in loaded             # where the limits are read
    assert not {m for m in loaded if m.startswith(f'{PACKAGE}.tasks.')} - {f'{PACKAGE}.tasks.contract'}
    assert 'openai' not in loaded


def test_planning_a_run_loads_no_api_client_and_no_targets_reader(tmp_path):
    loaded = _modules_after(
        'from opencompass_scicode.cli import main\n'
        f'assert main(["configs/eval_scicode.py", "--dry-run", "-w", {str(tmp_path)!r}]) == 0')
    assert not {'openai', 'h5py', 'matplotlib'} & loaded
    assert not {m for m in loaded if m.startswith(f'{PACKAGE}.sandbox.worker')}


def test_the_core_loads_no_adapter_and_the_face_installs_opencompass_s():
    # The translations of other harnesses sit above the core: planning, tasks and the loader
    # never import them; run.py's command line does, which installs OpenCompass's dialect.
    loaded = _modules_after(
        'import opencompass_scicode.config, opencompass_scicode.launch.plan, opencompass_scicode.tasks.infer\n'
        'from opencompass_scicode.config import dialects\n'
        'assert not dialects.installed()\n'
        'import opencompass_scicode.cli\n'
        'assert [d.name for d in dialects.installed()] == ["opencompass"]')
    assert f'{PACKAGE}.adapters.opencompass.entries' in loaded
