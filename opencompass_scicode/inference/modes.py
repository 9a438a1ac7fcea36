"""Generation modes: how one step's answer is obtained from a model.

- naive (official): one call with the official prompt.
- chat: the steps of a problem as one conversation; the model's earlier
  answers stay as assistant turns, so later turns leave the earlier steps out.
- tool_use: the model may run code with a `code_interpreter` tool before it
  answers with a final ```python block.
Each returns a dict of record fields; the engine adds the bookkeeping.
"""
import json
from typing import Any

from ..models.base import GenerationRequest

CHAT_EARLIER_STEPS = 'The earlier steps of this problem, with your code for them, are in the conversation above.'
CHAT_GIVEN_STEPS = 'The step(s) after them, with their code given by the benchmark:'

TOOL_USE_NOTE = (
    '\n\nYou may run Python code with the `code_interpreter` tool (argument `code`) to check your '
    'work; each call runs in a fresh directory and returns its status, stdout, stderr and exit code. '
    'When you are done, answer with the final code in a single ```python block.')
FINAL_ANSWER_REQUEST = 'Please give your final answer now: the complete code for this step in a single ```python block.'

CODE_INTERPRETER_TOOL = {
    'type': 'function',
    'function': {
        'name': 'code_interpreter',
        'description': 'Run a Python snippet in a fresh, isolated directory and return status, '
                       'stdout, stderr and exit code.',
        'parameters': {'type': 'object', 'properties': {'code': {'type': 'string'}},
                       'required': ['code']},
    },
}


def requires_chat(mode) -> bool:
    """Whether generation mode `mode` needs a chat model."""
    return mode in ('chat', 'tool_use')


def _request(problem, step, prompt, dataset):
    return GenerationRequest(problem=problem, step=step, prompt=prompt, with_bg=dataset.with_bg)


def _ask(model, messages, tools, request):
    """One chat turn. Offline models that answer from the step itself (models.StepChatMixin)
    are handed the step; chat models get the conversation (and the tools, if any)."""
    if hasattr(model, 'achat_step'):
        return model.achat_step(messages, tools, request)
    return model.achat(messages) if tools is None else model.achat(messages, tools=tools)


async def naive(model, problem, step, prompt, dataset, state, cfg) -> dict[str, Any]:
    """The official mode: one request per step with its prompt; the answer and what it cost."""
    request = _request(problem, step, prompt, dataset)
    gen = await model.agenerate(request)
    return {'response': gen.text, 'program': gen.program, 'error': gen.error,
            'finish_reason': gen.finish_reason, 'reasoning': gen.reasoning, 'usage': gen.usage}


async def chat(model, problem, step, prompt, dataset, state, cfg) -> dict[str, Any]:
    """`state['messages']` carries the conversation of this problem from step to step."""
    messages = state.get('messages')
    if messages is None:
        messages = model.initial_messages(prompt)
    else:
        messages = messages + [{'role': 'user', 'content': prompt}]
    turn = await _ask(model, messages, None, _request(problem, step, prompt, dataset))
    state['messages'] = messages + [{'role': 'assistant', 'content': turn.content}]
    return {'response': turn.content, 'error': None, 'finish_reason': turn.finish_reason,
            'reasoning': turn.reasoning, 'usage': turn.usage_record(), 'transcript': state['messages']}


async def tool_use(model, problem, step, prompt, dataset, state, cfg) -> dict[str, Any]:
    """The tool-use mode: the model may run code in the sandbox through a tool (up to
    `tool_use_max_loops` calls), then answers; the final answer and what it cost."""
    runner = state['code_runner']
    max_loops = cfg.tool_use_max_loops
    messages = model.initial_messages(prompt + TOOL_USE_NOTE)
    usage = {'prompt_tokens': 0, 'completion_tokens': 0, 'requests': 0, 'latency_s': 0.0}
    calls, reprompted, turn = 0, False, None
    while True:
        tools = [CODE_INTERPRETER_TOOL] if calls < max_loops else None
        if tools is None and turn is not None and turn.tool_calls:
            messages = messages + [{'role': 'user', 'content': FINAL_ANSWER_REQUEST}]
        turn = await _ask(model, messages, tools, _request(problem, step, prompt, dataset))
        _add_usage(usage, turn)
        assistant = {'role': 'assistant', 'content': turn.content or ''}
        if turn.tool_calls and tools:
            assistant['tool_calls'] = [{'id': c['id'], 'type': 'function',
                                        'function': {'name': c['name'], 'arguments': c['arguments']}}
                                       for c in turn.tool_calls]
            messages = messages + [assistant]
            for call in turn.tool_calls:
                calls += 1
                output = await runner.run_call(call, timeout=cfg.code_timeout_seconds)
                messages = messages + [{'role': 'tool', 'tool_call_id': call['id'],
                                        'content': json.dumps(output)}]
            continue
        messages = messages + [assistant]
        if '```' not in (turn.content or '') and not reprompted:
            reprompted = True          # one reminder to give the code
            messages = messages + [{'role': 'user', 'content': FINAL_ANSWER_REQUEST}]
            continue
        return {'response': turn.content, 'error': None, 'finish_reason': turn.finish_reason,
                'reasoning': turn.reasoning, 'usage': usage, 'transcript': messages,
                'tool_calls': calls}


def _add_usage(total, turn):
    total['prompt_tokens'] += turn.usage.get('prompt_tokens', 0)
    total['completion_tokens'] += turn.usage.get('completion_tokens', 0)
    total['requests'] += turn.attempts
    total['latency_s'] = round(total['latency_s'] + turn.latency_s, 3)


GENERATORS = {'naive': naive, 'chat': chat, 'tool_use': tool_use}     # one for each of settings.MODES

