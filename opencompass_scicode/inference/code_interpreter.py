"""The `code_interpreter` tool of the tool_use mode: snippets run in the step sandbox."""
import asyncio
import json
import queue
import threading
from typing import Any

from ..sandbox.executor import EXECUTORS, Limits, StepJob


class CodeInterpreter:
    """Runs model-written snippets, `workers` at a time, each in a fresh sandboxed directory."""

    def __init__(self, timeout, workers=2, executor='forkserver', max_output_bytes=16 * 1024):
        self.limits = Limits(timeout=timeout, max_output_bytes=max_output_bytes)
        self.workers = workers
        self.executor_name = executor
        self._executor = None
        self._slots = None
        self._starting = threading.Lock()

    def _start(self):
        # Several steps' first tool calls arrive at once, each from a thread of its own: one
        # starts the workers, the others wait for it (and never see a half-made interpreter).
        with self._starting:
            if self._executor is None:
                executor = EXECUTORS[self.executor_name](workers=self.workers)
                executor.start()
                self._slots = queue.Queue()
                for slot in range(self.workers):
                    self._slots.put(slot)
                self._executor = executor

    def run_code(self, code, timeout=None) -> dict[str, Any]:
        """timeout: seconds for this snippet (each dataset has its own); None: the interpreter's."""
        self._start()
        slot = self._slots.get()
        limits = self.limits if timeout is None else self.limits.model_copy(update={'timeout': timeout})
        try:
            run = self._executor.run(StepJob(step_id='tool', program=code, tests=[], dependencies='',
                                             limits=limits), slot)
        finally:
            self._slots.put(slot)
        events = {e.get('event') for e in run.events}
        if run.error:
            status = 'error'
        elif run.timed_out:
            status = 'timeout'
        elif 'completed' in events:
            status = 'success'
        else:
            status = 'error'
        return {'status': status, 'exit_code': run.returncode if status != 'success' else 0,
                'stdout': run.stdout, 'stderr': run.stderr or (run.error or '')}

    async def run_call(self, call, timeout=None) -> dict[str, Any]:
        """Run the code of a model's tool call (`call['arguments']`, JSON with a string `code`); its
        outcome as run_code gives it, or an error for malformed arguments."""
        try:
            code = json.loads(call.get('arguments') or '{}')['code']
            if not isinstance(code, str):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            return {'status': 'error', 'exit_code': None, 'stdout': '',
                    'stderr': 'the arguments must be JSON with a string field `code`'}
        return await asyncio.to_thread(self.run_code, code, timeout)

    def close(self) -> None:
        """Stop the interpreter's workers."""
        if self._executor is not None:
            self._executor.close()
            self._executor = None
