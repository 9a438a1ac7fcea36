"""The server command that stands in for OpenCompass's in-process local models.

OpenCompass loads `VLLMwithChatTemplate`, `HuggingFacewithChatTemplate` and
`TurboMindModelwithChatTemplate` into its inference process. Here a local model
is an OpenAI-compatible server that the inference task starts on a free port and
stops when it ends (`server=`, models/server.py), asked through its chat template
like any API. The entry's `model_kwargs` become the server's flags, with the few
names OpenCompass passes to the engine renamed to the launcher's own.
"""
import json
import sys
from dataclasses import dataclass, field

from ...errors import ConfigError

HOST = '127.0.0.1'


@dataclass(frozen=True)
class Backend:
    name: str
    head: tuple                     # the launcher's command; '{path}' and '{port}' filled in
    renames: dict = field(default_factory=dict)     # model_kwargs name -> flag name
    ignored: tuple = ()             # model_kwargs that mean nothing to this server
    underscores: bool = False       # flag spelling: --n_ctx (llama-cpp-python) or --max-model-len
    bool_values: bool = False       # --flag true/false (llama-cpp-python) or a bare --flag for True
    gpus_kwarg: str = None          # what run_cfg num_gpus sets when model_kwargs do not say
    context_kwarg: str = None       # what the entry's max_seq_len sets when model_kwargs do not say


# device_map, torch_dtype (HuggingFace loading options) have a server-side meaning only where renamed.
BACKENDS = {
    'vllm': Backend('vllm', ('vllm', 'serve', '{path}', '--host', HOST, '--port', '{port}'),
                    renames={'torch_dtype': 'dtype'}, ignored=('device_map',),
                    gpus_kwarg='tensor_parallel_size', context_kwarg='max_model_len'),
    'sglang': Backend('sglang', ('{python}', '-m', 'sglang.launch_server', '--model-path', '{path}',
                                 '--host', HOST, '--port', '{port}'),
                      renames={'tensor_parallel_size': 'tp_size', 'max_model_len': 'context_length',
                               'torch_dtype': 'dtype'},
                      ignored=('device_map',), gpus_kwarg='tensor_parallel_size', context_kwarg='max_model_len'),
    'lmdeploy': Backend('lmdeploy', ('lmdeploy', 'serve', 'api_server', '{path}', '--server-name', HOST,
                                     '--server-port', '{port}', '--model-name', '{path}'),
                        renames={'tensor_parallel_size': 'tp', 'max_model_len': 'session_len'},
                        ignored=('device_map', 'torch_dtype'), gpus_kwarg='tensor_parallel_size',
                        context_kwarg='max_model_len'),
    # llama-cpp-python's server: answers whatever model name is asked with the one it serves.
    'llamacpp': Backend('llamacpp', ('{python}', '-m', 'llama_cpp.server', '--model', '{path}',
                                     '--model_alias', '{path}', '--host', HOST, '--port', '{port}'),
                        renames={'max_model_len': 'n_ctx'},
                        ignored=('device_map', 'torch_dtype', 'tensor_parallel_size', 'trust_remote_code'),
                        underscores=True, bool_values=True, context_kwarg='max_model_len'),
}
DEFAULT_BACKEND = 'vllm'


def backend_named(name: str, key: str) -> Backend:
    """The Backend called `name`; ConfigError at `key` for an unknown one."""
    if name not in BACKENDS:
        raise ConfigError(f'unknown server backend {name!r}', key=key,
                          fix=f'use one of {", ".join(BACKENDS)} (default {DEFAULT_BACKEND})')
    return BACKENDS[name]


def _flag(backend, name):
    name = backend.renames.get(name, name)
    return '--' + (name.replace('-', '_') if backend.underscores else name.replace('_', '-'))


def _flags(backend, name, value):
    if isinstance(value, bool):
        if backend.bool_values:
            return [_flag(backend, name), 'true' if value else 'false']
        return [_flag(backend, name)] if value else []        # the launchers' default is off
    if value is None:
        return []
    if isinstance(value, (dict, list, tuple)):
        return [_flag(backend, name), json.dumps(value)]       # e.g. vLLM's --rope-scaling '{...}'
    return [_flag(backend, name), str(value)]


def server_command(backend: Backend, path, model_kwargs=None, num_gpus=None,
                   max_seq_len=None) -> tuple[list[str], list[str]]:
    """(command, model_kwargs names this server ignores) for serving `path` with `backend`."""
    kwargs = dict(model_kwargs or {})
    given = {_flag(backend, name) for name in kwargs}       # e.g. lmdeploy's tp= is --tp too
    for name, value in ((backend.gpus_kwarg, num_gpus), (backend.context_kwarg, max_seq_len)):
        if name and value and _flag(backend, name) not in given:
            kwargs[name] = value
    command = [part.replace('{path}', str(path)).replace('{python}', sys.executable)
               for part in backend.head]
    ignored = []
    for name, value in kwargs.items():
        if name in backend.ignored:
            ignored.append(name)
        else:
            command += _flags(backend, name, value)
    return command, ignored
