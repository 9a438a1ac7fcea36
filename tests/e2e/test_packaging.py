"""A non-editable install: the wheel holds the whole package, and its commands run anywhere."""
import configparser
import importlib.util
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from helpers import ROOT, run_cli

PACKAGE = ROOT / 'opencompass_scicode'
RUNTIME = PACKAGE / 'sandbox' / 'runtime'


def _source_files(root):
    return [p for p in root.rglob('*') if p.is_file() and '__pycache__' not in p.parts]


@pytest.fixture(scope='module')
def wheel(tmp_path_factory):
    """A wheel built from a copy of the checkout, so stale build/ files cannot leak into it."""
    tmp = tmp_path_factory.mktemp('wheel')
    src = tmp / 'src'
    src.mkdir()
    for name in ('setup.cfg', 'setup.py', 'MANIFEST.in', 'pyproject.toml', 'README.md'):
        shutil.copy2(ROOT / name, src / name)
    for folder in (PACKAGE, ROOT / 'configs'):       # setup.py puts configs/ into the package
        shutil.copytree(folder, src / folder.name, ignore=shutil.ignore_patterns('__pycache__'))
    cmd = [sys.executable, '-m', 'pip', 'wheel', '--no-deps', '--disable-pip-version-check', '-q',
           '-w', str(tmp / 'dist'), str(src)]
    # Without an installed bdist_wheel, pip fetches the build requirements into an isolated env.
    if importlib.util.find_spec('wheel') or importlib.util.find_spec('setuptools.command.bdist_wheel'):
        cmd.insert(4, '--no-build-isolation')
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (path,) = (tmp / 'dist').glob('opencompass_scicode-*.whl')
    return path


