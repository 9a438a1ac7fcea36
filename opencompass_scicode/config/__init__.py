from .builder import build  # noqa: F401
from .registry import resolve_type  # noqa: F401
from .loader import load_config  # noqa: F401
from .validate import validate_config  # noqa: F401
