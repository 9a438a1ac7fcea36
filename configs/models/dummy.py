# Gives the same stub answer to every step; a sound harness scores it 0.
from opencompass_scicode.models import DummyModel

models = [dict(type=DummyModel, abbr='dummy')]
