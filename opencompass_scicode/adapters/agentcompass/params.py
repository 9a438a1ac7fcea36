"""AgentCompass's SciCode parameters, turned into this package's config entries.

`--benchmark-params`, `--harness-params` and `--model-params` are JSON objects; each key
maps onto one option of a dataset entry (SciCodeDataset), its infer_cfg (InferConfig) or
the model entry (OpenAIChatModel). Unknown keys and bad values stop the run before any
request, named as AgentCompass names them (command_line.in_their_words names the keys of
later checks of the config the same way). Where AgentCompass's default differs from ours
(split, mode), its default is used and one note says so. AgentCompass's definitions come with its command:
the dataset's protocol is 'agentcompass' (protocols/: an answer without a code block is a
parse_error with null code, the 'fenced' extraction; results name any key given otherwise), and
the targets a `dataset_zip_url` holds must be the official file.
"""
from pathlib import Path
from typing import Optional

from ...datasets.files import DEFAULT_DATA_DIR, H5_SHA256
from ...datasets.scicode import SPLITS, SciCodeDataset
from ...errors import ConfigError, did_you_mean
from ...inference.settings import MODES, InferConfig

BENCHMARK_KEYS = ('split', 'sample_ids', 'category', 'h5py_file', 'dataset_zip_url')
HARNESS_KEYS = ('mode', 'with_background', 'tool_use_max_loops', 'code_timeout_seconds')
# model params: ours by name; the other request fields go into the request body as they are
MODEL_OWN = {'temperature': 'temperature', 'max_tokens': 'max_out_len', 'max_completion_tokens': 'max_out_len',
             'max_output_tokens': 'max_out_len', 'timeout': 'timeout'}
MODEL_BODY = ('top_p', 'top_k', 'min_p', 'seed', 'stop', 'presence_penalty', 'frequency_penalty',
              'repetition_penalty', 'reasoning_effort', 'extra_body')
MODEL_KEYS = tuple(MODEL_OWN) + MODEL_BODY
PROTOCOLS = {'openai-chat': 'chat', 'openai-responses': 'responses'}
ENVS = ('host_process',)
AGENTCOMPASS_DEFAULTS = {'split': ('all', 'validation'), 'mode': ('tool_use', 'naive')}
# AgentCompass's own data dir when --data-dir is not given: a relative h5py_file is under it.
AGENTCOMPASS_DATA_DIR = 'data'
# AgentCompass's rule for taking the code from an answer (inference/extract.py), and its protocol
EXTRACTION = 'fenced'
PROTOCOL = 'agentcompass'
# dataset/infer_cfg option -> the AgentCompass key it came from (to name a refused value)
DATASET_KEY = {'split': 'split', 'sample_ids': 'sample_ids', 'category': 'category', 'h5py_file': 'h5py_file',
               'with_bg': 'with_background', 'targets_url': 'dataset_zip_url', 'targets_sha256': 'dataset_zip_url'}
# config key of the one model and the one dataset -> the flag (or param) it came from
MODEL_FLAGS = {'base_url': '--model-base-url', 'key': '--model-api-key', 'api': '--model-api-protocol',
               'max_concurrency': '--task-concurrency', 'path': 'MODEL', 'temperature': '--model-params.temperature',
               'max_out_len': '--model-params.max_tokens', 'timeout': '--model-params.timeout',
               'extra_body': '--model-params'}
DATASET_FLAGS = {**{k: f'--benchmark-params.{v}' for k, v in DATASET_KEY.items()},
                 'with_bg': '--harness-params.with_background', 'path': '--data-dir'}


def check_keys(params: dict, known: tuple, flag: str, file: str) -> None:
    """Raise ConfigError, naming `flag` and `file`, unless `params` is a dict of `known` keys only."""
    if not isinstance(params, dict):
        raise ConfigError(f'must be a JSON object, got {type(params).__name__}', key=flag, file=file,
                          fix=f"e.g. {flag} '{{\"{known[0]}\": ...}}'")
    for name in params:
        if name not in known:
            raise ConfigError(f'unknown key {name!r}', key=f'{flag}.{name}', file=file,
                              fix=f'{did_you_mean(name, known)}allowed keys: {", ".join(known)}')


def find_data_dir(data_dir: Optional[str]) -> tuple[str, Optional[str]]:
    """(the data dir to use, a note or None): AgentCompass's search order, <data_dir>/scicode/,
    <data_dir>/, then the packaged data (the note says `data_dir` held no problems)."""
    if data_dir is None:
        return DEFAULT_DATA_DIR, None
    for candidate in (Path(data_dir) / 'scicode', Path(data_dir)):
        if any((candidate / name).is_file() for files in SPLITS.values() for name in files):
            return str(candidate), None
    return DEFAULT_DATA_DIR, (f'--data-dir {data_dir}: no SciCode problems in {data_dir}/scicode/ or {data_dir}/; '
                              f'the data in {DEFAULT_DATA_DIR}/ is used')


def _rewrapped(build, flag_of, file):
    try:
        return build()
    except ConfigError as exc:
        flag, name = flag_of(exc.key)
        raise ConfigError(exc.message, key=f'{flag}.{name}', file=file, fix=exc.fix) from None


