"""The leader of a model server's process group: stops the group when the task that started it dies.

`python -I -S .../server_guard.py TASK_PID GRACE_S COMMAND...`

ModelServer stops the server on every way out it sees (done, error, Ctrl-C,
SIGTERM). A task killed outright (SIGKILL, the OOM killer) sees none of them,
and the server, in a session of its own, would go on holding its GPUs and port.
So the server runs below this small process, in the same group: it watches the
task, and once the task is gone it stops the group as ModelServer would
(SIGTERM, SIGKILL after GRACE_S). Otherwise it only waits for the server and
ends as the server ended (same exit code, or killed by the same signal).

Run as a file, not a module of the package, and kept to the standard library,
so that it starts in a few milliseconds and imports nothing of the package.
"""
import os
import signal
import subprocess
import sys
import threading
import time

POLL_S = 0.5


def _stop_group(grace_s):
    os.killpg(os.getpgrp(), signal.SIGTERM)      # this process ignores it (below)
    time.sleep(grace_s)
    os.killpg(os.getpgrp(), signal.SIGKILL)


def _watch(task_pid, grace_s):
    while os.getppid() == task_pid:
        time.sleep(POLL_S)
    _stop_group(grace_s)


def main(argv: list[str]) -> int:
    """Run the server `argv[2:]` below this guard, which stops its group when task `argv[0]` dies
    (SIGKILL `argv[1]` s after SIGTERM). Gives the server's exit code (127: it could not start);
    a server killed by a signal ends this process by the same signal."""
    task_pid, grace_s, command = int(argv[0]), float(argv[1]), argv[2:]
    # A SIGTERM to the group (ModelServer.stop) is for the server; this process ends with it.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        # The server gets the default handlers back (ignored signals would be inherited).
        server = subprocess.Popen(command, preexec_fn=_default_signals)
    except OSError as exc:
        print(f'model server could not start: {exc}', file=sys.stderr, flush=True)
        return 127
    threading.Thread(target=_watch, args=(task_pid, grace_s), daemon=True).start()
    code = server.wait()
    if code < 0:                      # killed by a signal: end the same way
        if -code != signal.SIGKILL:   # (SIGKILL has no handler to reset, and needs none)
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


def _default_signals():
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
