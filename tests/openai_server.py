"""A real OpenAI-compatible HTTP server on loopback, scriptable per request.

Answers SciCode prompts with the gold code of the step being asked for (found
by its function header in the NEXT STEP part of the prompt), so runs against
it score like the reference model. Behaviours can be queued for the next
requests: latency, 429 with Retry-After, 500, hanging, malformed JSON,
finish_reason='length', reasoning content, tool calls, wrong answers, and
refusals in the words real servers use (`refusal(...)`: a 400 for a prompt
over the context length, a content filter). With a `key`, a request without it
gets 401; with `models`, GET /models lists those and a request for another
model gets 404, as vLLM and OpenAI answer an unknown model.
"""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


# What servers say when they refuse one request (OpenAI's and vLLM's words).
REFUSALS = {
    'context': (400, "This model's maximum context length is 8192 tokens. However, your messages resulted "
                     "in 9000 tokens. Please reduce the length of the messages.", 'context_length_exceeded'),
    'filter': (400, "The response was filtered due to the prompt triggering Azure OpenAI's content "
                    "management policy.", 'content_filter'),
    'unknown_model': (404, 'The model `{model}` does not exist or you do not have access to it.',
                      'model_not_found'),
}


def refusal(kind, **words):
    """A behaviour (for `queue` or `rule`): the server refuses the request as real ones do."""
    status, message, code = REFUSALS[kind]
    return {'status': status, 'message': message.format(**words), 'code': code}


class FakeOpenAI:
    def __init__(self, steps=(), key=None, delay=0.0, port=0, models=None):
        self.headers_to_code = sorted(((s.function_header, s.ground_truth_code) for s in steps),
                                      key=lambda hc: -len(hc[0]))
        self.key = key
        self.delay = delay
        self.queue = []             # behaviours for the next requests, in order
        self.rule = None            # callable(body) -> behaviour or None, checked before the queue
        self.log = []               # one dict per request: time, body, status
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self.models_status = 200     # what GET /v1/models answers (e.g. 503: still loading)
        self.received_to = None      # a file that gets a line as each request arrives (kept if killed)
        self.models = models         # the models served (None: any name is answered, 'test-model' listed)
        self.gets = []               # the path of every GET, in order
        self.httpd = ThreadingHTTPServer(('127.0.0.1', port), self._handler())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self):
        return f'http://127.0.0.1:{self.httpd.server_address[1]}/v1'

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    # ------------------------------------------------------------ answers
    def gold_for(self, text):
        next_part = text.split('NEXT STEP', 1)[-1]
        for header, code in self.headers_to_code:
            if header and header in next_part:
                return code
        return None

    def answer(self, body):
        messages = body.get('messages', [])
        last_user = next((m['content'] for m in reversed(messages) if m['role'] == 'user'), '')
        code = self.gold_for(last_user) or self.gold_for('NEXT STEP' + '\n'.join(
            m.get('content') or '' for m in messages if m['role'] == 'user'))
        return f'Here is the code.\n```python\n{code or "pass"}\n```\n'

    def _next_behaviour(self, body):
        with self._lock:
            if self.rule:
                found = self.rule(body)
                if found is not None:
                    return found
            return self.queue.pop(0) if self.queue else {}

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def log_message(self, *args):
                pass

            def _send(self, status, payload, headers=None, raw=None):
                data = raw if raw is not None else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                """GET /v1/models: what launchers' readiness checks and the probe ask."""
                server.gets.append(self.path)
                if not self.path.rstrip('/').endswith('/models'):
                    self._send(404, {'error': {'message': f'no route {self.path}'}})
                elif server.key and self.headers.get('Authorization') != f'Bearer {server.key}':
                    self._send(401, {'error': {'message': 'Incorrect API key provided.'}})
                elif server.models_status != 200:
                    self._send(server.models_status, {'error': {'message': 'loading'}})
                else:
                    self._send(200, {'object': 'list', 'data': [{'id': name, 'object': 'model', 'owned_by': 'test'}
                                                                 for name in server.models or ['test-model']]})

            def do_POST(self):
                length = int(self.headers.get('Content-Length', 0))
                body = json.loads(self.rfile.read(length) or b'{}')
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    if server.received_to:
                        with open(server.received_to, 'a') as fh:
                            fh.write('request\n')
                entry = {'time': time.monotonic(), 'body': body,
                         'auth': self.headers.get('Authorization', '')}
                entry['status'] = None
                try:
                    entry['status'] = self._respond(body)
                except (BrokenPipeError, ConnectionResetError):
                    entry['status'] = 'client gone'     # e.g. the client timed out first
                finally:
                    with server._lock:
                        server.in_flight -= 1
                        server.log.append(entry)

            def _respond(self, body):
                if server.key and self.headers.get('Authorization') != f'Bearer {server.key}':
                    self._send(401, {'error': {'message': 'Incorrect API key provided.',
                                               'type': 'invalid_request_error'}})
                    return 401
                if server.models is not None and body.get('model') not in server.models:
                    b = refusal('unknown_model', model=body.get('model'))
                else:
                    b = server._next_behaviour(body)
                time.sleep(b.get('delay', server.delay))
                if b.get('hang'):
                    time.sleep(b['hang'])
                if b.get('status'):
                    headers = {'Retry-After': str(b['retry_after'])} if 'retry_after' in b else {}
                    error = {'message': b.get('message', 'scripted error'), 'type': 'invalid_request_error'}
                    if b.get('code'):
                        error['code'] = b['code']
                    self._send(b['status'], {'error': error}, headers)
                    return b['status']
                if self.path.endswith('/responses'):
                    return self._respond_responses(body, b)
                if b.get('malformed'):
                    self._send(200, None, raw=b'{"id": "x", "choices": [ {"message": ')
                    return 200
                message = {'role': 'assistant', 'content': b.get('content', server.answer(body))}
                if 'reasoning_content' in b:
                    message['reasoning_content'] = b['reasoning_content']
                if b.get('tool_calls'):
                    message['tool_calls'] = [
                        {'id': f'call_{i}', 'type': 'function',
                         'function': {'name': c.get('name', 'code_interpreter'),
                                      'arguments': json.dumps({'code': c['code']})}}
                        for i, c in enumerate(b['tool_calls'])]
                    message['content'] = b.get('content', '')
                prompt_tokens = sum(len((m.get('content') or '').split()) for m in body.get('messages', []))
                completion_tokens = len((message['content'] or '').split())
                self._send(200, {
                    'id': 'chatcmpl-test', 'object': 'chat.completion', 'created': int(time.time()),
                    'model': body.get('model', 'test'),
                    'choices': [{'index': 0, 'message': message,
                                 'finish_reason': b.get('finish_reason',
                                                        'tool_calls' if b.get('tool_calls') else 'stop')}],
                    'usage': {'prompt_tokens': prompt_tokens, 'completion_tokens': completion_tokens,
                              'total_tokens': prompt_tokens + completion_tokens}})
                return 200

            def _respond_responses(self, body, b):
                """The Responses API: `input` messages in, `output` items out."""
                messages = [{'role': m['role'], 'content': m['content'] if isinstance(m['content'], str) else ''}
                            for m in body.get('input', [])]
                text = b.get('content', server.answer({'messages': messages}))
                self._send(200, {
                    'id': 'resp-test', 'object': 'response', 'created_at': int(time.time()),
                    'model': body.get('model', 'test'), 'status': 'completed',
                    'output': [{'type': 'message', 'id': 'msg-1', 'role': 'assistant', 'status': 'completed',
                                'content': [{'type': 'output_text', 'text': text, 'annotations': []}]}],
                    'parallel_tool_calls': False, 'tool_choice': 'auto', 'tools': [],
                    'usage': {'input_tokens': 10, 'output_tokens': len(text.split()), 'total_tokens': 10,
                              'input_tokens_details': {'cached_tokens': 0},
                              'output_tokens_details': {'reasoning_tokens': 0}}})
                return 200

        return Handler


