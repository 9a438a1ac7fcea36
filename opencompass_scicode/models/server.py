"""A model server started for one inference task, and stopped with it.

`OpenAIChatModel(server=dict(command=[...'{port}'...]))` names a launcher
(`vllm serve`, `python -m sglang.launch_server`, `llama-server`, ...) instead
of a `base_url`. The inference task runs it inside `ModelServer`: a free
loopback port takes the place of `{port}` in every argument, the process
starts in a session of its own (so a terminal's Ctrl-C reaches run.py alone,
and the whole group can be stopped at once) with its output in a file beside
the task's log, and the task waits until `GET /v1/models` answers 200. A server
that dies while the task asks it is started again on the same port, once per
task (`restarts`): a preempted worker or a crash in a long run costs a restart,
not the run; dying again, it is gone for good, and `failure` says so with its
log, which the model reads to stop asking at once instead of retrying for
minutes against a closed port. Its
whole process group is stopped on every way out of the `with` block: SIGTERM,
then SIGKILL after `stop_grace` seconds; and if the task dies outright, by the
group's leader, server_guard.py. Planning never builds one: only the
inference task starts servers.
"""
import http.client
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from datetime import datetime
from pathlib import Path
from typing import Optional

from ..errors import ConfigError, UserFacingError, did_you_mean
from ..utils.procs import kill, process_table
from ..utils.secrets import resolve_server_secrets

PORT = '{port}'
GUARD = Path(__file__).with_name('server_guard.py')
OPTIONS = ('command', 'ready_timeout', 'env')
DEFAULT_READY_TIMEOUT = 600.0
DEFAULT_RESTARTS = 1
TAIL_LINES = 20


class ModelServerError(UserFacingError):
    """The model server stopped, or did not become ready, before the first request; or it died
    during the run more often than it may be restarted."""


def _how_it_ended(code):
    return f'was killed by signal {-code}' if code < 0 else f'exited with code {code}'


def check_server(server: dict) -> dict:
    """`server=` of a model entry, checked and with its defaults: dict(command, ready_timeout, env).
    Raises ConfigError naming the option to fix."""
    example = "e.g. server=dict(command=['vllm', 'serve', 'MODEL', '--port', '{port}'])"
    if not isinstance(server, dict):
        raise ConfigError(f'must be a dict, got {type(server).__name__} {server!r}', key='server',
                          fix=example)
    for name in server:
        if name not in OPTIONS:
            hint = did_you_mean(name, OPTIONS)
            raise ConfigError(f'{name!r} is not a server option', key='server',
                              fix=f'{hint}server options: {", ".join(OPTIONS)}')
    command = server.get('command')
    if not (isinstance(command, (list, tuple)) and command and all(isinstance(a, str) for a in command)):
        raise ConfigError(f'server command must be a non-empty list of strings, got {command!r}',
                          key='server', fix=example)
    if not any(PORT in arg for arg in command):
        raise ConfigError(f"server command has no '{{port}}': {list(command)!r}", key='server',
                          fix="put '{port}' where the launcher takes its port (e.g. '--port', '{port}'); "
                              "the task fills in a free port")
    ready_timeout = server.get('ready_timeout', DEFAULT_READY_TIMEOUT)
    if isinstance(ready_timeout, bool) or not isinstance(ready_timeout, (int, float)) or ready_timeout <= 0:
        raise ConfigError(f'server ready_timeout must be a positive number of seconds, got {ready_timeout!r}',
                          key='server', fix='e.g. ready_timeout=600 (the default)')
    env = server.get('env') or {}
    if not (isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())):
        raise ConfigError(f'server env must be a dict of strings, got {env!r}', key='server',
                          fix="e.g. env={'VLLM_LOGGING_LEVEL': 'INFO'} (numbers as strings)")
    return {'command': list(command), 'ready_timeout': ready_timeout, 'env': dict(env)}


