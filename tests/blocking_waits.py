"""The blocking waits of a Python source, found by reading it (tests/unit/test_waits.py).

A wait is a call that may block until another thread or process acts: a condition, event,
queue, join or lock; a socket, pipe or file-lock; a child process. It is bounded when the call
itself carries a limit (a timeout argument that is not None, WNOHANG, LOCK_NB, a select with a
timeout); every other one is listed, with where it is, for a reviewer to say why it ends anyway.
"""
import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class Wait:
    path: str          # relative to the package's parent
    function: str      # the enclosing function or method, dotted ('' at module level)
    call: str          # the call as written (ast.unparse)
    line: int

    @property
    def key(self):
        return self.path, self.function, self.call


# method name -> index of its timeout among positional arguments (None: it takes no positional limit)
_METHODS = {'wait': 0, 'join': 0, 'get': 1, 'acquire': 1, 'result': 0, 'communicate': 1, 'accept': None,
            'recv': None, 'recv_into': None, 'recvmsg': None, 'recv_fds': None, 'readline': None}
_FUNCTIONS = {'exactly', 'receive', 'waitpid', 'flock', 'select', 'as_completed', 'run', 'read', 'load'}


def _name(func):
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ''


def _kw(node, name):
    return next((k.value for k in node.keywords if k.arg == name), None)


def _is_none(value):
    return isinstance(value, ast.Constant) and value.value is None


def _bounded_by_timeout(node, position):
    given = _kw(node, 'timeout')
    if given is None and position is not None and len(node.args) > position:
        given = node.args[position]
    return given is not None and not _is_none(given)


def unbounded(node):
    """Whether the call `node` is a blocking wait without a limit of its own."""
    name, func = _name(node.func), node.func
    receiver = func.value if isinstance(func, ast.Attribute) else None
    if name in _METHODS:
        if isinstance(receiver, ast.Constant):          # ', '.join(...) and the like
            return False
        if name == 'join' and node.args:                # str.join(iterable), or join(timeout)
            return False
        if name == 'get' and (node.args or node.keywords) and _kw(node, 'block') is None \
                and _kw(node, 'timeout') is None:
            return False                                # dict.get(key[, default])
        if name in ('acquire', 'get') and isinstance(_kw(node, 'block') or _kw(node, 'blocking'), ast.Constant) \
                and not (_kw(node, 'block') or _kw(node, 'blocking')).value:
            return False
        if name == 'readline' and node.args:            # readline(limit) of a file read whole
            return False
        return not _bounded_by_timeout(node, _METHODS[name])
    if name not in _FUNCTIONS:
        return False
    source = ast.unparse(node)
    if name == 'waitpid':
        return 'WNOHANG' not in source
    if name == 'flock':
        return 'LOCK_NB' not in source and 'LOCK_UN' not in source
    if name == 'select':
        return isinstance(receiver, ast.Name) and receiver.id == 'select' and len(node.args) < 4 \
            and _kw(node, 'timeout') is None
    if name == 'as_completed':
        return not _bounded_by_timeout(node, 1)
    if name == 'run':                                   # subprocess.run without a timeout
        return isinstance(receiver, ast.Name) and receiver.id == 'subprocess' and _kw(node, 'timeout') is None
    if name == 'read':                                  # os.read of a pipe or socket
        return isinstance(receiver, ast.Name) and receiver.id == 'os'
    if name == 'load':                                  # pickle.load of a pipe
        return isinstance(receiver, ast.Name) and receiver.id == 'pickle'
    return receiver is None or (isinstance(receiver, ast.Name) and receiver.id == 'wire')   # exactly/receive


def waits(source, path):
    """Every unbounded blocking wait in `source` (the text of the file at `path`)."""
    found = []

    def visit(node, where):
        for child in ast.iter_child_nodes(node):
            inner = where
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = f'{where}.{child.name}' if where else child.name
            if isinstance(child, ast.Call) and unbounded(child):
                found.append(Wait(path, where, ast.unparse(child), child.lineno))
            visit(child, inner)
    visit(ast.parse(source), '')
    return found
