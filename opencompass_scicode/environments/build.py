"""Finding, building and checking a scoring environment (see __init__.py)."""
import fcntl
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from ..errors import ConfigError, UserFacingError
from ..utils.fingerprint import fingerprint

REQUIREMENTS_DIR = Path(__file__).resolve().parent / 'requirements'
CURRENT = 'current'
NAMES = tuple(sorted(p.stem for p in REQUIREMENTS_DIR.glob('*.txt')))
# What a results file records of the environment that scored its steps.
LIBRARIES = ('numpy', 'scipy', 'sympy', 'h5py')
READY = 'ready.json'
# Seconds for pip to build one environment (a few wheels; about 30 s on a good connection).
BUILD_TIMEOUT_S = 1800
OFFLINE_ENV = 'SCICODE_OFFLINE'

# Run by an environment's interpreter: its Python and library versions, as JSON.
_PROBE = ('import json, sys\nfrom importlib import metadata\nout = {"python": ".".join(map(str, sys.version_info[:3]))}\n'
          'for name in LIBRARIES:\n    try:\n        out[name] = metadata.version(name)\n'
          '    except metadata.PackageNotFoundError:\n        out[name] = None\nprint(json.dumps(out))\n')


class EnvironmentMissing(UserFacingError):
    """An environment a dataset is scored in is not built and cannot be built now (offline, or
    pip failed): exit 2, naming the command that prepares it."""


@dataclass
class Environment:
    name: str
    python: str                 # its interpreter
    versions: dict = field(default_factory=dict)    # python and LIBRARIES -> version

    @property
    def is_current(self) -> bool:
        """Whether this is the interpreter running now (nothing to build)."""
        return self.name == CURRENT


def check_names(names, key='environments') -> list[str]:
    """`names` as a list of known environment names; ConfigError otherwise."""
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, (list, tuple)) or not names or not all(isinstance(n, str) for n in names):
        raise ConfigError(f'must be a non-empty list of environment names, got {names!r}', key=key,
                          fix=f"e.g. environments=['2024', 'current'] (known: {', '.join(NAMES)})")
    unknown = [n for n in names if n not in NAMES]
    if unknown:
        raise ConfigError(f'unknown environment {unknown[0]!r}', key=key, fix=f'use some of {", ".join(NAMES)}')
    if len(set(names)) != len(names):
        raise ConfigError(f'{names!r} names an environment twice', key=key, fix='name each once')
    return list(names)


def requirements(name) -> list[str]:
    """The requirement lines of environment `name` (comments left out)."""
    text = (REQUIREMENTS_DIR / f'{name}.txt').read_text(encoding='utf-8')
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith('#')]


def pins(name) -> dict[str, str]:
    """{package: version} of the `==` pins of environment `name`."""
    return dict(line.split('==', 1) for line in requirements(name) if '==' in line)


def location(name, data_dir) -> Path:
    """Where environment `name` is built for this interpreter: the key covers its requirement
    list and this Python's version, so a changed list or another Python builds anew."""
    key = fingerprint({'requirements': requirements(name), 'python': list(sys.version_info[:2]),
                       'platform': sys.platform})[:10]
    return Path(data_dir).resolve() / 'cache' / 'environments' / f'{name}-{key}'


def prepare_command(name, data_dir) -> str:
    """The command that builds environment `name` for `data_dir`, for a message that asks the user
    to run it."""
    return f'python -m opencompass_scicode.environments {name} --data-dir {data_dir}'


def interpreter(root) -> Path:
    """The Python of the environment built at `root`."""
    return root / 'bin' / 'python'


def current_versions() -> dict[str, str]:
    """{python, numpy, ...: version} of the interpreter running now."""
    out = {'python': '.'.join(map(str, sys.version_info[:3]))}
    for lib in LIBRARIES:
        try:
            out[lib] = metadata.version(lib)
        except metadata.PackageNotFoundError:
            out[lib] = None
    return out


def probe(python) -> dict[str, str]:
    """{python, numpy, ...: version} as `python` sees them."""
    done = subprocess.run([str(python), '-c', f'LIBRARIES = {LIBRARIES!r}\n' + _PROBE], capture_output=True, text=True,
                          timeout=120, env=_clean_env())
    if done.returncode != 0:
        raise RuntimeError(f'{python} could not report its versions: {done.stderr.strip()[-500:]}')
    return json.loads(done.stdout)