def free_port(host: str = '127.0.0.1') -> int:
    """A port nobody listens on now on `host` (the server binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def live_members(pgid: int) -> list[int]:
    """Pids of the live (not zombie) processes of process group `pgid`.

    Read from /proc: a zombie still counts for kill(-pgid, 0), and orphans whose
    new parent never reaps them stay zombies."""
    return [pid for pid, proc in process_table().items() if proc.group == pgid and proc.live]


def _wait_gone(pgid, deadline):
    while live_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.02)


class ModelServer:
    """`with ModelServer(command, ready_timeout, env, log_path) as server:` ... `server.base_url`.

    command: argv with '{port}' in one or more arguments (plain replacement, so other braces
        stay as they are); env: added to this process's environment; log_path: the server's
        stdout and stderr (appended, each start under a header line); api_key: sent with the
        readiness probe (a server started with a key refuses the probe without it);
    restarts: how many times a server that dies after it was ready is started again (same port);
    log: where progress lines go (the task log); stop_grace: seconds between SIGTERM and
        SIGKILL (below the 5 s in which the local runner expects a stopped task to exit).
    """

    def __init__(self, command, ready_timeout=DEFAULT_READY_TIMEOUT, env=None, log_path=None, api_key=None,
                 log=None, host='127.0.0.1', stop_grace=3.0, poll_s=0.25, restarts=DEFAULT_RESTARTS):
        self.command = list(command)
        self.ready_timeout = ready_timeout
        self.env = dict(env or {})
        self.log_path = Path(log_path) if log_path else None
        self.api_key = api_key
        self.log = log or (lambda msg: None)
        self.host = host
        self.stop_grace = stop_grace
        self.poll_s = poll_s
        self.restarts = restarts
        self.port = None
        self.proc = None
        self._log_start = 0
        self.failure = None                 # why the server is gone for good (None while it serves)
        self._stopping = threading.Event()
        self._lock = threading.Lock()       # start() in the watcher against stop() in the task
        self._watcher = None

    @property
    def base_url(self) -> str:
        """The API root of the started server, on its loopback port."""
        return f'http://{self.host}:{self.port}/v1'

    @property
    def argv(self) -> list[str]:
        """The command with its port, as logs and messages show it: secrets stay references
        (`{env:VAR}`, utils/secrets.py); only the started process gets their values."""
        return [arg.replace(PORT, str(self.port)) for arg in self.command]

    def __enter__(self):
        try:
            self.start()
            self.wait_ready()
        except BaseException:          # failed, timed out or interrupted: nothing may stay behind
            self.stop()
            raise
        self._watcher = threading.Thread(target=self._watch, name='model-server-watch', daemon=True)
        self._watcher.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        self.stop()
        if self.failure and exc_type is None:      # the requests ended without noticing: say why here
            raise ModelServerError(self.failure)

    # ------------------------------------------------------------ watch
    def _watch(self):
        """Start the server again when it dies, `restarts` times; then record the failure."""
        left = self.restarts
        while not self._stopping.wait(self.poll_s):
            proc = self.proc
            code = proc.poll() if proc else None
            if code is None:
                continue
            how = _how_it_ended(code)
            if left <= 0:
                self.failure = self._failure(
                    f'{how} during the run, after {self.restarts} restart(s) (restarts={self.restarts}); '
                    f'no more requests are sent to it')
                self.log(f'model server: {how} again; not restarted (output in {self.log_path})')
                return
            left -= 1
            self.log(f'model server: {how} during the run; starting it again on port {self.port} '
                     f'(restart {self.restarts - left} of {self.restarts}, output in {self.log_path})')
            try:
                with self._lock:
                    if self._stopping.is_set():
                        return
                    self.start(port=self.port)
                self.wait_ready()
            except Exception as exc:     # noqa: BLE001 - the requests read it (server_failure), not a thread's end
                said = str(exc) if isinstance(exc, ModelServerError) else f'{type(exc).__name__}: {exc}'
                self.failure = f'{said} (while restarting it after it {how})'
                self.log(f'model server: the restart failed: {self.failure}')
                return

    # ------------------------------------------------------------ start
    def start(self, port: Optional[int] = None) -> None:
        """Start the server, on `port` (a restart keeps the one the model was given) or a free one."""
        self.port = port or free_port(self.host)
        argv = self.argv
        out = subprocess.DEVNULL
        if self.log_path:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            out = open(self.log_path, 'ab')
            out.write(f'--- {datetime.now().isoformat(timespec="seconds")} {shlex.join(argv)}\n'.encode())
            out.flush()
            self._log_start = out.tell()
        try:
            # The session's leader is a guard that stops the group if this process dies outright.
            guard = [sys.executable, '-I', '-S', str(GUARD), str(os.getpid()), str(self.stop_grace)]
            real_argv, real_env = resolve_server_secrets(argv, self.env)
            self.proc = subprocess.Popen(guard + real_argv, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, env=dict(os.environ, **real_env),
                                         start_new_session=True)
        except OSError as exc:
            raise ModelServerError(f'model server {shlex.join(argv)} could not start: {exc}') from None
        finally:
            if out is not subprocess.DEVNULL:
                out.close()
        self.log(f'model server: started {shlex.join(argv)} (pid {self.proc.pid}), '
                 f'output in {self.log_path or "nowhere"}')

    def wait_ready(self) -> None:
        """Return once GET /v1/models answers 200; ModelServerError if the server exits, is stopped
        or time runs out."""
        started = time.monotonic()
        deadline = started + self.ready_timeout
        proc = self.proc
        while True:
            if self._stopping.is_set():
                raise ModelServerError(f'model server {shlex.join(self.argv)}: stopped while starting')
            code = proc.poll()
            if code is not None:
                raise ModelServerError(self._failure(f'{_how_it_ended(code)} before it was ready'))
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ModelServerError(self._failure(
                    f'was not ready within ready_timeout={self.ready_timeout:g} s (GET {self.base_url}/models '
                    f'never answered 200); it was stopped'))
            if self._answers(timeout=min(5.0, remaining)):
                self.log(f'model server: ready at {self.base_url} after {time.monotonic() - started:.1f} s')
                return
            time.sleep(min(self.poll_s, max(0.0, deadline - time.monotonic())))

    def _answers(self, timeout):
        request = urllib.request.Request(f'{self.base_url}/models')
        if self.api_key:
            request.add_header('Authorization', f'Bearer {self.api_key}')
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))    # loopback: never a proxy
        try:
            with opener.open(request, timeout=timeout) as response:
                return response.status == 200
        except (OSError, http.client.HTTPException, ValueError):     # URLError is an OSError
            return False

    def _failure(self, what):
        tail = self.output_tail()
        if not tail:
            return f'model server {shlex.join(self.argv)} {what}. It wrote nothing (output: {self.log_path}).'
        shown = '\n'.join('    ' + line for line in tail)
        last = 'line' if len(tail) == 1 else f'{len(tail)} lines'
        return f'model server {shlex.join(self.argv)} {what}. The last {last} of its output ({self.log_path}):\n{shown}'

    def output_tail(self, lines: int = TAIL_LINES, max_bytes: int = 65536) -> list[str]:
        """The last `lines` lines this start of the server wrote (read from at most its last
        `max_bytes`); none without a log file."""
        if not self.log_path or not self.log_path.exists():
            return []
        with open(self.log_path, 'rb') as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(self._log_start, size - max_bytes))
            text = fh.read().decode(errors='replace')
        return text.splitlines()[-lines:]

    # ------------------------------------------------------------ stop
    def stop(self) -> None:
        """SIGTERM to the server's process group, SIGKILL to what is left after stop_grace seconds.

        Safe to call twice; an interrupt while waiting goes straight to SIGKILL."""
        self._stopping.set()            # the watcher starts nothing after this
        with self._lock:
            proc, self.proc = self.proc, None
        if self._watcher is not None and self._watcher is not threading.current_thread():
            self._watcher.join(timeout=self.stop_grace + 5)
        if proc is None:
            return
        pgid = proc.pid                 # a session leader: its pid is its group's id
        if not self._signal(pgid, signal.SIGTERM):
            proc.wait()
            return
        try:
            deadline = time.monotonic() + self.stop_grace
            try:
                proc.wait(timeout=self.stop_grace)
            except subprocess.TimeoutExpired:
                pass
            _wait_gone(pgid, deadline)
        finally:
            killed = bool(live_members(pgid)) and self._signal(pgid, signal.SIGKILL)
            proc.wait()
            if killed:
                # The leader (the guard) is reaped; the rest of the group dies of the same SIGKILL.
                _wait_gone(pgid, time.monotonic() + 5)
            self.log(f'model server: stopped (pid {pgid}; {"SIGTERM, then SIGKILL" if killed else "SIGTERM"})')

    @staticmethod
    def _signal(pgid, sig):
        return kill(pgid, sig, group=True, denied_ok=True) == 1
