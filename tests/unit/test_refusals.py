"""The table of refusals (models/refusals.py): a case for every row, read the way the model reads
a failure, and the model's answer to each side against the real loopback server."""
import asyncio
import time
import socket

import pytest

from opencompass_scicode.models import OpenAIChatModel
from opencompass_scicode.models.refusals import ENDPOINT, REFUSALS, STEP, EndpointError, StepRefused, refusal_for
from openai_server import FakeOpenAI, refusal

# row name -> (status, the server's words as a real server puts them): one case per row
CASES = {
    'key': (401, 'Incorrect API key provided: sk-abc***. You can find your API key at ...'),
    'filtered_403': (403, 'Your chosen model requires moderation and your input was flagged for "violence"'),
    'access': (403, 'Project proj_x does not have access to model gpt-5'),
    'not_found': (404, 'The model `gpt-9` does not exist or you do not have access to it. [model_not_found]'),
    'context': (400, "This model's maximum context length is 8192 tokens. However, your messages resulted in "
                     "9000 tokens. [context_length_exceeded]"),
    'filtered': (400, "The response was filtered due to the prompt triggering Azure OpenAI's content "
                      "management policy. [content_filter]"),
    'unknown_model': (400, 'The model gpt-9 is not available on this endpoint'),
    'setting': (400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                     "'max_completion_tokens' instead."),
    'bad_request': (400, "'messages' must contain the word 'json' in some form, to use 'response_format'"),
    'too_large': (413, 'Request Entity Too Large'),
    'unprocessable': (422, "[{'type': 'missing', 'loc': ['body', 'messages']}]"),
    'quota': (429, 'You exceeded your current quota, please check your plan and billing details.'),
    'rate_limited': (429, 'Rate limit reached for requests'),
    'server_error': (503, 'Service Unavailable'),
    'timeout': ('timeout', 'Request timed out.'),
    'malformed': ('malformed', 'malformed response: no choices'),
    'unreachable': ('unreachable', 'Connection error.: [Errno 111] Connection refused'),
    'other': (418, "I'm a teapot"),
}


def test_every_row_has_a_case_and_names_are_unique():
    names = [row.name for row in REFUSALS]
    assert len(names) == len(set(names))
    assert set(CASES) == set(names)


@pytest.mark.parametrize('name', [row.name for row in REFUSALS])
def test_each_row_is_the_first_match_of_its_case(name):
    status, words = CASES[name]
    assert refusal_for(status, words).name == name


def test_sides_are_those_the_issue_names():
    side = {row.name: row.side for row in REFUSALS}
    assert {n for n, s in side.items() if s == ENDPOINT} == {'key', 'access', 'not_found', 'unknown_model',
                                                             'setting', 'quota', 'unreachable'}
    assert side['context'] == side['filtered'] == side['bad_request'] == STEP
    # transient failures are retried before their side applies; refusals are not
    assert {row.name for row in REFUSALS if row.retried} == {'rate_limited', 'server_error', 'timeout',
                                                             'malformed', 'unreachable'}


def test_words_decide_within_a_status_and_a_context_message_is_not_an_unknown_model():
    # "model" and "exceeds" both appear in real context-length messages
    assert refusal_for(400, "This model's maximum context length is 4096 tokens").name == 'context'
    assert refusal_for(400, 'prompt is too long: 210000 tokens > 200000 maximum').name == 'context'
    assert refusal_for(400, 'something else entirely').name == 'bad_request'
    assert refusal_for(500, 'x').name == refusal_for(599, 'x').name == 'server_error'


# ------------------------------------------------------------------ the model, against a real server
def ask(model):
    return asyncio.run(model.achat([{'role': 'user', 'content': 'hi'}]))


def api_model(server, **kw):
    kw = dict(dict(retries=1, timeout=5, max_retry_wait=2), **kw)
    return OpenAIChatModel(path='test-model', base_url=server.base_url, key='sk-unit', **kw)


@pytest.fixture
def loopback():
    with FakeOpenAI(key='sk-unit') as srv:
        yield srv


