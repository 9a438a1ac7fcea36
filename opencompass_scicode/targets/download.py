"""One URL into one partial file, resumed with HTTP Range.

The bytes go to a partial file beside the target (never under the target's name); a restart
asks for the rest with `Range: bytes=<what we have>-`. A server that ignores the Range (200
instead of 206) sends the whole file again, which then replaces the partial one. A cut
connection is resumed a few times within one call; each wait on the network is bounded by a
timeout. Google Drive answers a large file's first request with a page asking to confirm
(no virus scan); its form names the real download, which is followed.
"""
import http.client
import os
import re
import time
import urllib.error
import urllib.request
from html.parser import HTMLParser
from urllib.parse import urlencode, urljoin, urlsplit

from ..errors import DataError

CHUNK = 1 << 20
RESUMES = 3                 # cut connections resumed within one call
DEFAULT_TIMEOUT = 30.0      # seconds for any one wait on the network (connect, each read)
USER_AGENT = 'opencompass-scicode (targets fetch)'


class FetchFailed(Exception):
    """This source could not deliver the file; the message says why (the next source is tried)."""


class _Cut(FetchFailed):
    """The connection broke mid-file: what was received is kept, and the rest is asked for."""


def timeout_seconds() -> float:
    """SCICODE_FETCH_TIMEOUT (seconds), else the default."""
    try:
        return float(os.environ.get('SCICODE_FETCH_TIMEOUT') or DEFAULT_TIMEOUT)
    except ValueError:
        raise DataError(f'SCICODE_FETCH_TIMEOUT={os.environ["SCICODE_FETCH_TIMEOUT"]!r} is not a number '
                        f'of seconds.\n  fix: e.g. SCICODE_FETCH_TIMEOUT=60') from None


class _Form(HTMLParser):
    """The first form of a page: its action and hidden inputs (Drive's confirmation page)."""

    def __init__(self):
        super().__init__()
        self.action, self.fields, self._open = None, {}, False

    def handle_starttag(self, tag, attrs) -> None:
        attrs = dict(attrs)
        if tag == 'form' and self.action is None:
            self.action, self._open = attrs.get('action'), True
        elif tag == 'input' and self._open and attrs.get('name'):
            self.fields[attrs['name']] = attrs.get('value') or ''

    def handle_endtag(self, tag) -> None:
        if tag == 'form':
            self._open = False


def confirmed_url(page, base) -> str | None:
    """The download a Drive confirmation page's form leads to, or None."""
    form = _Form()
    form.feed(page)
    if not form.action:
        return None
    return urljoin(base, form.action) + '?' + urlencode(form.fields)


def _open(url, start, timeout):
    headers = {'User-Agent': USER_AGENT}
    if start:
        headers['Range'] = f'bytes={start}-'
    try:
        return urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and start:
            return exc          # the partial file may already be whole; the caller decides
        raise FetchFailed(f'HTTP {exc.code} {exc.reason}') from None
    except urllib.error.URLError as exc:
        raise FetchFailed(f'cannot connect ({exc.reason})') from None
    except (TimeoutError, OSError) as exc:
        raise FetchFailed(f'no answer within {timeout:g} s ({exc})' if isinstance(exc, TimeoutError)
                          else f'cannot connect ({exc})') from None


def _total_from(response, start):
    """(the first byte sent, the whole file's size or None) from a response's headers."""
    if response.status == 206:
        match = re.match(r'bytes (\d+)-\d+/(\d+|\*)', response.headers.get('Content-Range', ''))
        if not match:
            raise FetchFailed('a partial answer without a usable Content-Range header')
        first, total = int(match.group(1)), match.group(2)
        return first, (int(total) if total != '*' else None)
    length = response.headers.get('Content-Length')
    return 0, (int(length) if length and length.isdigit() else None)


def _receive(url, partial, timeout, progress, pages_left=2):
    """One request: append what the server sends to `partial`. Returns the file's size if known."""
    start = partial.stat().st_size if partial.exists() else 0
    response = _open(url, start, timeout)
    with response:
        if response.status == 416:
            total = re.match(r'bytes \*/(\d+)', response.headers.get('Content-Range', ''))
            if total and int(total.group(1)) == start:
                return start            # nothing left to send: the partial file is whole
            partial.unlink()            # it is longer than the file: begin again
            return _receive(url, partial, timeout, progress, pages_left)
        if 'text/html' in response.headers.get('Content-Type', ''):
            page = response.read(1 << 20).decode('utf-8', 'replace')
            follow = confirmed_url(page, response.url) if pages_left else None
            if not follow:
                raise FetchFailed('the server sent a web page, not the file (a sign-in or quota page?)')
            return _receive(follow, partial, timeout, progress, pages_left - 1)
        first, total = _total_from(response, start)
        if first != start:
            # 200 (the server ignored the Range) or a range we did not ask for: begin again.
            start = 0
        progress.begin(total, start)
        got = start
        # read1: what has arrived (up to CHUNK), so that the partial file grows as bytes come in
        read = getattr(response, 'read1', response.read)
        try:
            with open(partial, 'ab' if start else 'wb') as out:
                while True:
                    block = read(CHUNK)
                    if not block:
                        break
                    out.write(block)
                    got += len(block)
                    progress.advance(got)
        except TimeoutError:
            raise _Cut(f'no data for {timeout:g} s after {got} bytes') from None
        except (OSError, http.client.HTTPException) as exc:      # connection reset, IncompleteRead ...
            raise _Cut(f'connection lost after {got} bytes ({exc})') from None
        if total is not None and got < total:
            raise _Cut(f'connection closed after {got} of {total} bytes')
        return total if total is not None else got


def download(url, partial, progress, timeout=None, resumes=RESUMES) -> int:
    """Fetch `url` into `partial` (resumed from what it holds). FetchFailed when this source cannot
    deliver; the partial file stays for the next try."""
    timeout = timeout_seconds() if timeout is None else timeout
    if urlsplit(url).scheme == 'file':
        return _copy_local(url, partial, progress)
    for attempt in range(resumes + 1):
        try:
            return _receive(url, partial, timeout, progress)
        except _Cut as exc:
            if attempt == resumes:
                raise FetchFailed(f'{exc}; gave up after {resumes} resumes') from None
            progress.note(f'{exc}; resuming')
            time.sleep(min(2 ** attempt, 10) * 0.1)


def _copy_local(url, partial, progress):
    """A file:// URL: a copy staged on a shared disk, taken as a download would be."""
    path = urllib.request.url2pathname(urlsplit(url).path)
    try:
        size = os.path.getsize(path)
        progress.begin(size, 0)
        with open(path, 'rb') as src, open(partial, 'wb') as out:
            while block := src.read(CHUNK):
                out.write(block)
                progress.advance(out.tell())
    except OSError as exc:
        raise FetchFailed(f'cannot read {path} ({exc.strerror or exc})') from None
    return size
