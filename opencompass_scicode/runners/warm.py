"""Local tasks forked from one warm process instead of each starting a new interpreter.

Every task process of a run imports much the same code (the task module, an API
SDK): 0.3-0.8 s of CPU per process, paid by each of the 24 tasks of a sweep of 8
models x 2 datasets while the steps being scored need those CPUs. A launcher
process imports what the specs name in `preload` once; for each task it forks a
child that takes the task's environment, log file and a session of its own, then
runs `python -m MODULE ARGS` as a new interpreter would (MODULE.__main__.main(ARGS)).

The launcher is started by LocalRunner for one launch (a stage) and talks over its
stdin/stdout: one JSON line per request in, one per event out. Its children are
its own, so it reaps them and reports each exit code (as Popen does: -N for a
signal). It ignores Ctrl-C (run.py stops the tasks), and ends when run.py closes
its stdin or dies: then its tasks, which watch their parent (utils/lifeline.py),
stop as they do when run.py dies under them.

Only what is safe to share across fork is preloaded: the package's own modules
and pure-Python SDKs, never a GPU runtime; a task still imports anything else
itself, after fork, with its own environment.
"""
import importlib
import json
import os
import select
import signal
import subprocess
import sys
import traceback

from ..utils.lifeline import PARENT_ENV

MODULE = __name__


class Launcher:
    """run.py's side: start the launcher, fork tasks through it, learn how they ended."""

    def __init__(self, preload, env):
        self.env = dict(env)
        self.proc = subprocess.Popen([sys.executable, '-m', MODULE, *preload], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=None, env=self.env)
        os.set_blocking(self.proc.stdout.fileno(), False)
        self._buffer = b''
        self._next = 0
        self.pids = {}           # request id -> pid, once forked
        self.ended = {}          # request id -> exit code (or an error text if it never started)

    def fileno(self):
        """Readable when the launcher has news (for select)."""
        return self.proc.stdout.fileno()

    def fits(self, command, env):
        """Can this task be forked here: `python -m MODULE ...` with this interpreter, and the same
        import path the launcher started with (PYTHONPATH is read once, at start-up)."""
        return (len(command) >= 3 and command[0] == sys.executable and command[1] == '-m'
                and env.get('PYTHONPATH') == self.env.get('PYTHONPATH') and self.proc.poll() is None)

    def start(self, command, env, log_path):
        """Ask for a fork; return its request id (its pid comes with `wait_started`)."""
        self._next += 1
        request = {'id': self._next, 'module': command[2], 'args': list(command[3:]), 'env': dict(env),
                   'log': str(log_path)}
        self.proc.stdin.write(json.dumps(request).encode() + b'\n')
        self.proc.stdin.flush()
        return self._next

    def wait_started(self, request, timeout=30.0):
        """The pid of request's task; None if the launcher could not fork it."""
        while request not in self.pids and request not in self.ended:
            if self.proc.poll() is not None:
                return None
            select.select([self], [], [], timeout)
            self.read()
        return self.pids.get(request)

    def read(self):
        """Take in what the launcher said so far."""
        try:
            while chunk := os.read(self.fileno(), 65536):
                self._buffer += chunk
        except BlockingIOError:
            pass
        *lines, self._buffer = self._buffer.split(b'\n')
        for line in lines:
            event = json.loads(line)
            if 'pid' in event:
                self.pids[event['id']] = event['pid']
            else:
                self.ended[event['id']] = event['exit']

    def returncode(self, request):
        """None while the task runs; its exit code once it has ended (-N: killed by signal N)."""
        self.read()
        if request in self.ended:
            return self.ended[request]
        if self.proc.poll() is not None:
            # the launcher died under its task, which then stops by itself (its parent is gone)
            return self.ended.setdefault(request, -signal.SIGKILL)
        return None

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        self.proc.wait()


# ------------------------------------------------------------ the launcher process
def _child(request):
    """In the forked child: become the task, as `python -m MODULE ARGS` would start it."""
    try:
        os.setsid()                 # a session of its own, as LocalRunner gives every task
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


def _say(event):
    os.write(1, json.dumps(event).encode() + b'\n')


def _status(wait_status):
    return os.waitstatus_to_exitcode(wait_status)


def serve(preload):
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # Ctrl-C is run.py's to handle
    for name in preload:
        try:
            importlib.import_module(name)
        except Exception:           # the task imports it itself, and reports what is wrong
            pass
    wake_r, wake_w = os.pipe()
    for fd in (wake_r, wake_w):
        os.set_blocking(fd, False)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    children = {}               # pid -> request id
    buffer = b''
    open_input = True
    while open_input or children:
        ready, _, _ = select.select([0, wake_r] if open_input else [wake_r], [], [], 1.0)
        if wake_r in ready:
            try:
                while os.read(wake_r, 512):
                    pass
            except BlockingIOError:
                pass
        while children:
            pid, wait_status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            if pid in children:
                _say({'id': children.pop(pid), 'exit': _status(wait_status)})
        if 0 in ready:
            chunk = os.read(0, 65536)
            if not chunk:
                # run.py is gone or done: leave; running tasks see their parent go and stop
                return
            buffer += chunk
            *lines, buffer = buffer.split(b'\n')
            for line in lines:
                request = json.loads(line)
                sys.stdout.flush()
                sys.stderr.flush()
                try:
                    pid = os.fork()
                except OSError as exc:
                    _say({'id': request['id'], 'exit': f'fork failed: {exc}'})
                    continue
                if pid == 0:
                    _child(request)
                children[pid] = request['id']
                _say({'id': request['id'], 'pid': pid})


if __name__ == '__main__':
    serve(sys.argv[1:])
    sys.stdout.flush()
    os._exit(0)