def test_a_context_refusal_is_the_steps_own_with_the_servers_words_and_not_retried(loopback):
    loopback.queue = [refusal('context')]
    with pytest.raises(StepRefused) as caught:
        ask(api_model(loopback))
    assert caught.value.row.name == 'context' and not caught.value.transient
    assert 'maximum context length is 8192 tokens' in str(caught.value) and 'HTTP 400' in str(caught.value)
    assert len(loopback.log) == 1


def test_a_server_error_after_its_retries_is_the_steps_and_transient(loopback):
    loopback.queue = [{'status': 503}, {'status': 503}]
    with pytest.raises(StepRefused) as caught:
        ask(api_model(loopback))
    assert caught.value.transient and 'gave up after 2 attempts' in str(caught.value)


@pytest.mark.parametrize('setup, name', [
    (lambda srv: setattr(srv, 'key', 'sk-other'), 'key'),
    (lambda srv: setattr(srv, 'models', ['served-model']), 'not_found'),
])
def test_a_wrong_key_or_model_stops_the_model(loopback, setup, name):
    setup(loopback)
    with pytest.raises(EndpointError) as caught:
        ask(api_model(loopback))
    assert caught.value.row.name == name and 'sk-unit' not in str(caught.value)
    assert len(loopback.log) == 1


def test_an_endpoint_where_nothing_listens_stops_the_model_after_its_retries():
    with socket.socket() as sock:           # a port nobody listens on
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    model = OpenAIChatModel(path='m', base_url=f'http://127.0.0.1:{port}/v1', key='sk-unit', retries=1,
                            max_retry_wait=2)
    with pytest.raises(EndpointError) as caught:
        ask(model)
    assert caught.value.row.name == 'unreachable' and '[Errno 111]' in str(caught.value)   # the OS's words


def test_the_docs_table_lists_every_row_with_its_side():
    from helpers import ROOT
    page = (ROOT / 'docs' / 'api-endpoints.md').read_text()
    for row in REFUSALS:
        line = next((l for l in page.splitlines() if l.startswith(f'| `{row.name}` |')), None)
        assert line is not None, row.name
        assert f'| {row.side} | {"yes" if row.retried else "no"} |' in line, line


# ------------------------------------------------------------------ the probe, against real sockets
def probed(base_url, path='test-model'):
    from opencompass_scicode.models.probe import probe
    model = OpenAIChatModel(path=path, base_url=base_url, key='sk-unit')
    start = time.monotonic()
    try:
        return probe(model, timeout=2), time.monotonic() - start
    except EndpointError as exc:
        return exc, time.monotonic() - start


def test_the_probe_stops_on_no_such_host_and_on_a_server_that_never_answers():
    said, took = probed('http://no-such-host.invalid/v1')           # never resolves (RFC 6761)
    assert isinstance(said, EndpointError) and said.row.name == 'unreachable' and took < 10
    assert '[Errno -' in str(said)      # the resolver's own words (getaddrinfo's codes are negative)
    with socket.socket() as silent:             # takes the connection, never answers
        silent.bind(('127.0.0.1', 0))
        silent.listen(1)
        said, took = probed(f'http://127.0.0.1:{silent.getsockname()[1]}/v1')
    assert isinstance(said, EndpointError) and 'no answer to the model list in time' in str(said)
    assert took < 10 and '--no-probe' in str(said)


def test_the_probe_leaves_to_the_run_what_it_cannot_judge(loopback):
    loopback.models_status = 503                # still loading: the run's retries deal with it
    note, _ = probed(loopback.base_url)
    assert 'the model list answered HTTP 503' in note and loopback.log == []
    loopback.models_status = 200
    loopback.models = ['alias-of-it', 'test-model']
    assert probed(loopback.base_url)[0] is None         # listed: nothing asked
    assert loopback.log == []
    loopback.models = None                      # answers any name, lists another one: one token asked
    note, _ = probed(loopback.base_url, path='unlisted-model')
    assert note is None and [(e['body']['model'], e['body']['max_tokens']) for e in loopback.log] == [
        ('unlisted-model', 1)]
