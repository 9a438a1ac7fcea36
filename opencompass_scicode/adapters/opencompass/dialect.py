"""OpenCompass's config shape, as the config loader asks for it (config/dialects.py)."""
from typing import Any, Optional

from .entries import adopt
from .names import config_builtins, is_opencompass
from .opencompass_files import module_source
from .placeholders import resolve_placeholders


class OpenCompassDialect:
    """`opencompass.*` imports and names, OpenCompass's configs, and its entries' shapes."""

    name = 'opencompass'

    def owns(self, module: str) -> bool:
        return is_opencompass(module)

    def module_source(self, module: str, file: Any = None, line: Optional[int] = None) -> Any:
        return module_source(module, file=file, line=line)

    def builtins(self, file: str, builtins: dict) -> dict:
        # names.py's import hook falls through to the real import for every other module
        return dict(builtins, __import__=config_builtins(file)['__import__'])

    def resolve_placeholders(self, values: dict) -> None:
        resolve_placeholders(values)

    def adopt(self, cfg: Any, backend: Optional[str] = None) -> list:
        return adopt(cfg, backend=backend)


DIALECT = OpenCompassDialect()
