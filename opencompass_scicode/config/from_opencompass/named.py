"""Config files found by name, as OpenCompass's `--datasets NAME` finds them.

NAME is `NAME.py` anywhere below `<root>/datasets/` (or `dataset_collections/`),
`<root>/models/` or `<root>/summarizers/`. The roots, in order: the current
directory's `configs/`, the configs shipped with the package (in a wheel,
`opencompass_scicode/configs/`; in a checkout, its `configs/`), then
`--config-dir DIR` (e.g. an OpenCompass checkout's `opencompass/configs`). The
first root holding NAME wins; two files of that name in it are ambiguous.
"""
from pathlib import Path

from ...errors import ConfigError, did_you_mean

SUBDIRS = {'datasets': ('datasets', 'dataset_collections'), 'models': ('models',),
           'summarizers': ('summarizers',)}
PACKAGE_DIR = Path(__file__).resolve().parents[2]


def shipped_configs():
    """The configs that come with the package: inside it when installed from a wheel, beside it
    in a checkout (or an editable install)."""
    for candidate in (PACKAGE_DIR / 'configs', PACKAGE_DIR.parent / 'configs'):
        if candidate.is_dir():
            return candidate
    return None


def config_roots(config_dir=None):
    roots = [Path.cwd() / 'configs', shipped_configs()]
    if config_dir:
        path = Path(config_dir).expanduser()
        if not path.is_dir():
            raise ConfigError(f'--config-dir {config_dir}: no such directory',
                              fix='give a directory holding datasets/, models/ and summarizers/ '
                                  '(e.g. an OpenCompass checkout\'s opencompass/configs)')
        roots.append(path)
    unique = []
    for root in roots:
        if root is not None and root.is_dir() and root.resolve() not in {r.resolve() for r in unique}:
            unique.append(root)
    return unique


def _files(root, kind):
    found = []
    for sub in SUBDIRS[kind]:
        if (root / sub).is_dir():
            found += sorted(p for p in (root / sub).rglob('*.py') if '__pycache__' not in p.parts)
    return found


def find_config(name, kind, roots):
    """(the one `name.py` of `kind` ('datasets', 'models', 'summarizers'), the files of that name in
    later roots, which it hides); ConfigError naming the candidates when there is none or more
    than one."""
    flag = f'--{kind[:-1] if kind == "summarizers" else kind}'
    stem = name[:-3] if name.endswith('.py') else name
    for i, root in enumerate(roots):
        matches = [p for p in _files(root, kind) if p.stem == stem]
        if len(matches) == 1:
            return matches[0], [p for later in roots[i + 1:] for p in _files(later, kind) if p.stem == stem]
        if matches:
            raise ConfigError(f'{flag} {name}: {len(matches)} files of that name under {root}: '
                              + ', '.join(str(p.relative_to(root)) for p in matches),
                              fix='rename one, or load the one you mean from a config file with read_base()')
    stems = sorted({p.stem for root in roots for p in _files(root, kind)})
    searched = ', '.join(str(r / SUBDIRS[kind][0]) for r in roots) or 'no configs directory'
    hint = did_you_mean(stem, stems, n=5, cutoff=0.5, quote=False)
    raise ConfigError(f'{flag} {name}: no {stem}.py under {searched}',
                      fix=f'{hint}known names: {", ".join(stems[:20])}{", ..." if len(stems) > 20 else ""}; '
                          f'--config-dir DIR adds a directory to search')
