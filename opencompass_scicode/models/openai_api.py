"""OpenAI-compatible chat models (OpenAI, vLLM, SGLang, llama.cpp, Ollama, ...).

Built on the official `openai` SDK's async client. Retries are ours, not the
SDK's, so that every attempt goes through the model's concurrency and rate
limits: exponential backoff with jitter on 429, 5xx, timeouts, connection
errors and malformed responses, honouring Retry-After, with a bounded number
of attempts and a bounded total wait. Which failures are retried, and whether
one ends its step's answer or stops the model, is the table of refusals.py: a
context-length or content-filter refusal fails that step alone; a wrong key,
model or URL stops the model at its first request (the first request is sent
alone to find out), and the probe (probe.py) finds those before any work.
"""
import asyncio
import random
import re
import time
from typing import Literal, Optional

from ..errors import ConfigError
from ..utils.checks import check_number
from ..utils.secrets import redacted_server, resolve_key
from ..registry import register
from .base import BaseModel, ChatTurn, Generation, GenerationRequest, answer_limit, answer_temperature
from .refusals import ENDPOINT, EndpointError, StepRefused, described, refusal_for
from .server import check_server

DEFAULT_SYSTEM_PROMPT = 'You are a helpful assistant.'
# Its request limits when its entry gives none (the class's `request_limits`, which the planner
# shares out among a model's shards).
LIMITS = {'max_concurrency': 8, 'query_per_second': None}
# How requests are sent: Chat Completions, or the Responses API.
APIS = ('chat', 'responses')
_THINK = re.compile(r'<think>(.*?)</think>', re.DOTALL)


def split_reasoning(content: Optional[str]) -> tuple[str, Optional[str]]:
    """A response's `content` split in two: (the answer without <think> blocks, the reasoning text or
    None where there was none)."""
    if not content or '<think>' not in content:
        return content or '', None
    thoughts = _THINK.findall(content)
    answer = _THINK.sub('', content)
    if '<think>' in answer:            # unterminated: everything after it is reasoning
        answer, _, tail = answer.partition('<think>')
        thoughts.append(tail)
    return answer.strip('\n'), '\n'.join(t.strip() for t in thoughts)


class RateLimiter:
    """At most `rate` request starts per second (a token bucket of size 1)."""

    def __init__(self, rate):
        self.interval = 1.0 / rate if rate else 0.0
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        """Return when the next request may start: at once, or after the bucket refills."""
        if not self.interval:
            return
        async with self._lock:
            now = time.monotonic()
            delay = self._next - now
            self._next = max(now, self._next) + self.interval
        if delay > 0:
            await asyncio.sleep(delay)


