"""The sandbox is handed a program, its tests and their targets, runs them and reports.

It must not reach into the rest of the package (verdicts, targets files, program
assembly): then it can be reasoned about, and reused, on its own.
"""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = 'opencompass_scicode'
SANDBOX_MAY_IMPORT = (f'{PACKAGE}.sandbox', f'{PACKAGE}.errors', f'{PACKAGE}.utils')


def imported_names(path, root):
    """Absolute dotted names of everything `path` imports, lazy imports inside functions included.

    `from x import y` gives `x.y`: y may be a module of x, and is checked as one.
    """
    package = list(path.relative_to(root).parts[:-1])
    for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = '.'.join(base + ([node.module] if node.module else []))
            yield from (f'{module}.{alias.name}' for alias in node.names)


def foreign_imports(directory, root, allowed):
    """(file, name) for each import of the package from `directory` that `allowed` does not cover."""
    found = []
    for path in sorted(Path(directory).rglob('*.py')):
        for name in imported_names(path, root):
            inside = name == PACKAGE or name.startswith(PACKAGE + '.')
            if inside and not any(name == a or name.startswith(a + '.') for a in allowed):
                found.append((str(path.relative_to(root)), name))
    return found


def test_the_sandbox_imports_only_errors_and_utils_of_the_package():
    assert foreign_imports(ROOT / PACKAGE / 'sandbox', ROOT, SANDBOX_MAY_IMPORT) == []


def test_the_layering_check_finds_relative_absolute_and_lazy_imports(tmp_path):
    sandbox = tmp_path / PACKAGE / 'sandbox'
    (sandbox / 'inner').mkdir(parents=True)
    (sandbox / 'bad.py').write_text('from ..evaluation.program import SIMPS_SHIM\n'
                                    'from .. import errors, verdicts\n'
                                    'from . import executor\n'
                                    'def late():\n'
                                    '    import opencompass_scicode.targets.h5format\n')
    (sandbox / 'inner' / 'deep.py').write_text('from ...utils import workdir\nfrom ...targets import h5format\n')
    assert foreign_imports(sandbox, tmp_path, SANDBOX_MAY_IMPORT) == [
        (f'{PACKAGE}/sandbox/bad.py', f'{PACKAGE}.evaluation.program.SIMPS_SHIM'),
        (f'{PACKAGE}/sandbox/bad.py', f'{PACKAGE}.verdicts'),
        (f'{PACKAGE}/sandbox/bad.py', f'{PACKAGE}.targets.h5format'),
        (f'{PACKAGE}/sandbox/inner/deep.py', f'{PACKAGE}.targets.h5format'),
    ]
