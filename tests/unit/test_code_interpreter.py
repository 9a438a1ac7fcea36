"""The tool_use mode's code_interpreter: each call may carry its own dataset's code timeout."""
import asyncio
import json

import pytest

from opencompass_scicode.inference.code_interpreter import CodeInterpreter

SLOW = 'import time\ntime.sleep(3)\nprint("woke")\n'


@pytest.fixture
def interpreter():
    runner = CodeInterpreter(timeout=180, workers=1)
    yield runner
    runner.close()


def test_a_call_runs_under_its_own_timeout(interpreter):
    assert interpreter.run_code(SLOW, timeout=1)['status'] == 'timeout'
    done = interpreter.run_code(SLOW, timeout=10)
    assert done['status'] == 'success' and done['stdout'].strip() == 'woke'


def test_a_tool_call_passes_its_timeout_through(interpreter):
    call = {'arguments': json.dumps({'code': SLOW})}
    assert asyncio.run(interpreter.run_call(call, timeout=1))['status'] == 'timeout'
    assert asyncio.run(interpreter.run_call(call))['status'] == 'success'     # the interpreter's 180 s


def test_first_calls_arriving_together_all_run(monkeypatch):
    """The first tool calls of several steps come at once, each from a thread of its own: while
    one starts the workers, the others wait for them instead of finding half an interpreter."""
    import threading
    import time
    from opencompass_scicode.inference import code_interpreter
    from opencompass_scicode.sandbox.executor import EXECUTORS

    real = EXECUTORS['forkserver']

    class SlowToStart(real):
        def start(self):
            time.sleep(0.5)            # a wide window: the workers import the scientific stack
            return super().start()

    monkeypatch.setitem(code_interpreter.EXECUTORS, 'forkserver', SlowToStart)
    interpreter = code_interpreter.CodeInterpreter(timeout=30, workers=2)
    outputs, errors = [], []

    def call(i):
        try:
            outputs.append(interpreter.run_code(f'print({i} * 2)'))
        except Exception as exc:       # noqa: BLE001 - the failure being tested for
            errors.append(repr(exc))

    threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        interpreter.close()
    assert errors == []
    assert sorted(o['stdout'].strip() for o in outputs) == ['0', '2', '4', '6']
    assert {o['status'] for o in outputs} == {'success'}
