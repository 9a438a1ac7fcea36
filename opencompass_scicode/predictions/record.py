"""One line of a predictions file: what a model answered for one step (and sample), as a typed record.

Inference (inference/engine.py) builds it, the store appends it (store.py
checks it on the way out and on the way in), scoring reads the code or the
program from it and the results file keeps its answer. Only `step_id` is
needed: a record of another tool (or an older version) gives what it has, and
fields the record does not name are kept (`extra='allow'`). A record is
written with the fields it was given, as they were given.
"""
from typing import Any, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

# What a results file keeps of a step's prediction beside its verdict (tasks/evaluate.py).
ANSWER_FIELDS = ('prompt', 'response', 'code', 'program', 'reasoning', 'finish_reason', 'usage', 'error')


class Prediction(BaseModel):
    """A model's answer to one step: the exchange, the code taken from it, what it cost, and the
    settings it was made with (a resumed run compares them)."""

    model_config = ConfigDict(extra='allow')

    # In the order inference writes them (a line keeps the order of its fields as before).
    problem_id: Optional[str] = None
    step_id: str
    step_index: Optional[int] = None
    model: Optional[str] = None
    dataset: Optional[str] = None
    mode: Optional[str] = None
    settings: dict[str, Any] = Field(default_factory=dict, description='the settings it was made with')
    settings_fp: Optional[str] = None
    sample: int = Field(0, description='which sample of its problem (infer_cfg n > 1); written only then')
    prompt: Optional[str] = None
    response: Optional[str] = None
    code: Optional[str] = Field(None, description='the code extracted from the response')
    program: Optional[str] = Field(None, description='a whole step program, given as it is (no chain is built)')
    error: Optional[str] = Field(None, description='why the step has no answer')
    finish_reason: Optional[str] = None
    truncated: bool = False
    reasoning: Optional[str] = None
    usage: dict[str, Any] = Field(default_factory=dict)
    duration_s: Optional[float] = None
    created_at: Optional[str] = None
    transcript: Optional[list] = Field(None, description="the conversation, in the chat and tool_use modes")
    refused: Optional[bool] = Field(None, description='the endpoint refused this request alone (a 4xx about it: '
                                                      'context length, content filter; models/refusals.py)')
    gaps: Optional[list[str]] = Field(None, description='earlier steps of its chain that had no code when it was '
                                                        'asked (refused); -r asks it again once they have')

    def to_json(self) -> dict:
        """The record as a line of the file holds it: the fields it was given."""
        return self.model_dump(mode='json', exclude_unset=True)

    def answer(self) -> dict:
        """What a results file keeps of it: the ANSWER_FIELDS that say something."""
        return {k: getattr(self, k) for k in ANSWER_FIELDS if getattr(self, k) not in (None, '', {})}


def as_prediction(record: Union[Prediction, dict, None]) -> Optional[Prediction]:
    """`record` as a Prediction (a dict is checked); None stays None."""
    if record is None or isinstance(record, Prediction):
        return record
    return Prediction.model_validate(record)
