"""Who answers: the models a config can name, and what every model offers the inference loop."""
from .base import BaseModel, ChatTurn, Generation, GenerationRequest, StepChatMixin
from .dummy import DummyModel
from .generated_code import GeneratedCodeModel
from .openai_api import OpenAIChatModel
from .opencompass_predictions import OpenCompassPredictions
from .reference import ReferenceModel

__all__ = ['BaseModel', 'ChatTurn', 'DummyModel', 'GeneratedCodeModel', 'Generation', 'GenerationRequest',
           'OpenAIChatModel', 'OpenCompassPredictions', 'ReferenceModel', 'StepChatMixin']
