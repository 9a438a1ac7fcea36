"""What every model offers the inference loop."""
import asyncio
import contextvars
from dataclasses import dataclass, field
from typing import Any, Optional


# The token limit of the dataset being answered (its infer_cfg max_out_len), set by the inference
# loop around each problem's chain; where it is None, the model's own max_out_len applies (as in
# OpenCompass, the dataset's inferencer decides). A context variable: one model answers several
# datasets at once, each chain in an asyncio task of its own.
ANSWER_LIMIT = contextvars.ContextVar('answer_limit', default=None)


def answer_limit(own: Optional[int]) -> Optional[int]:
    """The token limit for the answer being asked: the dataset's, else the model's `own` (None: no limit sent)."""
    return ANSWER_LIMIT.get() or own


# The temperature of the dataset being answered (its infer_cfg temperature: its protocol's, see
# protocols/), for models whose entry sets none; None: no temperature is sent (the API's default).
# Outside the inference loop, the official 0.
ANSWER_TEMPERATURE = contextvars.ContextVar('answer_temperature', default=0.0)


def answer_temperature(own: Optional[float]) -> Optional[float]:
    """The temperature to ask with: the model's `own` where its entry sets one, else the dataset's
    (None: send none, the API's default)."""
    return own if own is not None else ANSWER_TEMPERATURE.get()


@dataclass
class GenerationRequest:
    problem: Any            # datasets.Problem
    step: Any               # datasets.Step
    prompt: str
    with_bg: bool           # which answers an OpenCompassPredictions model gives


@dataclass
class Generation:
    text: str = ''                       # raw response
    program: Optional[str] = None        # a complete program to run verbatim, if the model gives one
    error: Optional[str] = None          # the model could not answer
    finish_reason: Optional[str] = None
    reasoning: Optional[str] = None
    usage: dict = field(default_factory=dict)


@dataclass
class ChatTurn:
    """One answer of a chat model (chat and tool_use modes)."""
    content: str = ''
    reasoning: Optional[str] = None
    tool_calls: list = field(default_factory=list)    # [{'id', 'name', 'arguments'}]
    finish_reason: Optional[str] = None
    usage: dict = field(default_factory=dict)
    attempts: int = 1
    latency_s: float = 0.0

    def usage_record(self) -> dict:
        """What a prediction record keeps of this turn's usage: its token counts, the requests it
        took and its latency, as one dict."""
        return dict(self.usage, requests=self.attempts, latency_s=self.latency_s)


class BaseModel:
    """Subclasses implement `generate` (blocking) or `agenerate` (async).

    `needs_prior_code`: later prompts embed this model's earlier code, so a
    step without code stops the rest of its problem (official behaviour).
    """

    needs_prior_code = True
    supports_chat = False     # implements `achat(messages, tools)` (chat and tool_use modes)
    # What the planner reads of a model type without building one (registry.type_attribute):
    # its request limits when its entry gives none (divided among a model's shards);
    api_only = False          # whether it only asks an endpoint: its inference task then waits
    #                           on answers and, without a server or GPUs of its own, holds no
    #                           runner slot (partitioners/base.py, runners/);
    request_limits: dict = {}   # {'max_concurrency': ..., 'query_per_second': ...} by default;
    warm_imports: tuple = ()  # modules its inference task imports that a warm launcher may
    #                           import first (nothing that must not cross a fork: no GPU runtime).

    @classmethod
    def entry_options(cls, entry: dict, key: str = '') -> dict:
        """The constructor options of a `models` entry: its keys but `type` and `run_cfg`
        (num_gpus, num_procs: what the model's tasks ask of a cluster, not a model setting)."""
        return {k: v for k, v in entry.items() if k not in ('type', 'run_cfg')}

    def __init__(self, abbr=None):
        self.abbr = abbr or self.default_abbr()

    @classmethod
    def default_abbr(cls, **options: Any) -> str:
        """The name a model gets without an `abbr` (it names its output files); `options` are
        the other keys of its config entry."""
        return cls.__name__.replace('Model', '').lower() or 'model'

    def redact(self, text: str) -> str:
        """`text` without the model's secrets (an API key), for messages and records."""
        return text

    def settings(self) -> dict:
        """Everything that changes this model's answers (no secrets), as a plain dict for fingerprints."""
        return {'type': type(self).__name__}

    def check_dataset(self, dataset: Any) -> None:
        """Raise ConfigError if this model cannot run on `dataset` (a datasets.SciCodeDataset)."""

    def probe(self) -> Optional[str]:
        """Before any work: raise a UserFacingError if this model cannot answer at all (an API
        model's endpoint, models/probe.py); a note when not everything could be checked, else
        None. Offline models have nothing to ask."""
        return None

    def generate(self, request: GenerationRequest) -> Generation:
        raise NotImplementedError

    async def agenerate(self, request: GenerationRequest) -> Generation:
        return await asyncio.to_thread(self.generate, request)


class StepChatMixin:
    """For offline models that answer from the step itself (ReferenceModel, DummyModel): they
    take part in the chat and tool_use modes too, answering every turn as they answer the step's
    single request, and never calling a tool. The modes hand them the step (`achat_step`); the
    conversation is kept in the predictions as for any chat model."""

    supports_chat = True

    def initial_messages(self, prompt: str) -> list[dict]:
        """The conversation a chat mode starts from: `prompt` as the one user message."""
        return [{'role': 'user', 'content': prompt}]

    async def achat_step(self, messages: list, tools: Any, request: GenerationRequest) -> ChatTurn:
        """One chat turn answered from the step of `request` alone (`messages` and `tools` are
        ignored): the step's answer as a ChatTurn without tool calls. Raises RuntimeError when
        the model has no answer for the step, as a chat model's failed request would."""
        gen = await self.agenerate(request)
        if gen.error:
            raise RuntimeError(gen.error)
        return ChatTurn(content=gen.text, reasoning=gen.reasoning, finish_reason=gen.finish_reason,
                        usage=dict(gen.usage))
