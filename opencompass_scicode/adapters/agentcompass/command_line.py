"""AgentCompass's command line: `run.py run scicode scicode_tool_use MODEL --env host_process ...`.

The flags (and `--config FILE` holding the same keys, the flags winning) become one ordinary
config of this package (params.py): one OpenAIChatModel, one SciCodeDataset, and
`agentcompass_outputs=True`, so that AgentCompass's files are written beside ours
(results/agentcompass.py). Everything else (-r, --slurm, shards, the report) works unchanged.
"""
import argparse
import json

import yaml
from mmengine.config import Config

from ...errors import ConfigError
from .params import DATASET_FLAGS, ENVS, MODEL_FLAGS, dataset_entry, model_entry

BENCHMARKS = ('scicode',)
HARNESSES = ('scicode_tool_use',)
WORK_DIR = 'outputs/agentcompass'
FLAGS = ('env', 'data_dir', 'benchmark_params', 'harness_params', 'model_base_url', 'model_api_key',
         'model_api_protocol', 'model_params', 'task_concurrency')
PARAMS = ('benchmark_params', 'harness_params', 'model_params')
SOURCE = 'the command line (run scicode ...)'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add AgentCompass's positional arguments and flags to `parser` (the `run` sub-command's)."""
    parser.add_argument('benchmark', help='scicode')
    parser.add_argument('harness', help='scicode_tool_use (its mode, tool_use or naive, is a harness param)')
    parser.add_argument('model', help='the model name the API serves')
    group = parser.add_argument_group('AgentCompass', "AgentCompass's flags (docs/from-agentcompass.md)")
    group.add_argument('--env', help='host_process (the only one)')
    group.add_argument('--data-dir', help='searched as DIR/scicode/, then DIR/, then data/scicode')
    for flag in PARAMS:
        group.add_argument('--' + flag.replace('_', '-'), metavar='JSON', help='a JSON object')
    group.add_argument('--model-base-url', metavar='URL', help='the API root, e.g. http://localhost:8000/v1')
    group.add_argument('--model-api-key', metavar='KEY', help='kept out of every file the run writes')
    group.add_argument('--model-api-protocol', help='openai-chat (default) or openai-responses')
    group.add_argument('--task-concurrency', type=int, metavar='N', help='requests in flight')
    group.add_argument('--config', dest='ac_config', metavar='FILE',
                       help='a JSON or YAML file holding the same keys (benchmark_params, ...); flags win')


def _file_values(path):
    try:
        with open(path, encoding='utf-8') as fh:
            values = yaml.safe_load(fh)          # JSON is YAML too
    except OSError as exc:
        raise ConfigError(f'cannot read it: {exc.strerror}', file=path) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f'not JSON or YAML: {exc}', file=path) from None
    if not isinstance(values, dict):
        raise ConfigError('must hold a mapping of keys', file=path, fix=f'keys: {", ".join(FLAGS)}')
    values = {k.replace('-', '_').lstrip('_'): v for k, v in values.items()}
    for name in values:
        if name not in FLAGS:
            raise ConfigError(f'unknown key {name!r}', key=name, file=path, fix=f'allowed keys: {", ".join(FLAGS)}')
    return values


def _json(text, flag):
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f'not JSON: {exc}', key=flag, file=SOURCE, fix=f"e.g. {flag} '{{\"key\": \"value\"}}'") \
            from None
    if not isinstance(value, dict):
        raise ConfigError(f'must be a JSON object, got {type(value).__name__}', key=flag, file=SOURCE,
                          fix=f"e.g. {flag} '{{\"key\": \"value\"}}'")
    return value


def _values(args):
    """{flag: value}: the --config file's, with the command line's over them (params merged)."""
    values = _file_values(args.ac_config) if args.ac_config else {}
    for name in FLAGS:
        given = getattr(args, name)
        if given is None:
            continue
        if name in PARAMS:
            values[name] = {**(values.get(name) or {}), **_json(given, '--' + name.replace('_', '-'))}
        else:
            values[name] = given
    return values


def config_from_run_args(args: argparse.Namespace) -> tuple[Config, str, list[str]]:
    """(cfg, what to name in errors, notes) of AgentCompass's command line, parsed into `args`;
    ConfigError naming the flag on a bad value."""
    source = args.ac_config or SOURCE
    for value, known, what in ((args.benchmark, BENCHMARKS, 'benchmark'), (args.harness, HARNESSES, 'harness')):
        if value not in known:
            raise ConfigError(f'unknown {what} {value!r}', file=SOURCE, fix=f'use {" or ".join(known)}')
    values = _values(args)
    env = values.get('env', 'host_process')
    if env not in ENVS:
        raise ConfigError(f'--env {env!r} is not supported', key='--env', file=source,
                          fix='use --env host_process: steps run in this machine\'s own sandbox '
                              '(processes with limits), no container environment')
    notes = []
    dataset = dataset_entry(values.get('benchmark_params') or {}, values.get('harness_params') or {},
                            values.get('data_dir'), source, notes)
    model = model_entry(args.model, values.get('model_base_url'), values.get('model_api_key'),
                        values.get('model_api_protocol', 'openai-chat'), values.get('model_params') or {},
                        values.get('task_concurrency'), source)
    cfg = Config(dict(models=[model], datasets=[dataset], summarizer=dict(type='SciCodeSummarizer'),
                      runner=dict(type='LocalRunner', max_num_workers=2), work_dir=WORK_DIR,
                      agentcompass_outputs=True))
    return cfg, source, notes


def in_their_words(error: ConfigError) -> ConfigError:
    """A ConfigError about the config this command became, naming the flag or param the key came
    from (`--benchmark-params.category`, not `datasets[0].category`)."""
    key = error.key or ''
    for prefix, flags in (('datasets[0].infer_cfg.', None), ('datasets[0].', DATASET_FLAGS),
                          ('models[0].', MODEL_FLAGS)):
        if key.startswith(prefix):
            name = key[len(prefix):]
            head = name.split('.', 1)[0]
            flag = f'--harness-params.{name}' if flags is None else flags.get(head)
            if flag is None:
                return error
            return ConfigError(error.message, file=error.file or SOURCE, key=flag, fix=error.fix, line=None)
    return error

