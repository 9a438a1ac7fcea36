"""Secrets of a model entry (key=, and a started server's command and env) never reach files."""
import os

from opencompass_scicode.utils.secrets import (move_secrets_to_env, redact_config, redacted_server,
                                               resolve_server_secrets)

KEY = 'sk-live-abcdef123456'
SERVER = dict(command=['vllm', 'serve', 'org/model', '--port', '{port}', '--api-key', KEY,
                       '--hf-token=hf_inline_secret', '--max-model-len', '8192', '--tokenizer', 'org/tok',
                       '--max-tokens', '256', '--ssl-keyfile', 'k.pem'],
              env={'HF_TOKEN': 'hf_env_secret', 'VLLM_LOGGING_LEVEL': 'INFO', 'OTHER': KEY,
                   'TOKENIZERS_PARALLELISM': 'false'})


def entry():
    return dict(type='OpenAIChatModel', abbr='m', path='org/model', key=KEY, server=dict(SERVER))


def test_server_secrets_move_to_the_environment_and_come_back_only_to_start_it():
    moved = move_secrets_to_env(entry(), 'm')
    text = repr(moved)
    for secret in (KEY, 'hf_inline_secret', 'hf_env_secret'):
        assert secret not in text
    command, env = moved['server']['command'], moved['server']['env']
    # only the secrets move: flags, the port, sizes and names stay as written
    assert command[:6] == ['vllm', 'serve', 'org/model', '--port', '{port}', '--api-key']
    assert command[6].startswith('{env:') and command[7].startswith('--hf-token={env:')
    assert command[8:] == ['--max-model-len', '8192', '--tokenizer', 'org/tok', '--max-tokens', '256',
                           '--ssl-keyfile', 'k.pem']
    assert env['TOKENIZERS_PARALLELISM'] == 'false'
    assert env['VLLM_LOGGING_LEVEL'] == 'INFO' and env['HF_TOKEN'].startswith('ENV:') and env['OTHER'].startswith('ENV:')
    argv, real_env = resolve_server_secrets(command, env)
    assert argv == [a for a in SERVER['command']] and real_env == SERVER['env']
    # moving twice changes nothing more (the task file's entry is moved again by a shard)
    assert move_secrets_to_env(moved, 'm') == moved


def test_redacted_form_is_the_same_before_and_after_the_move():
    raw = redacted_server(SERVER, {KEY})
    assert redacted_server(move_secrets_to_env(entry(), 'm')['server'], {KEY}) == raw
    assert raw['command'][6] == '<redacted>' and raw['command'][7] == '--hf-token=<redacted>'
    assert raw['env'] == {'HF_TOKEN': '<redacted>', 'VLLM_LOGGING_LEVEL': 'INFO', 'OTHER': '<redacted>',
                          'TOKENIZERS_PARALLELISM': 'false'}
    # nothing secret-looking: nothing changed
    plain = dict(command=['llama-server', '-m', 'x.gguf', '--port', '{port}'], env={'OMP_NUM_THREADS': '2'})
    assert redacted_server(plain) == plain and move_secrets_to_env(dict(abbr='p', server=plain), 'p')['server'] == plain


def test_dumped_configs_redact_server_secrets():
    dumped = redact_config({'models': [entry()], 'datasets': []})
    assert KEY not in repr(dumped) and 'hf_env_secret' not in repr(dumped) and 'hf_inline_secret' not in repr(dumped)
    assert dumped['models'][0]['server']['command'][4] == '{port}'
    assert os.environ.get('HF_TOKEN') != 'hf_env_secret'        # redacting moves nothing
