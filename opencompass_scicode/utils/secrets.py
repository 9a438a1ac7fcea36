"""API keys stay out of every file a run writes.

A literal key in a model config is moved into an environment variable that
only the run's own processes inherit; the dumped configs name the variable.
"""
import hashlib
import os
import re

SECRET_FIELDS = ('key', 'api_key', 'token', 'password', 'secret')
ENV_PREFIX = 'OPENCOMPASS_SCICODE_SECRET_'
ENV_NAME = re.compile(r'[A-Z_][A-Z0-9_]*')     # a key given as the name of a variable holding it


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


def move_secrets_to_env(model_cfg, abbr):
    out = dict(model_cfg)
    for name in _literal_secrets(model_cfg):
        var = ENV_PREFIX + hashlib.sha256(f'{abbr}:{name}'.encode()).hexdigest()[:12].upper()
        os.environ[var] = out[name]
        out[name] = f'ENV:{var}'
    return out


def redact_config(cfg):
    """A copy of a whole config with literal secrets of models replaced by a marker."""
    out = dict(cfg)
    if isinstance(out.get('models'), (list, tuple)):
        models = []
        for model in out['models']:
            model = dict(model)
            for name in _literal_secrets(model):
                model[name] = '<redacted>'
            models.append(model)
        out['models'] = models
    return out


def resolve_key(key):
    """'ENV' -> $OPENAI_API_KEY; 'SOME_VAR' (set in the environment) -> its value; else the literal."""
    if key is None or key == 'ENV':
        return os.environ.get('OPENAI_API_KEY'), 'OPENAI_API_KEY'
    if ENV_NAME.fullmatch(key) and key in os.environ:
        return os.environ[key], key
    if key.startswith('ENV:'):
        return os.environ.get(key[4:]), key[4:]
    return key, None
