"""Which failures of an OpenAI-compatible API belong to one request, and which to the endpoint.

One table, read top to bottom, the first matching row deciding (`REFUSALS`):

- side STEP: the request itself was refused or could not be answered: a prompt longer than the
  model's context, a content filter, a request the server will not take, or a transient failure
  that outlasted the retries. That step's answer is an error (recorded with the server's words,
  scored as not passing); every other step goes on.
- side ENDPOINT: every request would fail the same way: a wrong key, a key without access, an
  unknown model or URL, a request setting the model refuses, a spent quota, or a server that
  cannot be reached. The model stops at once; before any work, the probe (probe.py) exits 2 on
  these.

`retried` rows are tried again (with backoff) before their side applies. A row's `says` is a
regular expression looked for in the server's message, error code and type (case-insensitive);
None matches any. Statuses are HTTP codes ('5xx': any server error, 'other': any code no row
above names), or a word for a request that got no answer: 'unreachable' (no connection),
'timeout' (no answer in time), 'malformed' (no usable answer).
"""
import re
from dataclasses import dataclass
from typing import Optional, Union

from ..errors import UserFacingError

STEP, ENDPOINT = 'step', 'endpoint'

CONTEXT_WORDS = (r'context.length|context.window|maximum context|too many tokens|prompt is too long|'
                 r'input is too long|reduce the length|exceeds? the (model|max)|token limit')
FILTER_WORDS = r'content.filter|content.management|content.policy|safety|flagged|moderation|responsible ai'
UNKNOWN_MODEL_WORDS = (r'model.{0,80}(does not exist|not found|not exist|unknown|is not available|not served)|'
                       r'unknown model|no such model|model_not_found|invalid model')
SETTING_WORDS = (r'unsupported (parameter|value)|unrecognized request argument|extra inputs are not permitted|'
                 r'is not supported with this model|unknown parameter')
QUOTA_WORDS = r'insufficient_quota|exceeded your current quota|billing'


@dataclass(frozen=True)
class Refusal:
    name: str                   # the row's name, in a word
    status: Union[int, str]     # HTTP status, '5xx', 'other', or a word (see above)
    says: Optional[str]         # regex on the server's words; None: any
    side: str                   # STEP or ENDPOINT
    retried: bool               # tried again (bounded backoff) before `side` applies
    meaning: str                # what it means, in words
    fix: str                    # what to do about it

    def matches(self, status: Union[int, str], words: Optional[str]) -> bool:
        """Whether this row covers a failure with `status` (an HTTP code or a word) and the
        server's `words`."""
        http = isinstance(status, int)
        if not (self.status == status or (self.status == '5xx' and http and status >= 500)
                or (self.status == 'other' and http)):
            return False
        return self.says is None or re.search(self.says, words or '', re.IGNORECASE) is not None


REFUSALS = (
    Refusal('key', 401, None, ENDPOINT, False, 'the API key was refused',
            'check the key (key= of the model, --model-api-key, or $OPENAI_API_KEY)'),
    Refusal('filtered_403', 403, FILTER_WORDS, STEP, False, 'a content filter refused this request',
            'nothing to fix in the run: the step counts as failed'),
    Refusal('access', 403, None, ENDPOINT, False, 'the key may not use this model or endpoint',
            "check the key's permissions (its project, organisation or allowed models) and the model name"),
    Refusal('not_found', 404, None, ENDPOINT, False, 'unknown model, or base_url is not the API root',
            'check the model name (path=, the MODEL argument) and base_url (most servers: http://HOST:PORT/v1)'),
    Refusal('context', 400, CONTEXT_WORDS, STEP, False, "the prompt does not fit the model's context",
            'a model with a longer context, or a smaller max_out_len, would answer it'),
    Refusal('filtered', 400, FILTER_WORDS, STEP, False, 'a content filter refused this request',
            'nothing to fix in the run: the step counts as failed'),
    Refusal('unknown_model', 400, UNKNOWN_MODEL_WORDS, ENDPOINT, False, 'unknown model',
            'check the model name (path=, the MODEL argument) against what the server serves'),
    Refusal('setting', 400, SETTING_WORDS, ENDPOINT, False, 'a request setting is refused by this model',
            'remove or rename the setting the message names (max_out_len, temperature, extra_body, '
            '--model-params)'),
    Refusal('bad_request', 400, None, STEP, False, 'the server refused this request',
            'see the message: the step counts as failed'),
    Refusal('too_large', 413, None, STEP, False, 'the request is too large for the server',
            'a server accepting larger requests would answer it'),
    Refusal('unprocessable', 422, None, STEP, False, 'the server could not process this request',
            'see the message: the step counts as failed'),
    Refusal('quota', 429, QUOTA_WORDS, ENDPOINT, False, 'the account has no quota left',
            "top up the account, or use another key"),
    Refusal('rate_limited', 429, None, STEP, True, 'rate limited, still after the retries',
            'lower max_concurrency / query_per_second, or raise retries and max_retry_wait; -r asks again'),
    Refusal('server_error', '5xx', None, STEP, True, 'server error, still after the retries',
            "see the server's log; -r asks again"),
    Refusal('timeout', 'timeout', None, STEP, True, 'no answer in time, still after the retries',
            'raise timeout= (seconds per attempt); -r asks again'),
    Refusal('malformed', 'malformed', None, STEP, True, 'no usable answer, still after the retries',
            "see the server's log; -r asks again"),
    Refusal('unreachable', 'unreachable', None, ENDPOINT, True, 'the server cannot be reached',
            'check base_url (host and port) and that the server is running'),
    # any other status (another 4xx): a refusal of this request
    Refusal('other', 'other', None, STEP, False, 'the server refused this request',
            'see the message: the step counts as failed'),
)


def refusal_for(status: Union[int, str], words: Optional[str] = '') -> Refusal:
    """The first row of REFUSALS matching `status` (an HTTP code or one of the words above) and
    the server's `words`."""
    return next(row for row in REFUSALS if row.matches(status, words))


class StepRefused(Exception):
    """This request was refused (or outlasted its retries): its step's answer is an error; the
    model's other steps go on. `transient`: another try (-r) may be answered."""

    def __init__(self, text, row):
        super().__init__(text)
        self.row = row

    @property
    def transient(self) -> bool:
        """Whether the failure was one retried (a later -r may be answered)."""
        return self.row.retried


class EndpointError(UserFacingError):
    """The endpoint is wrong for every request: the model stops (before any work: exit 2).
    `step`: the step whose request found out, when it was one."""

    def __init__(self, text, row=None, step=None):
        super().__init__(text)
        self.text, self.row, self.step = text, row, step

    def at_step(self, step) -> 'EndpointError':
        """The same error, naming the step whose request met it."""
        return EndpointError(f'stopped at step {step}: {self.text}', self.row, step)


def status_text(status: Union[int, str]) -> str:
    """'HTTP 401', or the word for a request that got no answer."""
    return f'HTTP {status}' if isinstance(status, int) else status


def described(model: str, status: Union[int, str], words: str, row: Refusal) -> str:
    """The one-line account of a failure of `model` (its abbr): who, the status, the server's own
    words, the meaning of its REFUSALS `row` and what to do."""
    return f'{model}: {row.meaning} ({status_text(status)}: {words}). Fix: {row.fix}'
