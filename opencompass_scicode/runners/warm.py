"""Local tasks forked from one warm process instead of each starting a new interpreter.

Every task process of a run imports much the same code (the task module, an API
SDK): 0.3-0.8 s of CPU per process, paid by each of the 24 tasks of a sweep of 8
models x 2 datasets while the steps being scored need those CPUs. A launcher
process imports what the specs name in `preload` once; for each task it forks a
child that takes the task's environment, log file and a session of its own, then
runs `python -m MODULE ARGS` as a new interpreter would (MODULE.__main__.main(ARGS)).

The launcher is started by LocalRunner for one launch (a stage), or, inside
`shared_launchers()` (run.py's whole run), kept for the stages that follow: their tasks
fork from it too, after it has imported what they add, instead of waiting at the end
of a stage for a new interpreter to import the package again. It talks over its
stdin/stdout: one JSON line per request in, one per event out. Its children are
its own, so it reaps them and reports each exit code (as Popen does: -N for a
signal). It ignores Ctrl-C (run.py stops the tasks), and ends when run.py closes
its stdin or dies: then its tasks, which watch their parent (utils/lifeline.py),
stop as they do when run.py dies under them.

Only what is safe to share across fork is preloaded: the package's own modules
and pure-Python SDKs, never a GPU runtime; a task still imports anything else
itself, after fork, with its own environment.
"""
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
from typing import Iterator

# The launcher's own module: not imported by this package, so that `python -m` runs it fresh.
MODULE = 'opencompass_scicode.runners.warm_launcher'


class Launcher:
    """run.py's side: start the launcher, fork tasks through it, learn how they ended."""

    def __init__(self, preload, env, logs):
        """logs: the tasks' log folder, shown in the launcher's command line (which its tasks
        share): `ps` tells whose they are."""
        self.env = dict(env)
        self.proc = subprocess.Popen([sys.executable, '-m', MODULE, '--logs', str(logs), *preload],
                                     stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=None, env=self.env)
        os.set_blocking(self.proc.stdout.fileno(), False)
        self.preloaded = list(preload)
        self._buffer = b''
        self._next = 0
        self.pids = {}           # request id -> pid, once forked
        self.ended = {}          # pid -> exit code
        self.refused = set()     # request ids it could not fork

    def fileno(self) -> int:
        """Readable when the launcher has news (for select)."""
        return self.proc.stdout.fileno()

    def serves(self, env) -> bool:
        """Still running, with the import path `env` asks for (PYTHONPATH is read once, at start-up)."""
        return self.proc.poll() is None and env.get('PYTHONPATH') == self.env.get('PYTHONPATH')

    def fits(self, command, env) -> bool:
        """Can this task be forked here: `python -m MODULE ...` with this interpreter, by a launcher
        that serves its environment."""
        return len(command) >= 3 and command[0] == sys.executable and command[1] == '-m' and self.serves(env)

    def preload(self, modules) -> None:
        """Import these too, before the tasks asked for after this call are forked."""
        missing = [m for m in modules if m not in self.preloaded]
        if missing:
            self.preloaded += missing
            self._send({'preload': missing})

    def _send(self, request):
        """False if the launcher is gone."""
        try:
            self.proc.stdin.write(json.dumps(request).encode() + b'\n')
            self.proc.stdin.flush()
        except OSError:
            return False
        return True

    def start(self, name, command, env, log_path) -> int | None:
        """Fork a task; its pid, or None if the launcher could not (it is gone, or the fork
        failed): then nothing was started."""
        self._next += 1
        request = {'id': self._next, 'name': name, 'module': command[2], 'args': list(command[3:]),
                   'env': dict(env), 'log': str(log_path)}
        if not self._send(request):
            return None
        while True:
            self.read()
            if self._next in self.pids or self._next in self.refused or self.proc.poll() is not None:
                return self.pids.get(self._next)
            select.select([self], [], [], 1.0)

    def read(self) -> None:
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
            elif 'exit' in event:
                self.ended[self.pids[event['id']]] = event['exit']
            else:
                self.refused.add(event['id'])

    def returncode(self, pid) -> int | None:
        """None while the task runs; its exit code once it has ended (-N: killed by signal N)."""
        self.read()
        if pid in self.ended:
            return self.ended[pid]
        if self.proc.poll() is not None:
            # the launcher died under its task, which then stops by itself (its parent is gone)
            return self.ended.setdefault(pid, -signal.SIGKILL)
        return None

    def close(self, grace_s=10.0) -> None:
        """Let the launcher go: it leaves at the end of its stdin (killed if it has not after
        `grace_s`: it forks tasks, it never waits for them)."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


_shared = None      # the launchers of the run under way, inside shared_launchers()


@contextlib.contextmanager
def shared_launchers() -> Iterator[None]:
    """Within this block, launches keep their launcher for the launches that follow (see the
    module's docstring); all are closed when it ends."""
    global _shared
    outer, _shared = _shared, []
    try:
        yield
    finally:
        launchers, _shared = _shared, outer
        for launcher in launchers:
            launcher.close()


def launcher_for(preload, env, logs) -> tuple['Launcher', bool]:
    """(a launcher that has imported `preload`, whether the caller closes it after its launch).
    Inside shared_launchers(): one kept from an earlier launch with the same import path, if it
    still runs, else a new one kept for later; outside: a new one of the caller's."""
    if _shared is None:
        return Launcher(preload, env, logs), True
    for launcher in _shared:
        if launcher.serves(env):
            launcher.preload(preload)
            return launcher, False
    launcher = Launcher(preload, env, logs)
    _shared.append(launcher)
    return launcher, False