def dataset_entry(benchmark: dict, harness: dict, data_dir: Optional[str], file: str, notes: list) -> dict:
    """The dataset entry (with its infer_cfg) of AgentCompass's benchmark and harness params; what
    the user should know (AgentCompass's defaults, an empty --data-dir) is appended to `notes`."""
    check_keys(benchmark, BENCHMARK_KEYS, '--benchmark-params', file)
    check_keys(harness, HARNESS_KEYS, '--harness-params', file)
    defaults = [f'{k}={AGENTCOMPASS_DEFAULTS[k][0]!r} (ours: {AGENTCOMPASS_DEFAULTS[k][1]!r})'
                for k, given in (('split', benchmark), ('mode', harness)) if k not in given]
    if defaults:
        notes.append("AgentCompass's defaults apply: " + ', '.join(defaults))
    split = benchmark.get('split', 'all')
    if split not in SPLITS:
        raise ConfigError(f'unknown split {split!r}', key='--benchmark-params.split', file=file,
                          fix=f'use one of {", ".join(map(repr, SPLITS))}')
    mode = harness.get('mode', 'tool_use')
    if mode not in MODES:
        raise ConfigError(f'unknown mode {mode!r}', key='--harness-params.mode', file=file,
                          fix=f'use one of {", ".join(map(repr, MODES))}')
    path, note = find_data_dir(data_dir)
    if note:
        notes.append(note)
    entry = dict(type='SciCodeDataset', path=path, split=split, with_bg=bool(harness.get('with_background', False)),
                 protocol=PROTOCOL)
    if not isinstance(harness.get('with_background', False), bool):
        raise ConfigError(f'must be true or false, got {harness["with_background"]!r}',
                          key='--harness-params.with_background', file=file)
    ids = benchmark.get('sample_ids')
    if ids is not None:
        entry['sample_ids'] = [str(i) if isinstance(i, int) and not isinstance(i, bool) else i
                               for i in ([ids] if isinstance(ids, (str, int)) else ids)]
    if benchmark.get('category') not in (None, 'all'):
        entry['category'] = benchmark['category']
    h5 = benchmark.get('h5py_file')
    if h5:
        if not isinstance(h5, str):
            raise ConfigError(f'must be a path, got {h5!r}', key='--benchmark-params.h5py_file', file=file)
        entry['h5py_file'] = h5 if Path(h5).is_absolute() else str(Path(data_dir or AGENTCOMPASS_DATA_DIR) / h5)
    url = benchmark.get('dataset_zip_url')
    if url:
        if not isinstance(url, str):
            raise ConfigError(f'must be a URL, got {url!r}', key='--benchmark-params.dataset_zip_url', file=file)
        if 'targets_url' not in SciCodeDataset.__dataclass_fields__:
            raise ConfigError('not yet supported here', key='--benchmark-params.dataset_zip_url', file=file,
                              fix='download and unpack the archive by hand, then give its test_data.h5 as '
                                  'h5py_file (relative to --data-dir)')
        entry['targets_url'] = [url]
        entry['targets_sha256'] = H5_SHA256       # the test_data.h5 it holds is the official one
    infer = {'mode': mode, 'extraction': EXTRACTION}
    for name in ('tool_use_max_loops', 'code_timeout_seconds'):
        if name in harness:
            infer[name] = harness[name]
    _rewrapped(lambda: InferConfig.of(infer), lambda key: ('--harness-params', key), file)
    _rewrapped(lambda: SciCodeDataset(**{k: v for k, v in entry.items() if k != 'type'}),
               lambda key: ('--benchmark-params' if key != 'with_bg' else '--harness-params',
                            DATASET_KEY.get(key, key)), file)
    entry['infer_cfg'] = infer
    return entry


def model_entry(name, base_url, key, protocol, params, concurrency, file) -> dict:
    """The OpenAIChatModel entry of AgentCompass's model flags. A literal key is kept out of
    every file the run writes (utils/secrets.py)."""
    if not base_url:
        raise ConfigError('no model URL', key='--model-base-url', file=file,
                          fix='add --model-base-url URL, the API root, e.g. http://localhost:8000/v1')
    if protocol not in PROTOCOLS:
        raise ConfigError(f'unknown protocol {protocol!r}', key='--model-api-protocol', file=file,
                          fix=f'use one of {", ".join(PROTOCOLS)}')
    check_keys(params, MODEL_KEYS, '--model-params', file)
    entry = dict(type='OpenAIChatModel', path=name, base_url=base_url, key=key or 'ENV', api=PROTOCOLS[protocol])
    body = {}
    for param, value in params.items():
        if param in MODEL_OWN:
            entry[MODEL_OWN[param]] = value
        elif param == 'extra_body':
            if not isinstance(value, dict):
                raise ConfigError('must be a JSON object', key='--model-params.extra_body', file=file)
            body.update(value)
        else:
            body[param] = value
    if body:
        entry['extra_body'] = body
    if concurrency is not None:
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ConfigError(f'must be a whole number >= 1, got {concurrency!r}', key='--task-concurrency',
                              file=file)
        entry['max_concurrency'] = concurrency
    return entry

