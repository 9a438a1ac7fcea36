"""Config files found by name, as OpenCompass's `--datasets NAME` finds them.

NAME is `NAME.py` anywhere below `<root>/datasets/` (or `dataset_collections/`),
`<root>/models/` or `<root>/summarizers/`. The roots, in order, as OpenCompass
searches: `--config-dir DIR` (default: the current directory's `configs/`), then
OpenCompass's own configs (OPENCOMPASS_CONFIGS, or an installed OpenCompass's;
opencompass_files.py), then the configs shipped with this package (in a wheel,
`opencompass_scicode/configs/`; in a checkout, its `configs/`), whose names never
clash with OpenCompass's. A name no root holds may be one OpenCompass ships that
this package stands in for (opencompass_settings.py: `scicode_gen`, the `scicode`
summarizer, ...). The first root holding NAME wins, and in it the shallowest file
of that name (a note names the others). NAME may also be the path of a file.
"""
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ...errors import ConfigError, did_you_mean
from . import opencompass_files
from .opencompass_settings import NAMED, named_variables

SUBDIRS = {'datasets': ('datasets', 'dataset_collections'), 'models': ('models',),
           'summarizers': ('summarizers',)}
PACKAGE_DIR = Path(__file__).resolve().parents[2]


def shipped_configs() -> Optional[Path]:
    """The configs that come with the package: inside it when installed from a wheel, beside it
    in a checkout (or an editable install)."""
    for candidate in (PACKAGE_DIR / 'configs', PACKAGE_DIR.parent / 'configs'):
        if candidate.is_dir():
            return candidate
    return None


def config_roots(config_dir=None) -> list[Path]:
    """The directories searched for names, in order; `config_dir` None: ./configs (OpenCompass's
    default for --config-dir)."""
    if config_dir:
        first = Path(config_dir).expanduser()
        if not first.is_dir():
            raise ConfigError(f'--config-dir {config_dir}: no such directory',
                              fix='give a directory holding datasets/, models/ and summarizers/ '
                                  '(e.g. an OpenCompass checkout\'s opencompass/configs)')
    else:
        first = Path.cwd() / 'configs'
    roots = [first, opencompass_files.configs_dir(), shipped_configs()]
    unique = []
    for root in roots:
        if root is not None and root.is_dir() and root.resolve() not in {r.resolve() for r in unique}:
            unique.append(root)
    return unique


def _is_shipped(root):
    shipped = shipped_configs()
    return shipped is not None and root.resolve() == shipped.resolve()


def _files(root, kind):
    found = []
    for sub in SUBDIRS[kind]:
        if (root / sub).is_dir():
            found += sorted(p for p in (root / sub).rglob('*.py') if '__pycache__' not in p.parts)
    return found


@dataclass(frozen=True)
class Found:
    """What a name stands for: a file, or the variables of a config OpenCompass ships that this
    package stands in for (`stand_in`, with `name`)."""
    name: str
    path: Optional[Path] = None
    stand_in: Optional[dict] = None

    def __str__(self):
        return str(self.path) if self.path else f"OpenCompass's {self.name} (as this package stands in for it)"


def find_config(name: str, kind: str, roots: list[Path]) -> tuple[Found, list[Found]]:
    """(what `name` of `kind` ('datasets', 'models', 'summarizers') stands for, a Found; the
    files or stand-in of that name it hides); ConfigError naming the known names when there is
    none."""
    flag = f'--{kind[:-1] if kind == "summarizers" else kind}'
    if name.endswith('.py') or os.sep in name:
        if Path(name).is_file():
            return Found(Path(name).stem, path=Path(name).resolve()), []
        if name.endswith('.py'):
            raise ConfigError(f'{flag} {name}: no such file',
                              fix=f'give a file\'s path, or a NAME found under {kind}/ of the configs searched '
                                  f'(as OpenCompass takes it)')
    stem = name[:-3] if name.endswith('.py') else name
    stand_in = named_variables(kind, stem)
    # OpenCompass's names mean OpenCompass's: its stand-in comes before this package's own configs.
    # Several files of that name under one root (OpenCompass's own summarizers/scicode.py and
    # summarizers/groups/scicode.py): the first, the shallowest, as OpenCompass takes the first.
    places = [sorted((Found(stem, path=p) for p in _files(root, kind) if p.stem == stem),
                     key=lambda found: (len(found.path.parts), found.path)) for root in roots]
    mine = next((i for i, root in enumerate(roots) if _is_shipped(root)), len(places))
    places.insert(mine, [Found(stem, stand_in=stand_in)] if stand_in is not None else [])
    for i, matches in enumerate(places):
        if matches:
            return matches[0], matches[1:] + [later for found in places[i + 1:] for later in found]
    stems = sorted({p.stem for root in roots for p in _files(root, kind)} | set(NAMED[kind]))
    searched = ', '.join(str(r / SUBDIRS[kind][0]) for r in roots) or 'no configs directory'
    hint = did_you_mean(stem, stems, n=5, cutoff=0.5, quote=False)
    raise ConfigError(f'{flag} {name}: no {stem}.py under {searched}',
                      fix=f'{hint}known names: {", ".join(stems[:20])}{", ..." if len(stems) > 20 else ""}; '
                          f'--config-dir DIR searches DIR first')
