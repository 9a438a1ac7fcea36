from ..registry import register
from .base import BaseModel, Generation, StepChatMixin

DEFAULT_RESPONSE = '```python\ndef placeholder():\n    return None\n```'


@register
class DummyModel(StepChatMixin, BaseModel):
    """Gives the same fixed answer to every step (and every chat turn); scores 0 on a sound harness."""

    def __init__(self, abbr=None, response=DEFAULT_RESPONSE):
        super().__init__(abbr)
        self.response = response

    def settings(self):
        return {'type': 'DummyModel', 'response': self.response}

    def generate(self, request):
        return Generation(text=self.response)
