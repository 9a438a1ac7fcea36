"""One question to an API model's endpoint before any work: is it there, does it take the key,
does it serve the model?

Planning asks it before targets are fetched or regenerated (inference/preflight.py), so that a
wrong URL or key costs seconds, not the minutes of retries a run would spend on every problem.
First the model list (`GET /models`, free on every OpenAI-compatible server); where that is not
served, or does not name the model, one request for a single token. Its failures are read with
the table of refusals.py: an endpoint-side one (no connection, 401, 403, an unknown model or
route, a spent quota) and a list that does not answer in time stop the run; anything else is
left to the run (its retries, its per-step refusals), the probe having learnt only that the
server is there. --no-probe skips it, for endpoints that bill even the list.
"""
from typing import Optional

from .openai_api import api_failure
from .refusals import ENDPOINT, EndpointError, refusal_for, status_text

PROBE_TIMEOUT_S = 10.0
# Statuses of a model list the server does not offer: the one-token request asks instead.
NO_LIST = (404, 405, 501)
# What the one-token request cannot judge: it is not the run's request (one token, no prompt).
NOT_JUDGED = ('setting',)
SHOWN_MODELS = 8


def probe(model, timeout=PROBE_TIMEOUT_S) -> Optional[str]:
    """Ask `model`'s endpoint (an OpenAIChatModel with a base_url); raises EndpointError saying
    what the server answered and what to fix. Returns a note when the probe could not judge
    everything (the run goes on), else None."""
    import openai
    client = openai.OpenAI(api_key=model.api_key, base_url=model.base_url, max_retries=0, timeout=timeout)
    try:
        try:
            served = [m.id for m in client.models.list()]
        except Exception as exc:
            status, words = _read(exc)
            if status not in NO_LIST:
                _judge(model, status, words, listing=True)
                return f'{_who(model)}: the model list answered {status_text(status)} ({words}); not checked further'
            served = None
        if served is not None and model.path in served:
            return None
        try:
            _one_token(client, model)
        except Exception as exc:
            status, words = _read(exc)
            if served:
                shown = ', '.join(served[:SHOWN_MODELS]) + (', ...' if len(served) > SHOWN_MODELS else '')
                words = f'{words}; the server lists: {shown}'
            _judge(model, status, words, listing=False)
            return (f'{_who(model)}: a one-token request was refused ({status_text(status)}: {words}); '
                    f'not checked further')
        return None
    finally:
        client.close()


def _one_token(client, model):
    settings = {'model': model.path, 'temperature': model.temperature}
    if model.extra_body:
        settings['extra_body'] = model.extra_body
    if model.api == 'responses':       # the Responses API asks for at least 16 tokens
        client.responses.create(input='Say OK.', max_output_tokens=16, **settings)
    else:
        client.chat.completions.create(messages=[{'role': 'user', 'content': 'Say OK.'}], max_tokens=1,
                                       **settings)


def _read(exc):
    """(status, the server's words) of a failed probe request; re-raises what is no API failure."""
    failure = api_failure(exc)
    if failure is None:
        raise exc
    return failure


def _judge(model, status, words, listing):
    """Raise EndpointError if the answer means the endpoint is wrong for every request."""
    row = refusal_for(status, words)
    # A list that does not answer in time is not a slow answer: the server is not (yet) serving.
    decisive = (row.side == ENDPOINT and row.name not in NOT_JUDGED) or (listing and status == 'timeout')
    if not decisive:
        return
    meaning = 'no answer to the model list in time' if row.name == 'timeout' else row.meaning
    raise EndpointError(model.redact(
        f'{_who(model)}: {meaning} ({status_text(status)}: {words}); nothing was run.\n'
        f'  fix: {row.fix}; or add --no-probe to skip this check (it asks the endpoint once before any work)'), row)


def _who(model):
    return f'model {model.abbr!r} ({model.path!r} at {model.base_url})'
