"""A loopback HTTP file server for the targets fetch: honours Range (or, told to, ignores it),
counts requests and bytes, and can misbehave on purpose: cut a connection after N bytes, answer
404, never answer, send slowly, or put a confirmation page (as Google Drive does for large
files) in front of a file.

    with FileServer({'/t.h5': data}, cuts=[len(data) // 2]) as srv:
        srv.url('/t.h5'); srv.log; srv.bytes_sent
"""
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

CHUNK = 16 * 1024


class FileServer:
    def __init__(self, files, cuts=(), honour_range=True, hang=(), rate=None, pages=None, needs=None):
        """`files`: {path: bytes}. `cuts`: byte counts, one per GET of a file in order: that GET
        closes its connection after sending so many bytes. `hang`: paths never answered.
        `rate`: bytes per second. `pages`: {path: html} served as text/html. `needs`: {path:
        {query key: value}} without which the path answers 403."""
        self.files, self.cuts, self.honour_range = dict(files), list(cuts), honour_range
        self.hang, self.rate, self.pages, self.needs = set(hang), rate, dict(pages or {}), dict(needs or {})
        self.log = []               # per request: path, range header, status, bytes sent, times
        self._stop = threading.Event()
        self._lock = threading.Lock()

    @property
    def bytes_sent(self):
        return sum(e['sent'] for e in self.log)

    def url(self, path):
        return f'http://127.0.0.1:{self.httpd.server_address[1]}{path}'

    def __enter__(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def log_message(self, *args):
                pass

            def do_GET(self):
                parts = urlsplit(self.path)
                entry = {'path': parts.path, 'range': self.headers.get('Range'), 'status': None,
                         'sent': 0, 'start': time.monotonic(), 'end': None}
                with server._lock:
                    server.log.append(entry)
                try:
                    self._answer(parts, entry)
                except (BrokenPipeError, ConnectionResetError):
                    entry['status'] = entry['status'] or 'client gone'
                entry['end'] = time.monotonic()

            def _answer(self, parts, entry):
                if parts.path in server.hang:
                    server._stop.wait()
                    return
                wanted = server.needs.get(parts.path, {})
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                if any(query.get(k) != v for k, v in wanted.items()):
                    return self._plain(entry, 403, b'forbidden')
                if parts.path in server.pages:
                    return self._plain(entry, 200, server.pages[parts.path].encode(), 'text/html; charset=utf-8')
                data = server.files.get(parts.path)
                if data is None:
                    return self._plain(entry, 404, b'not found')
                start = 0
                match = re.match(r'bytes=(\d+)-$', self.headers.get('Range') or '')
                if match and server.honour_range:
                    start = int(match.group(1))
                    if start >= len(data):
                        entry['status'] = 416
                        self.send_response(416)
                        self.send_header('Content-Range', f'bytes */{len(data)}')
                        self.send_header('Content-Length', '0')
                        self.end_headers()
                        return
                    entry['status'] = 206
                    self.send_response(206)
                    self.send_header('Content-Range', f'bytes {start}-{len(data) - 1}/{len(data)}')
                else:
                    entry['status'] = 200
                    self.send_response(200)
                self.send_header('Content-Type', 'application/octet-stream')
                self.send_header('Content-Length', str(len(data) - start))
                self.end_headers()
                with server._lock:
                    cut = server.cuts.pop(0) if server.cuts else None
                body = data[start:]
                for offset in range(0, len(body), CHUNK):
                    block = body[offset:offset + CHUNK]
                    if cut is not None and entry['sent'] + len(block) > cut:
                        block = block[:cut - entry['sent']]
                        self.wfile.write(block)
                        entry['sent'] += len(block)
                        self.wfile.flush()
                        self.close_connection = True
                        self.connection.shutdown(2)      # the cut: the client sees the stream end early
                        return
                    self.wfile.write(block)
                    entry['sent'] += len(block)
                    if server.rate:
                        time.sleep(len(block) / server.rate)
                    if server._stop.is_set():
                        return

            def _plain(self, entry, status, body, kind='text/plain'):
                entry['status'] = status
                self.send_response(status)
                self.send_header('Content-Type', kind)
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
