"""The official SciCode prompt of a step (and the later turns of the chat mode)."""
from .builder import build_chat_prompt, build_prompt

__all__ = ['build_chat_prompt', 'build_prompt']
