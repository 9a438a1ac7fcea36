"""API keys stay out of every file a run writes.

A literal key in a model config is moved into an environment variable that
only the run's own processes inherit; the dumped configs name the variable.
The same holds for the secrets of a model server started per task (`server=`):
an argument of its command that follows a flag such as `--api-key` or `--token`
(or `--api-key=...`), or that equals the model's key, becomes `{env:VAR}`, and an
`env` entry named like `HF_TOKEN` or `*_API_KEY` (or holding the model's key)
becomes `ENV:VAR`; the server is started with the values (models/server.py), while
task files, logs, predictions and dumped configs only ever hold the references.
"""
import hashlib
import os
import re
from typing import Any

SECRET_FIELDS = ('key', 'api_key', 'token', 'password', 'secret')
ENV_PREFIX = 'OPENCOMPASS_SCICODE_SECRET_'
ENV_NAME = re.compile(r'[A-Z_][A-Z0-9_]*')     # a key given as the name of a variable holding it
# A secret's name has one of these words as a whole part (HF_TOKEN, --api-key, --hf-token), which
# --tokenizer, --max-tokens, --ssl-keyfile or TOKENIZERS_PARALLELISM do not.
_WORDS = r'(?:key|token|secret|password|passwd)'
SECRET_WORDS = re.compile(rf'(?:^|_){_WORDS}(?:_|$)', re.IGNORECASE)
SECRET_FLAG = re.compile(rf'^--?(?:[a-z0-9]+[-_])*{_WORDS}(?:[-_][a-z0-9]+)*$', re.IGNORECASE)
ARG_REFERENCE = re.compile(r'\{env:([A-Za-z_][A-Za-z0-9_]*)\}')
REDACTED = '<redacted>'


def _is_reference(value):
    """'ENV', 'ENV:NAME' or the name of a set environment variable: not a secret itself."""
    return (value == 'ENV' or value.startswith('ENV:')
            or (ENV_NAME.fullmatch(value) is not None and value in os.environ))


def _literal_secrets(model_cfg):
    """Names of the model's fields that hold a secret as it is."""
    for name in SECRET_FIELDS:
        value = model_cfg.get(name)
        if isinstance(value, str) and value and not _is_reference(value):
            yield name


def _env_var(abbr, where):
    return ENV_PREFIX + hashlib.sha256(f'{abbr}:{where}'.encode()).hexdigest()[:12].upper()


def _server_secrets(server, known):
    """(command positions, env names) of the literal secrets in a `server=` dict; `known`: the
    model's literal secret values (an argument equal to one is a secret wherever it stands)."""
    known = {k for k in known if isinstance(k, str) and len(k) >= 4}     # 'x' is no secret to look for
    command = list(server.get('command') or ())
    positions = []
    for i, arg in enumerate(command):
        if not isinstance(arg, str) or ARG_REFERENCE.search(arg):
            continue
        flag, eq, value = arg.partition('=')
        if (eq and value and SECRET_FLAG.match(flag)) or arg in known or (
                i > 0 and isinstance(command[i - 1], str) and SECRET_FLAG.match(command[i - 1])
                and not arg.startswith('-')):
            positions.append(i)
    names = [name for name, value in (server.get('env') or {}).items()
             if isinstance(value, str) and value and not value.startswith('ENV:')
             and (SECRET_WORDS.search(name) or value in known)]
    return positions, names


def _with_server_secrets(server, known, replace_arg, replace_env):
    positions, names = _server_secrets(server, known)
    if not positions and not names:
        return server
    out = dict(server)
    command = list(server.get('command') or ())
    for i in positions:
        flag, eq, value = command[i].partition('=')
        command[i] = f'{flag}={replace_arg(i, value)}' if eq and SECRET_FLAG.match(flag) else replace_arg(i, command[i])
    out['command'] = command
    env = dict(server.get('env') or {})
    for name in names:
        env[name] = replace_env(name, env[name])
    out['env'] = env
    return out


def move_secrets_to_env(model_cfg, abbr) -> dict[str, Any]:
    """`model_cfg` with its literal secrets moved into environment variables of this process
    (`ENV:NAME` in their place), so task files never hold them."""
    out = dict(model_cfg)
    known = set()
    for name in _literal_secrets(model_cfg):
        var = _env_var(abbr, name)
        known.add(out[name])
        os.environ[var] = out[name]
        out[name] = f'ENV:{var}'
    if isinstance(out.get('server'), dict):
        def to_env(where, value):
            var = _env_var(abbr, where)
            os.environ[var] = value
            return var

        out['server'] = _with_server_secrets(
            out['server'], known,
            lambda i, value: '{env:%s}' % to_env(f'server.command[{i}]', value),
            lambda name, value: 'ENV:' + to_env(f'server.env.{name}', value))
    return out


def redacted_server(server, known=()) -> dict[str, Any]:
    """`server=` with its secrets (literal or moved to the environment) shown as <redacted>:
    the same text either way, so settings compare equal before and after the move."""
    command = [REDACTED if isinstance(a, str) and ARG_REFERENCE.fullmatch(a) else
               (f'{a.partition("=")[0]}={REDACTED}' if isinstance(a, str) and ARG_REFERENCE.search(a) else a)
               for a in server.get('command') or ()]
    env = {k: (REDACTED if isinstance(v, str) and v.startswith('ENV:') else v)
           for k, v in (server.get('env') or {}).items()}
    return _with_server_secrets(dict(server, command=command, env=env), set(known),
                                lambda i, value: REDACTED, lambda name, value: REDACTED)


def resolve_server_secrets(command, env) -> tuple[list[str], dict[str, str]]:
    """(argv, env) with the references put back by move_secrets_to_env replaced by their values,
    for starting the server only."""
    argv = [ARG_REFERENCE.sub(lambda m: os.environ.get(m.group(1), ''), a) for a in command]
    values = {k: (os.environ.get(v[4:], '') if v.startswith('ENV:') else v) for k, v in env.items()}
    return argv, values


def redact_config(cfg) -> dict[str, Any]:
    """A copy of a whole config with literal secrets of models replaced by a marker."""
    out = dict(cfg)
    if isinstance(out.get('models'), (list, tuple)):
        models = []
        for model in out['models']:
            model = dict(model)
            known = set()
            for name in _literal_secrets(model):
                known.add(model[name])
                model[name] = REDACTED
            if isinstance(model.get('server'), dict):
                model['server'] = redacted_server(model['server'], known)
            models.append(model)
        out['models'] = models
    return out


def resolve_key(key) -> tuple[str | None, str | None]:
    """'ENV' -> $OPENAI_API_KEY; 'SOME_VAR' (set in the environment) -> its value; else the literal."""
    if key is None or key == 'ENV':
        return os.environ.get('OPENAI_API_KEY'), 'OPENAI_API_KEY'
    if ENV_NAME.fullmatch(key) and key in os.environ:
        return os.environ[key], key
    if key.startswith('ENV:'):
        return os.environ.get(key[4:]), key[4:]
    return key, None
