from .base import BaseModel, Generation, GenerationRequest  # noqa: F401
from .dummy import DummyModel  # noqa: F401
from .generated_code import GeneratedCodeModel  # noqa: F401
from .reference import ReferenceModel  # noqa: F401
from .openai_api import OpenAIChatModel  # noqa: F401
