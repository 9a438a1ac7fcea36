"""Configs written in another harness's shape: what the loader asks of a translation.

The loader knows no other harness. A translation (`opencompass_scicode.adapters`) is a
`Dialect` that the face installs before it loads a config; the loader then asks each
installed dialect whether a `read_base()` import is its own, what such an import reads,
what a config file run as plain Python imports instead, and, once loaded, to bring the
config's entries into this package's shape. Without one installed, a config is read as
this package writes them.
"""
from typing import Any, Optional, Protocol


class Dialect(Protocol):
    """One harness's config shape, as the loader uses it (adapters/opencompass/dialect.py)."""

    name: str

    def owns(self, module: str) -> bool:
        """Whether a `read_base()` import or an `import` of `module` is this harness's."""

    def module_source(self, module: str, file: Any = None, line: Optional[int] = None) -> Any:
        """What `from <module> import ...` inside read_base() reads: a file's Path, or a dict of
        the module's variables; ConfigError naming `file` and `line` when there is neither."""

    def builtins(self, file: str, builtins: dict) -> dict:
        """`builtins` for a config run as plain Python, whose imports of the harness's modules
        give placeholders instead of importing the harness."""

    def resolve_placeholders(self, values: dict) -> None:
        """Swap the harness's placeholders in a config's top-level `values` (in place)."""

    def adopt(self, cfg: Any, backend: Optional[str] = None) -> list:
        """Rewrite the harness-shaped entries of a loaded config in place; the notes for the user."""


_INSTALLED: list = []


def install(dialect: Dialect) -> None:
    """Make the loader read configs of `dialect`'s harness (once; installing it again is a no-op)."""
    if all(d.name != dialect.name for d in _INSTALLED):
        _INSTALLED.append(dialect)


def installed() -> list:
    """The installed dialects, in the order they were installed."""
    return list(_INSTALLED)


def owner(module: Any) -> Optional[Dialect]:
    """The installed dialect whose module `module` is; None for this package's own and others."""
    if not isinstance(module, str):
        return None
    return next((d for d in _INSTALLED if d.owns(module)), None)
