from .builder import build_chat_prompt, build_prompt  # noqa: F401
from .prefilled import PREFILLED_MODES, prefilled_code, code_chain  # noqa: F401
