"""The warm launcher's process (runners/warm.py is run.py's side, and says why it exists).

`python -m opencompass_scicode.runners.warm_launcher --logs DIR MODULE...` imports the
MODULEs, then reads one JSON request per line on stdin and forks a task for each ({"preload":
[MODULE, ...]} instead imports more, for the tasks of a later stage); it writes one JSON
line per event on stdout: {"id", "pid"} once forked, {"id", "exit"} once ended, {"id",
"refused"} if it could not fork. It imports nothing of the package but
what the fork needs: nothing else runs here.
"""
import ctypes
import importlib
import json
import os
import select
import signal
import sys
import traceback

from ..utils.lifeline import PARENT_ENV
from ..utils.procs import drain, wake_on_child_exit

PR_SET_NAME = 15


def _child(request):
    """In the forked child: become the task, as `python -m MODULE ARGS` would start it."""
    try:
        os.setsid()                 # a session of its own, as LocalRunner gives every task
        _name_process(request['name'])
        for sig in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.set_wakeup_fd(-1)
        log = os.open(request['log'], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.closerange(3, os.sysconf('SC_OPEN_MAX'))
        os.environ.clear()
        os.environ.update(request['env'])
        os.environ[PARENT_ENV] = str(os.getppid())
        module = request['module']
        sys.argv = [module, *request['args']]
        code = importlib.import_module(module + '.__main__').main(request['args'])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:          # noqa: B036 - whatever happens, the child never returns to the loop
        traceback.print_exc()
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code if isinstance(code, int) else 1)


def _name_process(name):
    """The name top and `ps -o comm` show (15 bytes): the command line is the launcher's."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_NAME, ctypes.c_char_p(name.replace('/', ':').encode()[:15]), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _say(event):
    os.write(1, json.dumps(event).encode() + b'\n')


def _import(modules):
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:           # the task imports it itself, and reports what is wrong
            pass


def serve(preload) -> None:
    """Run the warm launcher: import `preload`, then fork a task per request read on stdin until it
    closes."""
    try:
        _serve(preload)
    except BrokenPipeError:
        pass    # run.py is gone (killed, its events pipe closed): leave as at the end of stdin


def _serve(preload):
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # Ctrl-C is run.py's to handle
    _import(preload)
    children = {}               # pid -> request id
    buffer = b''
    with wake_on_child_exit() as wake:
        while True:
            ready, _, _ = select.select([0, wake], [], [], 1.0)
            if wake in ready:
                drain(wake)
            _report_ended(children)
            if 0 in ready:
                chunk = os.read(0, 65536)
                if not chunk:
                    # run.py is gone or done: leave; running tasks see their parent go and stop
                    return
                *lines, buffer = (buffer + chunk).split(b'\n')
                for request in map(json.loads, lines):
                    if 'preload' in request:
                        _import(request['preload'])
                    else:
                        _fork(request, children)


def _report_ended(children):
    """Reap the tasks that have ended and say how each did."""
    while children:
        pid, wait_status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            return
        if pid in children:
            _say({'id': children.pop(pid), 'exit': os.waitstatus_to_exitcode(wait_status)})


def _fork(request, children):
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        pid = os.fork()
    except OSError as exc:
        _say({'id': request['id'], 'refused': f'fork failed: {exc}'})
        return
    if pid == 0:
        _child(request)             # never returns
    children[pid] = request['id']
    _say({'id': request['id'], 'pid': pid})

if __name__ == '__main__':
    serve(sys.argv[3:])            # after --logs DIR
    os._exit(0)