@register
class OpenAIChatModel(BaseModel):
    """A model behind an OpenAI-compatible API.

    path: model name. base_url: API root (e.g. http://localhost:8000/v1).
    key: 'ENV' ($OPENAI_API_KEY), the name of an environment variable, or a literal
        (kept out of every file the run writes).
    temperature (None: the dataset's, its protocol's; official 0), max_out_len (max tokens), system_prompt (None: none),
    extra_body (e.g. {'reasoning_effort': 'high'}), timeout (s per attempt),
    retries (attempts after the first), max_retry_wait (s, total), max_concurrency
    (requests in flight), query_per_second (request starts), api: 'chat' or 'responses',
    price: dict(input=..., output=...) per million tokens, for the cost in the summary (the
        model never uses it).
    server: dict(command=[...'{port}'...], ready_timeout=600, env={}) instead of base_url: a
        server the inference task starts on a free port and stops when it ends (models/server.py);
        the task then sets base_url.
    """

    supports_chat = True
    api_only = True
    request_limits = LIMITS
    # the SDK, imported by the model only when it is built
    warm_imports = ('opencompass_scicode.models.openai_api', 'openai')

    def __init__(self, path, abbr=None, base_url=None, key='ENV', temperature=None, max_out_len=None,
                 system_prompt=DEFAULT_SYSTEM_PROMPT, extra_body=None, timeout=600.0, retries=8,
                 max_retry_wait=600.0, max_concurrency=LIMITS['max_concurrency'],
                 query_per_second=LIMITS['query_per_second'], api: Literal[APIS] = 'chat',
                 price=None, server=None):
        super().__init__(abbr or self.default_abbr(path=path))
        for name, value, rule in (('temperature', temperature, dict(at_least=0, optional=True, example=0.0)),
                                  ('max_out_len', max_out_len, dict(whole=True, at_least=1, optional=True,
                                                                    example=4096)),
                                  ('timeout', timeout, dict(above=0, example=600.0)),
                                  ('retries', retries, dict(whole=True, at_least=0, example=8)),
                                  ('max_retry_wait', max_retry_wait, dict(at_least=0, example=600.0)),
                                  ('max_concurrency', max_concurrency, dict(whole=True, at_least=1, example=8)),
                                  ('query_per_second', query_per_second, dict(above=0, optional=True,
                                                                              example=2.0))):
            check_number(name, value, **rule)
        if server is not None and base_url is not None:
            raise ConfigError(f'server and base_url {base_url!r} both given', key='server',
                              fix='keep base_url for a server that is already running, or server=dict(...) '
                                  'for one the task starts (its base_url is then found for you)')
        self.server = None if server is None else check_server(server)
        if price is not None and not (isinstance(price, dict) and set(price) <= {'input', 'output'}
                                      and all(isinstance(v, (int, float)) for v in price.values())):
            raise ConfigError(f'price must be dict(input=..., output=...) in money per million tokens, '
                              f'got {price!r}', key='price')
        self.price = price
        if api not in APIS:
            raise ConfigError(f'unknown api {api!r}', key='api', fix=f'use one of {", ".join(map(repr, APIS))}')
        self.path = path
        self.base_url = base_url
        self._key, self._key_source = resolve_key(key)
        if not self._key:
            var = self._key_source or 'OPENAI_API_KEY'
            raise ConfigError(f'no API key for model {self.abbr!r}: ${var} is not set', key='key',
                              fix=f'export {var}=... (or set key= to the name of the variable '
                                  f'that holds it; local servers accept any non-empty key)')
        self.temperature = temperature
        self.max_out_len = max_out_len
        self.system_prompt = system_prompt
        self.extra_body = dict(extra_body or {})
        self.timeout = timeout
        self.retries = retries
        self.max_retry_wait = max_retry_wait
        self.max_concurrency = max_concurrency
        self.query_per_second = query_per_second
        self.api = api
        # With server=, the task sets this to a callable saying why that server is gone for good
        # (models/server.py): retrying against its closed port would only wait out max_retry_wait.
        self.server_failure = None
        self._client = None
        self._limits = None
        self._verified = None

    # ------------------------------------------------------------ identity
    @classmethod
    def default_abbr(cls, path=None, **options) -> str:
        """The last part of the model name `path` ('Qwen/Qwen3-8B' -> 'Qwen3-8B')."""
        return path.split('/')[-1] if path else super().default_abbr()

    def settings(self) -> dict:
        """The model name, where it is asked and how (temperature, limits, system prompt, extra body,
        api): what changes its answers, without the key."""
        # A started server gets a new port each time: its command (with '{port}' in it) names it.
        # Its secrets are <redacted>, the same whether given literally or moved to the environment.
        where = ({'server': redacted_server(self.server, {self._key})['command']} if self.server
                 else {'base_url': self.base_url})
        return {'type': 'OpenAIChatModel', 'path': self.path, **where,
                'temperature': self.temperature, 'max_out_len': self.max_out_len,
                'system_prompt': self.system_prompt, 'extra_body': self.extra_body, 'api': self.api}

    @property
    def api_key(self) -> str:
        """The resolved key (for a started server's readiness probe); never written anywhere."""
        return self._key

    def redact(self, text: str) -> str:
        """`text`, which may end up in files or logs, with the key replaced by <redacted>."""
        if text and self._key and len(self._key) >= 4:
            text = str(text).replace(self._key, '<redacted>')
        return text

    def probe(self) -> Optional[str]:
        """Ask the endpoint once before any work (probe.py): raises EndpointError when it is wrong,
        returns a note when not everything could be checked, else None. A server this model starts
        itself is not there yet: None."""
        if self.server:
            return None
        from .probe import probe
        return probe(self)

    # ------------------------------------------------------------ plumbing
    def _setup(self):
        """Per event loop: client, semaphore, rate limiter, first-request gate."""
        loop = asyncio.get_running_loop()
        if self._limits is not None and self._limits[0] is loop:
            return
        from openai import AsyncOpenAI
        self._client = AsyncOpenAI(api_key=self._key, base_url=self.base_url, max_retries=0,
                                   timeout=self.timeout)
        self._limits = (loop, asyncio.Semaphore(max(1, self.max_concurrency)),
                        RateLimiter(self.query_per_second))
        self._verified = None

    # A refusal (wrong key, model or URL) comes back within this; an answer may take minutes, and
    # the other requests need not wait for it.
    GATE_WAIT_S = 2.0

    async def _gate(self):
        """The very first request goes alone for a moment: a wrong key or model fails once, not
        hundreds of times."""
        if self._verified is None:
            self._verified = asyncio.get_running_loop().create_future()
            return True
        if not self._verified.done():
            try:
                await asyncio.wait_for(asyncio.shield(self._verified), self.GATE_WAIT_S)
            except asyncio.TimeoutError:
                pass              # no refusal by now: the first request is being answered
        return False

    def _open_gate(self, error=None):
        if self._verified is not None and not self._verified.done():
            if error is None:
                self._verified.set_result(True)
            else:
                self._verified.set_exception(error)
                self._verified.exception()      # seen here: no "never retrieved" warning without waiters

    async def achat(self, messages: list, tools: Optional[list] = None) -> ChatTurn:
        """One model turn for the chat `messages` (and the function `tools` it may call), with
        retries. Returns a ChatTurn; raises StepRefused (this request's
        failure) or EndpointError (every request's), as the table of refusals.py says."""
        self._setup()
        _, semaphore, limiter = self._limits
        first = await self._gate()
        started, waited, attempt = time.monotonic(), 0.0, 0
        while True:
            attempt += 1
            async with semaphore:
                await limiter.wait()
                try:
                    turn = await self._request(messages, tools)
                except Exception as exc:
                    failure = api_failure(exc)
                    if failure is None:
                        raise
                    error, (status, words) = exc, failure
                    row = refusal_for(status, words)
                    gone = self.server_failure() if self.server_failure else None
                    if gone:
                        raise self._stop(EndpointError(self.redact(gone)), first) from None
                    if not row.retried:
                        raise self._stop(self._refusal(status, words, row), first) from None
                else:
                    if first:
                        self._open_gate()
                    turn.attempts = attempt
                    turn.latency_s = round(time.monotonic() - started, 3)
                    return turn
            delay = _backoff(error, attempt)
            if attempt > self.retries or waited + delay > self.max_retry_wait:
                words = (f'gave up after {attempt} attempts ({waited:.0f}s of waiting): '
                         f'{type(error).__name__}: {words}')
                raise self._stop(self._refusal(status, words, row), first) from None
            waited += delay
            await asyncio.sleep(delay)

    def _refusal(self, status, words, row):
        """The error a failure becomes: EndpointError or StepRefused, in words without the key."""
        text = self.redact(described(self.abbr, status, words, row))
        return EndpointError(text, row) if row.side == ENDPOINT else StepRefused(text, row)

    def _stop(self, error, first):
        """`error`, raised by the first request: the requests held back go on, or, when the
        endpoint itself is wrong, stop with the same error."""
        if first:
            self._open_gate(error if isinstance(error, EndpointError) else None)
        return error

    async def _request(self, messages, tools):
        if self.api == 'responses':
            return await self._request_responses(messages, tools)
        kwargs = {'model': self.path, 'messages': messages, **self._temperature()}
        if answer_limit(self.max_out_len):
            kwargs['max_tokens'] = answer_limit(self.max_out_len)
        if tools:
            kwargs['tools'] = tools
        if self.extra_body:
            kwargs['extra_body'] = self.extra_body
        response = await self._client.chat.completions.create(**kwargs)
        if not getattr(response, 'choices', None):
            raise ValueError('malformed response: no choices')
        choice = response.choices[0]
        message = choice.message
        content, reasoning = split_reasoning(message.content or '')
        extra_reasoning = (getattr(message, 'reasoning_content', None)
                           or (message.model_extra or {}).get('reasoning_content')
                           or (message.model_extra or {}).get('reasoning'))
        if extra_reasoning:
            reasoning = extra_reasoning + ('\n' + reasoning if reasoning else '')
        calls = [{'id': c.id, 'name': c.function.name, 'arguments': c.function.arguments}
                 for c in (message.tool_calls or [])]
        usage = response.usage.model_dump() if response.usage else {}
        return ChatTurn(content=content, reasoning=reasoning, tool_calls=calls,
                        finish_reason=choice.finish_reason, usage=_plain_usage(usage))

    async def _request_responses(self, messages, tools):
        kwargs = {'model': self.path, 'input': [m for m in messages if m['role'] != 'system'],
                  **self._temperature()}
        system = [m['content'] for m in messages if m['role'] == 'system']
        if system:
            kwargs['instructions'] = system[0]
        if answer_limit(self.max_out_len):
            kwargs['max_output_tokens'] = answer_limit(self.max_out_len)
        if self.extra_body:
            kwargs['extra_body'] = self.extra_body
        if tools:
            kwargs['tools'] = [{'type': 'function', **t['function']} for t in tools]
        response = await self._client.responses.create(**kwargs)
        calls = [{'id': item.call_id, 'name': item.name, 'arguments': item.arguments}
                 for item in response.output if getattr(item, 'type', '') == 'function_call']
        content, reasoning = split_reasoning(response.output_text or '')
        finish = 'length' if getattr(response, 'incomplete_details', None) else 'stop'
        usage = response.usage.model_dump() if response.usage else {}
        return ChatTurn(content=content, reasoning=reasoning, tool_calls=calls, finish_reason=finish,
                        usage=_plain_usage(usage))

    def _temperature(self):
        """The request's temperature field: the model's, else the dataset's; none where neither sets one."""
        temperature = answer_temperature(self.temperature)
        return {} if temperature is None else {'temperature': temperature}

    def initial_messages(self, prompt: str) -> list[dict]:
        """The conversation a request starts from: the system prompt, if any, then `prompt`."""
        messages = [{'role': 'system', 'content': self.system_prompt}] if self.system_prompt else []
        return messages + [{'role': 'user', 'content': prompt}]

    async def agenerate(self, request: GenerationRequest) -> Generation:
        """The answer to `request`'s prompt in one turn (with retries), as a Generation; raises
        StepRefused or EndpointError as achat does."""
        turn = await self.achat(self.initial_messages(request.prompt))
        return Generation(text=turn.content, reasoning=turn.reasoning, finish_reason=turn.finish_reason,
                          usage=turn.usage_record())