def test_wheel_holds_every_package_dir_runtime_file_and_the_console_script(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        (entry_points,) = [n for n in names if n.endswith('.dist-info/entry_points.txt')]
        parser = configparser.ConfigParser()
        parser.read_string(zf.read(entry_points).decode())
    wheel_dirs = {str(Path(n).parent) for n in names}
    source_dirs = {str(p.parent.relative_to(ROOT)) for p in PACKAGE.rglob('*.py')
                   if '__pycache__' not in p.parts}
    assert 'opencompass_scicode/inference' in source_dirs
    assert 'opencompass_scicode/sandbox/runtime/scicode/compare' in source_dirs
    assert sorted(source_dirs - wheel_dirs) == []
    runtime = {str(p.relative_to(ROOT)) for p in _source_files(RUNTIME)}
    assert sorted(runtime - names) == []
    data = {str(p.relative_to(ROOT)) for p in PACKAGE.rglob('*.json')}     # e.g. the known defects
    assert data and sorted(data - names) == []
    lists = {str(p.relative_to(ROOT)) for p in (PACKAGE / 'environments' / 'requirements').glob('*.txt')}
    assert {'opencompass_scicode/environments/requirements/2024.txt'} <= lists and sorted(lists - names) == []
    assert dict(parser['console_scripts']) == {'opencompass-scicode': 'opencompass_scicode.cli:main'}


def test_python_dash_m_runs_the_command_line():
    proc = subprocess.run([sys.executable, '-m', 'opencompass_scicode', '--help'], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith('usage: python -m opencompass_scicode ')
    for flag in ('--work-dir', '--reuse', '--mode', '--dry-run', '--max-num-workers', '--prepare-data'):
        assert flag in proc.stdout


def test_run_py_keeps_its_name():
    proc = run_cli(['--help'], timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith('usage: run.py '), proc.stderr


@pytest.mark.slow
def test_installed_wheel_runs_from_a_directory_with_only_configs(wheel, tmp_path, official_data):
    venv = tmp_path / 'venv'
    # The dependencies come from this interpreter; the package itself only from the wheel. Not
    # --system-site-packages: from inside a virtualenv that names the base Python's packages,
    # which lack them. A .pth line adds this interpreter's site-packages after the new one's
    # (its own .pth files, an editable install's among them, are not run from there).
    subprocess.run([sys.executable, '-m', 'venv', str(venv)], check=True)
    python, command = venv / 'bin' / 'python', venv / 'bin' / 'opencompass-scicode'
    purelib = subprocess.run([str(python), '-c', 'import sysconfig; print(sysconfig.get_path("purelib"))'],
                             capture_output=True, text=True, check=True).stdout.strip()
    (Path(purelib) / 'dependencies.pth').write_text('\n'.join(site.getsitepackages()) + '\n')
    proc = subprocess.run([str(python), '-m', 'pip', 'install', '--no-deps', '--ignore-installed',
                           '--disable-pip-version-check', '-q', str(wheel)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    job = tmp_path / 'job'
    shutil.copytree(ROOT / 'configs', job / 'configs')
    (job / 'data').mkdir()
    (job / 'data' / 'scicode').symlink_to(official_data)
    env = {k: v for k, v in os.environ.items() if k != 'PYTHONPATH'}

    def run(*args):
        return subprocess.run([*map(str, args)], cwd=job, env=env, capture_output=True, text=True,
                              timeout=600)

    # An editable install elsewhere could stand in for missing files: ask where modules come from.
    proc = run(python, '-c', 'import opencompass_scicode.inference.engine as m, '
                             'opencompass_scicode.sandbox as s; print(m.__file__); print(s.RUNTIME_DIR)')
    assert proc.returncode == 0, proc.stderr
    for line in proc.stdout.split():
        assert Path(line).resolve().is_relative_to(venv.resolve()), line
    proc = run(command, '--help')
    assert proc.returncode == 0 and proc.stdout.startswith('usage: opencompass-scicode '), proc.stderr
    proc = run(python, '-m', 'opencompass_scicode', '--help')
    assert proc.returncode == 0 and proc.stdout.startswith('usage: python -m opencompass_scicode ')
    proc = run(command, 'configs/eval_scicode.py', '--dry-run', '-w', tmp_path / 'w')
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert 'scicode_validation_with_background' in proc.stdout and 'reference' in proc.stdout


def test_wheel_ships_the_configs_inside_the_package(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    shipped = {f'{PACKAGE.name}/configs/{p.relative_to(ROOT / "configs")}' for p in _source_files(ROOT / 'configs')}
    assert f'{PACKAGE.name}/configs/datasets/scicode/scicode_validation.py' in shipped
    assert sorted(shipped - names) == []


@pytest.mark.slow
def test_opencompass_style_command_works_from_an_empty_directory(wheel, tmp_path, official_data):
    """`opencompass-scicode --datasets scicode_validation --models reference`: the names are found in the
    configs the wheel ships, with no configs/ where it runs. The wheel goes into a directory of its
    own, first on the path; the dependencies come from this interpreter."""
    target = tmp_path / 'installed'
    proc = subprocess.run([sys.executable, '-m', 'pip', 'install', '--no-deps', '--target', str(target),
                           '--disable-pip-version-check', '-q', str(wheel)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    empty = tmp_path / 'empty'
    (empty / 'data').mkdir(parents=True)
    (empty / 'data' / 'scicode').symlink_to(official_data)      # the data, fetched once; no configs
    env = dict(os.environ, PYTHONPATH=str(target))

    def run(*args):
        return subprocess.run([*map(str, args)], cwd=empty, env=env, capture_output=True, text=True, timeout=600)

    proc = run(sys.executable, '-c', 'import opencompass_scicode.adapters.opencompass.named as n; '
                                     'print(n.__file__); print(n.shipped_configs())')
    assert proc.returncode == 0, proc.stderr
    for line in proc.stdout.split():
        assert Path(line).resolve().is_relative_to(target.resolve()), line
    proc = run(target / 'bin' / 'opencompass-scicode', '--datasets', 'scicode_validation', '--models', 'reference',
               '--dry-run', '-w', tmp_path / 'w')
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert 'infer/reference' in proc.stdout and 'eval/reference/scicode_validation_with_background' in proc.stdout
    assert sorted(p.name for p in empty.iterdir()) == ['data']
