"""Tracebacks of a step as its reader needs them: the model's and the tests' lines with their
source text, and no frames of the harness that ran them.

The program and the tests are compiled from strings (`program.py`, `test_case_3`), so Python
alone would print their line numbers without the code; their texts are lent to linecache while
a traceback is formatted. The lines are those Python reports, so a traceback reads as the
official program's would, frame for frame, minus ours.
"""
import linecache
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Frames in these files are the harness's own, never the step's.
HARNESS_FILES = frozenset(str(p) for p in HERE.glob('*.py'))
TRACEBACK_CAP = 12000
LINE_CAP = 300


def _without_harness(te):
    te.stack = traceback.StackSummary.from_list([f for f in te.stack if f.filename not in HARNESS_FILES])
    for linked in (te.__cause__, te.__context__):
        if linked is not None and linked is not te:
            _without_harness(linked)
    return te


class Sources:
    """The texts compiled from strings, by the file name they were compiled under."""

    def __init__(self):
        self.texts = {}

    def add(self, filename, text):
        self.texts[filename] = text

    def line(self, filename, number):
        lines = self.texts.get(filename, '').splitlines()
        return lines[number - 1].strip()[:LINE_CAP] if 0 < number <= len(lines) else ''

    def format(self, exc):
        """The traceback of `exc`, cleaned, as text (capped: head and tail)."""
        lent = {}
        for name, text in self.texts.items():
            lent[name] = linecache.cache.get(name)
            # mtime None: linecache.checkcache leaves the entry alone (there is no such file).
            linecache.cache[name] = (len(text), None, text.splitlines(True), name)
        try:
            te = _without_harness(traceback.TracebackException(type(exc), exc, exc.__traceback__,
                                                               compact=True))
            text = ''.join(te.format())
        finally:
            for name, before in lent.items():
                if before is None:
                    linecache.cache.pop(name, None)
                else:
                    linecache.cache[name] = before
        if len(text) > TRACEBACK_CAP:
            half = TRACEBACK_CAP // 2
            text = text[:half] + f'\n...[{len(text) - 2 * half} characters cut]...\n' + text[-half:]
        return text


def frames(exc):
    """(filename, line number, function name) of each frame of `exc`'s traceback, outermost first."""
    out = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        out.append((code.co_filename, tb.tb_lineno, code.co_name, tb.tb_frame))
        tb = tb.tb_next
    return out


def innermost(exc, filename):
    """(line number, function name, frame) of the innermost frame in `filename`, or None."""
    found = None
    for name, line, function, frame in frames(exc):
        if name == filename:
            found = (line, function, frame)
    if found is None and isinstance(exc, SyntaxError) and exc.filename == filename and exc.lineno:
        found = (exc.lineno, None, None)
    return found
