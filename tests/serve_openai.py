"""openai_server.FakeOpenAI as a model server a task starts: `python tests/serve_openai.py --port {port}`.

It behaves like a launcher (vllm serve, llama-server, ...): it serves until it
is signalled, and writes what happens to its stdout (which the task sends to
the server log). Options make it misbehave the ways real servers do:
--load-time (seconds before it listens), --not-ready (GET /v1/models answers
503 forever), --child (starts a process of its own, as vLLM starts workers,
that only a signal to the whole process group reaches), --ignore-sigterm, --env-digest
(exit unless an environment variable holds the expected secret), --die-after N (crash
after answering N requests, as a server killed mid-run; with --die-once MARKER only the
start that finds no MARKER file crashes, so a restarted server stays up).
"""
import argparse
import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openai_server import FakeOpenAI, all_steps  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--port', type=int, required=True)
    parser.add_argument('--data', help='a SciCode data dir: answer with the gold code (else `pass`)')
    parser.add_argument('--key', default=None)
    parser.add_argument('--delay', type=float, default=0.0, help='seconds before each answer')
    parser.add_argument('--load-time', type=float, default=0.0, help='seconds before listening')
    parser.add_argument('--not-ready', action='store_true', help='GET /v1/models answers 503')
    parser.add_argument('--child', action='store_true', help='start a long-lived child process')
    parser.add_argument('--ignore-sigterm', action='store_true')
    parser.add_argument('--env-digest', action='append', default=[], metavar='NAME:SHA256',
                        help='exit at once unless $NAME has this sha256 (a secret reached the server)')
    parser.add_argument('--die-after', type=int, metavar='N', help='exit with code 3 after N answers')
    parser.add_argument('--die-once', metavar='MARKER', help='with --die-after: only if MARKER does not '
                                                            'exist yet (it is created)')
    parser.add_argument('--received', metavar='FILE', help='a line in FILE as each request arrives, written '
                                                           'at once (what a SIGKILL leaves of the count)')
    args = parser.parse_args()
    if args.die_once and args.die_after is not None:
        if os.path.exists(args.die_once):
            args.die_after = None
        else:
            Path(args.die_once).touch()
    print(f'server pid {os.getpid()} pgid {os.getpgrp()}', flush=True)
    for item in args.env_digest:
        name, _, digest = item.partition(':')
        if hashlib.sha256(os.environ.get(name, '').encode()).hexdigest() != digest:
            print(f'${name} is not the expected secret', flush=True)
            sys.exit(4)
    if args.ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    else:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    if args.child:
        child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])
        print(f'child pid {child.pid}', flush=True)
    time.sleep(args.load_time)
    with FakeOpenAI(all_steps(args.data) if args.data else (), key=args.key, delay=args.delay,
                    port=args.port) as server:
        if args.not_ready:
            server.models_status = 503
        server.received_to = args.received
        print(f'serving on {server.base_url}', flush=True)
        served = 0
        try:
            while True:
                time.sleep(0.1)
                served = report(server, served)
                if args.die_after is not None and served >= args.die_after:
                    print(f'dying after {served} answers', flush=True)
                    os._exit(3)
        finally:
            report(server, served)


def report(server, served):
    """One line per request answered since the `served` first ones; returns how many are reported."""
    entries = server.log[served:]
    for entry in entries:
        print(f'request {entry["status"]}', flush=True)
    return served + len(entries)


if __name__ == '__main__':
    main()
