from ..registry import register
from .base import BaseModel, Generation, GenerationRequest, StepChatMixin

DEFAULT_RESPONSE = '```python\ndef placeholder():\n    return None\n```'


@register
class DummyModel(StepChatMixin, BaseModel):
    """Gives the same fixed answer to every step (and every chat turn); scores 0 on a sound harness."""

    def __init__(self, abbr=None, response=DEFAULT_RESPONSE):
        super().__init__(abbr)
        self.response = response

    def settings(self) -> dict:
        """The fixed response, which is all that decides this model's answers."""
        return {'type': 'DummyModel', 'response': self.response}

    def generate(self, request: GenerationRequest) -> Generation:
        """The fixed response, whatever `request` asks."""
        return Generation(text=self.response)