def _plain_usage(usage):
    keep = ('prompt_tokens', 'completion_tokens', 'total_tokens', 'input_tokens', 'output_tokens')
    out = {k: usage[k] for k in keep if isinstance(usage.get(k), int)}
    out.setdefault('prompt_tokens', out.get('input_tokens', 0))
    out.setdefault('completion_tokens', out.get('output_tokens', 0))
    return out


def api_failure(exc: BaseException) -> Optional[tuple]:
    """(status, the server's words) of a failed request, as the table of refusals.py reads them;
    None for an exception that is no API failure (a bug: raised as is)."""
    import openai
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code, _message(exc)
    if isinstance(exc, openai.APITimeoutError):
        return 'timeout', _message(exc)
    if isinstance(exc, openai.APIConnectionError):
        return 'unreachable', _cause(exc)
    if isinstance(exc, (openai.APIResponseValidationError, ValueError)):
        return 'malformed', _message(exc)
    return None


def _cause(exc):
    """The connection error with the deepest words it wraps: the OS's (connection refused, name
    or service not known), where the HTTP library's own are vaguer (all attempts failed)."""
    words, inner = '', exc.__cause__ or exc.__context__
    while inner is not None:
        words = str(inner) or words
        inner = inner.__cause__ or inner.__context__
    return f'{exc} {words}' if words else str(exc)


def _message(exc):
    body = getattr(exc, 'body', None)
    if isinstance(body, dict):
        inner = body.get('error', body)
        if isinstance(inner, dict) and inner.get('message'):
            # the code and type name the failure where the message does not ('context_length_exceeded')
            extra = [str(inner[k]) for k in ('code', 'type') if isinstance(inner.get(k), str)
                     and inner[k] not in str(inner['message'])]
            return (str(inner['message'])[:300] + (f' [{", ".join(extra)}]' if extra else ''))
    return str(exc)[:300]


def _backoff(error, attempt, base=1.0, cap=60.0):
    response = getattr(error, 'response', None)
    headers = getattr(response, 'headers', None) or {}
    retry_after = headers.get('retry-after') if hasattr(headers, 'get') else None
    if retry_after:
        try:
            return min(max(float(retry_after), 0.0), 300.0)
        except ValueError:
            pass
    # full jitter on an exponential ceiling
    return random.uniform(0, min(cap, base * 2 ** (attempt - 1))) + 0.05
