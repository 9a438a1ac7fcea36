"""How far a download is: a progress bar (bytes, rate, time left) on a terminal, plain lines
in a log (every 10 % or 30 s), both on stderr."""
import sys
import time

from rich.console import Console
from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn,
                           TransferSpeedColumn)

LINE_EVERY_S = 30.0
LINE_EVERY_FRACTION = 0.1


def size_text(n) -> str:
    """1049345865 -> '1.05 GB' (decimal units, as download tools show them)."""
    if n is None:
        return 'size unknown'
    if n < 1000:
        return f'{n} bytes'
    for unit in ('KB', 'MB', 'GB', 'TB'):
        n /= 1000
        if n < 1000 or unit == 'TB':
            return f'{n:.2f} {unit}'


def _duration(seconds):
    seconds = int(seconds)
    return f'{seconds // 60}m{seconds % 60:02d}s' if seconds >= 60 else f'{seconds}s'


class Meter:
    """`begin(total, start)` once per request, `advance(bytes so far)`, `note(text)`, `close()`."""

    def __init__(self, label, stream=None, tty=None):
        self.label = label
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self._bar = self._task = None
        self.total = None

    def begin(self, total, start) -> None:
        """A download begins: `total` bytes (None: unknown), `start` of them already here."""
        self.total, self._t0, self._b0 = total, time.monotonic(), start
        self._last_t, self._last_fraction = self._t0, (start / total if total else 0.0)
        if self.tty:
            if self._bar is None:
                self._bar = Progress(TextColumn('{task.description}'), BarColumn(), DownloadColumn(),
                                     TransferSpeedColumn(), TimeRemainingColumn(),
                                     console=Console(file=self.stream), transient=False)
                self._bar.start()
                self._task = self._bar.add_task(self.label, total=total, completed=start)
            else:
                self._bar.update(self._task, total=total, completed=start)
        else:
            where = f' from byte {start:,}' if start else ''
            self._line(f'{self.label}: downloading{where}, {size_text(total)} in all')

    def advance(self, got) -> None:
        """`got` bytes more arrived."""
        if self._bar is not None:
            self._bar.update(self._task, completed=got)
            return
        now = time.monotonic()
        fraction = got / self.total if self.total else 0.0
        if now - self._last_t < LINE_EVERY_S and fraction - self._last_fraction < LINE_EVERY_FRACTION:
            return
        self._last_t, self._last_fraction = now, fraction
        rate = (got - self._b0) / max(now - self._t0, 1e-6)
        left = f', {_duration((self.total - got) / rate)} left' if self.total and rate > 0 else ''
        share = f' of {size_text(self.total)} ({100 * fraction:.0f}%)' if self.total else ''
        self._line(f'{self.label}: {size_text(got)}{share}, {size_text(int(rate))}/s{left}')

    def note(self, text) -> None:
        """Say `text` on its own line, under the progress."""
        if self._bar is not None:
            self._bar.console.print(f'{self.label}: {text}', markup=False, highlight=False)
        else:
            self._line(f'{self.label}: {text}')

    def close(self) -> None:
        """The download has ended: finish the progress line."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def _line(self, text):
        print(f'[targets] {text}', file=self.stream, flush=True)