def _clean_env():
    """The environment for the environment's own processes: nothing of ours on their path."""
    env = dict(os.environ)
    env.pop('PYTHONPATH', None)
    env.pop('PYTHONHOME', None)
    return env


def _ready(root, name):
    """The versions recorded when `root` was built and checked; None if it is not (yet) whole."""
    try:
        saved = json.loads((root / READY).read_text())
    except (OSError, ValueError):
        return None
    if saved.get('requirements') != requirements(name) or not interpreter(root).exists():
        return None
    return saved.get('versions')


def is_built(name, data_dir) -> bool:
    """Whether environment `name` is ready in `data_dir`'s cache (`current` always is)."""
    return name == CURRENT or _ready(location(name, data_dir), name) is not None


def mismatches(name, versions) -> list[str]:
    """['numpy 2.0.0 (wanted 1.26.4)', ...] where `versions` differ from the pins."""
    return [f'{pkg} {versions.get(pkg)} (wanted {want})' for pkg, want in pins(name).items()
            if pkg in versions and versions.get(pkg) != want]


def ensure(name, data_dir, allow_build=True, say=print) -> Environment:
    """Environment `name` for datasets in `data_dir`: built and checked first where it is not
    yet. `allow_build` False (offline, or a task that must not build): EnvironmentMissing."""
    if name == CURRENT:
        return Environment(name, sys.executable, current_versions())
    root = location(name, data_dir)
    versions = _ready(root, name)
    if versions is not None:
        return Environment(name, str(interpreter(root)), versions)
    command = prepare_command(name, data_dir)
    if not allow_build or os.environ.get(OFFLINE_ENV, '').strip() not in ('', '0'):
        raise EnvironmentMissing(f'scoring environment {name!r} is not built in {root.parent}/ and building it '
                                 f'needs the package index (offline here).\n  fix: on a machine with access, '
                                 f'run: {command}')
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f'.{root.name}.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)          # two tasks at once: one builds, the other waits
        versions = _ready(root, name)
        if versions is None:
            versions = _build(name, root, command, say)
    return Environment(name, str(interpreter(root)), versions)


def _run(cmd, what, command, say, root):
    """Run one build command, its output shown line by line; EnvironmentMissing if it fails."""
    tail = []
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=_clean_env())
    except OSError as exc:
        raise EnvironmentMissing(f'could not {what}: {exc}\n  fix: {command}') from None
    for line in proc.stdout:
        line = line.rstrip()
        if line and 'is ignored: it is neither a file nor a directory' not in line:
            say(f'  {root.name}: {line}')
            tail = (tail + [line])[-15:]
    if proc.wait(timeout=BUILD_TIMEOUT_S) != 0:
        shutil.rmtree(root, ignore_errors=True)
        raise EnvironmentMissing(f'could not {what} (exit {proc.returncode}); its last lines:\n    '
                                 + '\n    '.join(tail) + f'\n  fix: once the package index can be reached, '
                                                         f'run: {command}')


def _build(name, root, command, say):
    say(f'building scoring environment {name!r} in {root} (once; later runs reuse it)')
    shutil.rmtree(root, ignore_errors=True)
    _run([sys.executable, '-m', 'venv', str(root)], f'create a virtualenv at {root}', command, say, root)
    req = root / 'requirements.txt'
    req.write_text('\n'.join(requirements(name)) + '\n', encoding='utf-8')
    _run([str(interpreter(root)), '-m', 'pip', 'install', '--disable-pip-version-check', '--progress-bar', 'off',
          '-r', str(req)], f'install the requirements of environment {name!r}', command, say, root)
    versions = probe(interpreter(root))
    wrong = mismatches(name, versions)
    if wrong:
        shutil.rmtree(root, ignore_errors=True)
        raise EnvironmentMissing(f'environment {name!r} was built with {", ".join(wrong)}; it was removed.\n'
                                 f'  fix: check the package index, then run: {command}')
    (root / READY).write_text(json.dumps({'requirements': requirements(name), 'versions': versions}, indent=1))
    say(f'scoring environment {name!r} ready: ' + ', '.join(f'{k} {v}' for k, v in versions.items()))
    return versions
