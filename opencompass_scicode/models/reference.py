from typing import Any

from ..errors import ConfigError
from ..registry import register
from .base import BaseModel, Generation, GenerationRequest, StepChatMixin


@register
class ReferenceModel(StepChatMixin, BaseModel):
    """Answers every step with its gold code: checks the harness without a model.

    Only the validation split ships gold code. Takes part in every generation mode (in chat and
    tool_use, each turn is the step's gold code; it never calls a tool).
    """

    def __init__(self, abbr=None):
        super().__init__(abbr)

    def check_dataset(self, dataset: Any) -> None:
        """Raise ConfigError unless `dataset` has gold code (validation problems only)."""
        if not dataset.validation_only:
            raise ConfigError(
                f'ReferenceModel needs gold code, which only the validation split has '
                f'(dataset {dataset.abbr!r} uses split {dataset.split!r})',
                key='split', fix="use split='validation' for this model (or sample_ids of validation "
                                 "problems), or another model")

    def generate(self, request: GenerationRequest) -> Generation:
        """The gold code of the step `request` asks for, fenced as a model would answer; an error
        Generation when the step has none."""
        code = request.step.ground_truth_code
        if code is None:
            return Generation(error=f'step {request.step.step_id} has no gold code')
        return Generation(text=f'```python\n{code}\n```')