def all_steps(data_dir):
    """The steps of both splits in a SciCode data directory, for answers with their gold code."""
    from opencompass_scicode.datasets import SciCodeDataset
    return [s for split in ('validation', 'test')
            for p in SciCodeDataset(path=data_dir, split=split).problems for s in p.steps]


def main():
    """Serve from a separate process: `python tests/openai_server.py --data DIR --delay 1`."""
    import argparse
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    parser = argparse.ArgumentParser()
    parser.add_argument('--data', required=True)
    parser.add_argument('--delay', type=float, default=0.0)
    parser.add_argument('--key', default=None)
    args = parser.parse_args()
    with FakeOpenAI(all_steps(args.data), key=args.key, delay=args.delay) as server:
        print(server.base_url, flush=True)
        try:
            sys.stdin.read()           # serve until the parent closes our stdin
        finally:
            print(json.dumps({'requests': len(server.log), 'max_in_flight': server.max_in_flight}),
                  flush=True)


def asked(server, steps):
    """(step id, with background) of every request the server received, in order."""
    by_header = sorted(((s.function_header, s) for s in steps), key=lambda hs: -len(hs[0]))
    out = []
    for entry in server.log:
        text = '\n'.join(m.get('content') or '' for m in entry['body'].get('messages', []) if m['role'] == 'user')
        step = next(s for header, s in by_header if header and header in text.split('NEXT STEP', 1)[-1])
        # the official template for prompts with background says so
        out.append((step.step_id, 'along with background knowledge' in text))
    return out


if __name__ == '__main__':
    main()
