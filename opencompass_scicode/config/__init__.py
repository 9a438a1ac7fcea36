from .builder import build, resolve_type  # noqa: F401
from .loader import load_config  # noqa: F401
from .validate import validate_config  # noqa: F401
