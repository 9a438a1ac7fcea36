"""Every flag of OpenCompass's run.py (`opencompass/cli/main.py` at a5acc4b): honoured with its
OpenCompass meaning, or refused by name, saying why.

The honoured ones are this command line's own flags (cli.py, command_line.py), spelled and
meaning as in OpenCompass; what differs is said in `here`, which docs/from-opencompass.md's
table repeats (a test keeps the two alike). The refused ones are accepted by the parser only to
be refused with one line that names the flag, before anything is loaded: argparse's bare
"unrecognized arguments" would not say whether a flag is unknown or unsupported.
"""
import argparse
from dataclasses import dataclass
from typing import Optional

from ...errors import ConfigError


@dataclass(frozen=True)
class Flag:
    names: tuple                    # as OpenCompass spells them
    here: str                       # what it does here
    refused: Optional[str] = None   # why it is refused; None: honoured
    takes_value: bool = True        # refused flags: whether OpenCompass's takes values after it

    @property
    def shown(self):
        return '/'.join(self.names)


def _refused(names, why, takes_value=True):
    return Flag(tuple(names), f'refused: {why}', why, takes_value)


FLAGS = (
    Flag(('config',), 'the config file; with --datasets/--models/--summarizer the parts they name replace '
                      "the file's"),
    Flag(('--slurm',), 'every task runs as a Slurm job (sbatch); needs -p'),
    _refused(('--dlc',), 'Aliyun DLC is not a runner here (use --slurm, or the local runner)', False),
    Flag(('--models',), 'model configs NAME.py (or NAME/ignored suffix) found as OpenCompass finds them'),
    Flag(('--datasets',), "dataset configs NAME.py; NAME/SUFFIX takes the variables ending in SUFFIX; "
                          "OpenCompass's names (scicode_gen, ...) mean OpenCompass's test-split configs"),
    Flag(('--summarizer',), 'summarizer config NAME.py (NAME/KEY: its variable KEY); without it, this '
                            "package's summary tables"),
    Flag(('--debug',), 'tasks run in this process, one by one, with tracebacks'),
    Flag(('--dry-run',), 'prints the plan (datasets, problems and steps, models, servers, what would be '
                         'fetched) and stops; writes nothing in the current directory, needs no API key '
                         'and no targets'),
    Flag(('-a', '--accelerator'), 'the server of HuggingFace-type models (vllm, lmdeploy; also sglang, '
                                  'llamacpp); same as --hf-backend'),
    Flag(('-m', '--mode'), 'all, infer, eval (score existing predictions, with -r), viz (summary only, with -r)'),
    Flag(('-r', '--reuse'), 'continue the latest run (or TIMESTAMP); tasks whose outputs are complete are '
                            'skipped'),
    Flag(('-w', '--work-dir'), "where runs go (default: the config's work_dir, else outputs/default)"),
    Flag(('--config-dir',), 'searched first for --datasets/--models/--summarizer names (default ./configs), '
                            "then OpenCompass's own configs, then this package's"),
    Flag(('--config-verbose',), 'prints the config, as translated, before the run (secrets redacted)'),
    _refused(('-l', '--lark'), 'there is no Lark bot reporting here', False),
    Flag(('--max-num-workers',), "tasks in flight at once; here it overrides the config's (OpenCompass: "
                                 "the config's wins)"),
    _refused(('--max-workers-per-gpu',), 'the local runner hands out no GPUs (a model server uses what '
                                         'CUDA_VISIBLE_DEVICES shows; --max-num-workers caps the tasks)'),
    Flag(('--retry',), "resubmits a Slurm job that ended without its outputs, up to N times (with --slurm or "
                       "a config's SlurmRunner)"),
    Flag(('--dump-eval-details',), "always on: results files hold every step's verdict (False is refused)"),
    Flag(('--dump-res-length',), 'always on: every prediction record carries its token counts '
                                 '(usage.prompt_tokens, usage.completion_tokens)'),
    _refused(('--analysis-repeat',), 'there is no repeat analysis here (with n > 1 samples, results carry '
                                     'pass@k)', False),
    _refused(('--dump-extract-rate',), 'there is no extract rate here (a step whose answer has no code is '
                                       'scored as failed, its status parse_error)', False),
    _refused(('-sp', '--station-path'), 'there is no results station here'),
    _refused(('--station-overwrite',), 'there is no results station here', False),
    _refused(('--read-from-station',), 'there is no results station here', False),
    Flag(('--dataset-num-runs',), 'N samples of every problem of the --datasets datasets (their n and k), '
                                  'scored as pass@k; needs a temperature above 0'),
    _refused(('--dump-only-message-path',), 'messages are not dumped without asking the model (--dry-run '
                                            'shows the plan)'),
    Flag(('-p', '--partition'), "the Slurm partition (with --slurm, or for a config's SlurmRunner)"),
    _refused(('-q', '--quotatype'), "quota types are an extension of some clusters' Slurm; standard Slurm has "
                                    'none (use --qos)'),
    Flag(('--qos',), "the Slurm QOS (with --slurm, or for a config's SlurmRunner)"),
    _refused(('--aliyun-cfg',), 'Aliyun DLC is not a runner here'),
    Flag(('--hf-type',), 'chat: asked through its chat template; base is refused (every model is asked '
                         'through a chat API)'),
    Flag(('--hf-path',), "a HuggingFace model (or a .gguf file) served per inference task by --hf-backend's "
                         'server (vllm unless named)'),
    Flag(('--model-kwargs',), "the server's flags (trust_remote_code=True, tensor_parallel_size=2, ...)"),
    _refused(('--tokenizer-path',), "the model's server loads its tokenizer (name another with "
                                    '--model-kwargs tokenizer=PATH for vllm)'),
    _refused(('--tokenizer-kwargs',), "the model's server loads its tokenizer (its options go in "
                                      '--model-kwargs)'),
    _refused(('--peft-path',), 'PEFT adapters are not served here (merge the adapter into the model)'),
    _refused(('--peft-kwargs',), 'PEFT adapters are not served here (merge the adapter into the model)'),
    Flag(('--generation-kwargs',), 'temperature and max_new_tokens become model settings; the rest goes '
                                   'with each request'),
    Flag(('--max-seq-len',), "the server's context length"),
    Flag(('--max-out-len',), "the model's token limit per answer (default here 4096; OpenCompass's command "
                             "line: 256); a dataset's own inferencer max_out_len comes first, as in OpenCompass"),
    Flag(('--min-out-len',), 'the least tokens per answer, asked as min_tokens (vLLM, SGLang)'),
    Flag(('--batch-size',), 'requests in flight at once'),
    _refused(('--num-gpus',), 'deprecated in OpenCompass too: use --hf-num-gpus'),
    Flag(('--hf-num-gpus',), "the model's GPUs: the server's tensor parallelism, and a Slurm job's --gres"),
    _refused(('--pad-token-id',), 'no tokenizer is loaded here: the server pads'),
    Flag(('--stop-words',), 'stop sequences sent with each request'),
    _refused(('--custom-dataset-path',), 'this package evaluates SciCode only'),
    _refused(('--custom-dataset-meta-path',), 'this package evaluates SciCode only'),
    _refused(('--custom-dataset-data-type',), 'this package evaluates SciCode only'),
    _refused(('--custom-dataset-infer-method',), 'this package evaluates SciCode only'),
)


def _dest(flag):
    return 'refused_' + flag.names[-1].lstrip('-').replace('-', '_')


def add_refused_arguments(parser):
    """OpenCompass's flags that are refused here, parsed only to be named by refuse_flags()."""
    refused = [flag for flag in FLAGS if flag.refused]
    group = parser.add_argument_group('OpenCompass flags refused here (each says why)',
                                      ', '.join(flag.names[-1] for flag in refused))
    for flag in refused:
        kind = dict(nargs='*') if flag.takes_value else dict(action='store_const', const=True)
        group.add_argument(*flag.names, dest=_dest(flag), default=argparse.SUPPRESS, help=argparse.SUPPRESS,
                           **kind)
    return group


def refuse_flags(args):
    """ConfigError (one line: the flag and why) for the first refused flag given."""
    for flag in FLAGS:
        if flag.refused and hasattr(args, _dest(flag)):
            raise ConfigError(f'{flag.shown}: not supported here: {flag.refused}')
