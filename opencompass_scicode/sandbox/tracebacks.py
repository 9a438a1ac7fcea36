"""Tracebacks of a step as its reader needs them: the model's and the tests' lines with their
source text, and no frames of the harness that ran them.

The program and the tests are compiled from strings (`program.py`, `test_case_3`), so Python
alone would print their line numbers without the code; their texts are lent to linecache while
a traceback is formatted. The lines are those Python reports, so a traceback reads as the
official program's would, frame for frame, minus ours. A step stopped for its time limit has
no traceback: `hung_stack` reads the stack the fault handler wrote for it instead.
"""
import linecache
import re
import traceback
from pathlib import Path
from types import FrameType
from typing import Any

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

    def add(self, filename, text) -> None:
        """Remember `text` as the source compiled under `filename`."""
        self.texts[filename] = text

    def line(self, filename, number) -> str:
        """Line `number` of `filename`'s source, stripped and cut; '' where it is not known."""
        lines = self.texts.get(filename, '').splitlines()
        return lines[number - 1].strip()[:LINE_CAP] if 0 < number <= len(lines) else ''

    def format(self, exc) -> str:
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


def frames(exc) -> list[tuple[str, int, str, FrameType]]:
    """(filename, line number, function name) of each frame of `exc`'s traceback, outermost first."""
    out = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        out.append((code.co_filename, tb.tb_lineno, code.co_name, tb.tb_frame))
        tb = tb.tb_next
    return out


def innermost(exc, filename) -> tuple[int, str | None, FrameType | None] | None:
    """(line number, function name, frame) of the innermost frame in `filename`, or None."""
    found = None
    for name, line, function, frame in frames(exc):
        if name == filename:
            found = (line, function, frame)
    if found is None and isinstance(exc, SyntaxError) and exc.filename == filename and exc.lineno:
        found = (exc.lineno, None, None)
    return found


# A frame line of the fault handler's stack: `  File "program.py", line 5 in f`.
_FRAME = re.compile(r'^  File "(?P<file>[^"\n]{1,300})", line (?P<line>\d{1,9}) in '
                    r'(?P<function><[a-z]{1,20}>|[A-Za-z_]\w{0,199})$')
_HEADER = re.compile(r'^(Stack|Current thread 0x[0-9a-f]+) \(most recent call first\):$')
OWN_FILE = re.compile(r'^(program\.py|test_case_\d{1,6})$')
HUNG_FRAMES_CAP = 24


def hung_stack(text, sources) -> dict[str, Any] | None:
    """Where a step that ran out of time was: the fault handler's `text` (worker_watch.py), cut
    to the step's own frames (the model's `program.py` and the test it was in), outermost
    first, each with its source line from `sources` ({file name: text compiled under it}), or
    None when the text holds none of them.

    {'frames': [{'file', 'line', 'function', 'code'}], 'inside': the innermost frame when it is
    not the step's own (a library the model's code called: `numpy/linalg/_linalg.py, line 400,
    in solve`), 'frames_left_out': own frames beyond HUNG_FRAMES_CAP (deep recursion)}. The text
    comes from the step's process: only lines of the fault handler's form are read, and the
    code shown is ours, never the text's."""
    frames, reading = [], False
    for line in (text or '').splitlines():
        if _HEADER.match(line):       # the last stack written is the fault handler's
            frames, reading = [], True
            continue
        match = _FRAME.match(line) if reading else None
        if match:
            frames.append((match['file'], int(match['line']), match['function']))
        else:
            reading = False
    frames.reverse()                     # the fault handler prints the innermost frame first
    own = [f for f in frames if OWN_FILE.match(f[0])]
    if not own:
        return None
    lines = {name: text.splitlines() for name, text in sources.items()}

    def code(name, number):
        body = lines.get(name) or []
        return body[number - 1].strip()[:LINE_CAP] if 0 < number <= len(body) else ''
    out = {'frames': [{'file': name, 'line': number, 'function': function, 'code': code(name, number)}
                      for name, number, function in own[-HUNG_FRAMES_CAP:]]}
    if len(own) > HUNG_FRAMES_CAP:
        out['frames_left_out'] = len(own) - HUNG_FRAMES_CAP
    innermost = frames[-1]
    if not OWN_FILE.match(innermost[0]) and str(HERE) not in innermost[0]:
        out['inside'] = f'{_library_path(innermost[0])}, line {innermost[1]}, in {innermost[2]}'
    return out


def _library_path(path):
    """A library file's path from its package on (`numpy/linalg/_linalg.py`), as its reader knows it."""
    for marker in ('site-packages/', 'dist-packages/', 'lib/python'):
        if marker in path:
            rest = path.split(marker, 1)[1]
            return rest.split('/', 1)[1] if marker == 'lib/python' and '/' in rest else rest
    return path
