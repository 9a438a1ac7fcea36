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
