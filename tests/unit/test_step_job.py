"""The step job and its limits are typed records, and the step timeout is one field from the
evaluator's entry to the worker that kills the step: nothing on the way has a timeout of its own."""
import ast

import pytest
from pydantic import ValidationError

from helpers import ROOT
from opencompass_scicode.evaluation.evaluator import STEP_TIMEOUT_S, SciCodeEvaluator
from opencompass_scicode.sandbox.executor import ForkServerExecutor, SubprocessExecutor
from opencompass_scicode.sandbox.job import Limits, StepJob


def _job(**fields):
    return StepJob(step_id='1.1', program='x = 1\n', tests=['assert x == target'], dependencies='', **fields)


def test_the_evaluators_timeout_is_the_one_the_worker_reads():
    for evaluator, seconds in ((SciCodeEvaluator(), STEP_TIMEOUT_S), (SciCodeEvaluator(timeout=7.5), 7.5)):
        payload = _job(limits=evaluator.limits).payload('nonce', b'')
        assert payload['limits']['timeout'] == seconds
        assert 'timeout' not in payload           # no second place a worker could read it from
        assert evaluator.settings()['timeout'] == seconds


def test_a_job_carries_its_limits_and_an_executor_has_none():
    with pytest.raises(ValidationError, match='limits'):
        _job()
    with pytest.raises(ValidationError, match='timeout'):
        Limits()
    with pytest.raises(ValidationError, match='greater than 0'):
        Limits(timeout=0)
    with pytest.raises(ValidationError, match='Extra inputs'):
        _job(limits=Limits(timeout=1), timeout=5)
    for executor in (ForkServerExecutor, SubprocessExecutor):
        with pytest.raises(TypeError):
            executor(Limits(timeout=1), workers=1)


def test_the_evaluators_limits_take_their_defaults_from_the_sandboxs_record():
    limits = SciCodeEvaluator(timeout=60).limits
    assert limits == Limits(timeout=60)
    assert SciCodeEvaluator(memory_limit_mb=None, restrict_files=False).limits == Limits(
        timeout=STEP_TIMEOUT_S, memory_mb=None, landlock=False)


def test_1800_is_written_once_where_steps_are_run():
    """The official 1800 s, as a number in code (not in text), appears once in the parts that make,
    carry and run step jobs (a model server's start-up allowance elsewhere is another setting)."""
    found = []
    parts = ('evaluation', 'sandbox', 'pool', 'tasks', 'inference', 'results')
    for path in (p for part in parts for p in (ROOT / 'opencompass_scicode' / part).rglob('*.py')):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value == 1800 and not isinstance(node.value, bool):
                found.append(f'{path.relative_to(ROOT)}:{node.lineno}')
    assert len(found) == 1 and found[0].startswith('opencompass_scicode/evaluation/evaluator.py:'), found
