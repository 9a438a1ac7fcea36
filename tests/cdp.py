"""A headless Chromium driven over the DevTools protocol through a pipe (`--remote-debugging-pipe`):
one browser opens many pages in turn, and scripts run in each after it has loaded. No package is
needed: the protocol is JSON messages, each ended by a NUL byte, on the browser's fds 3 (in) and
4 (out).
"""
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

CHROMIUM = shutil.which('chromium') or shutil.which('chromium-browser')
# The network off for real where we may make a namespace without one (root).
OFFLINE = ['unshare', '--net'] if os.geteuid() == 0 and shutil.which('unshare') else []


class BrowserError(RuntimeError):
    pass


def _above(fd, lowest):
    """`fd` moved to a number >= `lowest` (the original is closed)."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, lowest)
    os.close(fd)
    return moved


class Browser:
    """`with Browser() as b: b.open(url); b.evaluate('document.title')`.

    `command(argv)` gives the command line that starts the browser's `argv` (default: in a
    network namespace of its own where we may make one)."""

    def __init__(self, timeout=30, command=None):
        self.timeout = timeout
        self._command = command or (lambda argv: [*OFFLINE, *argv])
        self._next_id = 0
        self._buffer = b''
        self.events = []            # (method, params) of the open page, since the last open()

    def __enter__(self):
        self._profile = tempfile.mkdtemp(prefix='cdp-profile-')
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # Above 4, so that putting them at 3 and 4 in the child overwrites neither of them.
        to_browser_r, from_browser_w = (_above(fd, 10) for fd in (to_browser_r, from_browser_w))

        def as_fds_3_and_4():
            os.dup2(to_browser_r, 3)        # dup2 makes them inheritable: the browser gets them
            os.dup2(from_browser_w, 4)

        self._stderr = tempfile.TemporaryFile()      # a pipe could fill up with the browser's chatter
        self._proc = subprocess.Popen(
            self._command([CHROMIUM, '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
             '--disable-background-networking', '--disable-component-update', '--disable-sync',
             '--remote-debugging-pipe', f'--user-data-dir={self._profile}', 'about:blank']),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._stderr,
            preexec_fn=as_fds_3_and_4, close_fds=False)
        os.close(to_browser_r)
        os.close(from_browser_w)
        target = self.send('Target.createTarget', url='about:blank')['targetId']
        self._session = self.send('Target.attachToTarget', targetId=target, flatten=True)['sessionId']
        for domain in ('Page', 'Runtime', 'Log'):
            self.send(f'{domain}.enable', session=True)
        return self

    def __exit__(self, *exc):
        try:
            self.send('Browser.close')
        except (BrowserError, OSError):
            pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        for fd in (self._to_browser, self._from_browser):
            os.close(fd)
        self._stderr.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    # ------------------------------------------------------------------ the protocol
    def _write(self, message):
        data = json.dumps(message).encode() + b'\0'
        while data:
            data = data[os.write(self._to_browser, data):]

    def _read(self, deadline):
        while b'\0' not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError('the browser did not answer in time')
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 16)
                if not chunk:
                    self._stderr.seek(0)
                    raise BrowserError(f'the browser closed its pipe: {self._stderr.read()[-2000:]!r}')
                self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b'\0')
        return json.loads(message)

    def send(self, method, session=False, **params):
        """Send a command and return its result; events that arrive meanwhile are kept."""
        self._next_id += 1
        message = {'id': self._next_id, 'method': method, 'params': params}
        if session:
            message['sessionId'] = self._session
        self._write(message)
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read(deadline)
            if reply.get('id') == self._next_id:
                if 'error' in reply:
                    raise BrowserError(f'{method}: {reply["error"]}')
                return reply.get('result', {})
            if 'method' in reply:
                self.events.append((reply['method'], reply.get('params', {})))

    def _wait_for(self, method, deadline):
        while True:
            for i, (name, _) in enumerate(self.events):
                if name == method:
                    return self.events.pop(i)
            message = self._read(deadline)
            if 'method' in message:
                self.events.append((message['method'], message.get('params', {})))

    # ------------------------------------------------------------------ what tests use
    def open(self, url):
        """Load `url` and wait for its load event; `events` then holds what the page did."""
        self.events = []
        result = self.send('Page.navigate', session=True, url=url)
        if result.get('errorText'):
            raise BrowserError(f'{url}: {result["errorText"]}')
        self._wait_for('Page.loadEventFired', time.monotonic() + self.timeout)

    def evaluate(self, expression):
        """The value of a JavaScript expression in the open page (awaited if it is a promise)."""
        result = self.send('Runtime.evaluate', session=True, expression=expression, returnByValue=True,
                           awaitPromise=True)
        if 'exceptionDetails' in result:
            raise BrowserError(f'{expression[:60]}...: {result["exceptionDetails"]}')
        return result['result'].get('value')

    def errors(self):
        """What went wrong on the open page: uncaught exceptions, and errors it logged."""
        out = [p['exceptionDetails'].get('exception', {}).get('description') or p['exceptionDetails'].get('text')
               for m, p in self.events if m == 'Runtime.exceptionThrown']
        out += [p['entry']['text'] for m, p in self.events
                if m == 'Log.entryAdded' and p['entry'].get('level') == 'error']
        return out
