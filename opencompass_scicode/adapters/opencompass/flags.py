"""Every flag of OpenCompass's run.py (`opencompass/cli/main.py` at a5acc4b): honoured with its
OpenCompass meaning, or refused by name, saying why.

The honoured ones are this command line's own flags; docs/from-opencompass.md has a table of
every flag, what it does here and why a refused one is refused (a test keeps the table and these
lists alike). The refused ones are accepted by the parser only to be refused with one line that
names the flag, before anything is loaded: argparse's bare "unrecognized arguments" would not
say whether a flag is unknown or unsupported.
"""
import argparse
from dataclasses import dataclass

from ...errors import ConfigError


# Honoured: this command line's own flags (cli.py, command_line.py), spelled and meaning as in
# OpenCompass; docs/from-opencompass.md says what each does here and where a default differs.
HONOURED = (
    ('config',), ('--slurm',), ('--models',), ('--datasets',), ('--summarizer',), ('--debug',), ('--dry-run',),
    ('-a', '--accelerator'), ('-m', '--mode'), ('-r', '--reuse'), ('-w', '--work-dir'), ('--config-dir',),
    ('--config-verbose',), ('--max-num-workers',), ('--retry',), ('--dump-eval-details',), ('--dump-res-length',),
    ('--dataset-num-runs',), ('-p', '--partition'), ('--qos',), ('--hf-type',), ('--hf-path',), ('--model-kwargs',),
    ('--generation-kwargs',), ('--max-seq-len',), ('--max-out-len',), ('--min-out-len',), ('--batch-size',),
    ('--hf-num-gpus',), ('--stop-words',),
)


@dataclass(frozen=True)
class Refused:
    names: tuple                    # as OpenCompass spells them
    why: str
    takes_value: bool = True        # whether OpenCompass's flag takes values after it

    @property
    def shown(self) -> str:
        """The flag's names as one text: '-l/--lark'."""
        return '/'.join(self.names)


NO_STATION = 'there is no results station here'
NO_DLC = 'Aliyun DLC is not a runner here (use --slurm, or the local runner)'
SCICODE_ONLY = 'this package evaluates SciCode only'
REFUSED = (
    Refused(('--dlc',), NO_DLC, False),
    Refused(('--aliyun-cfg',), NO_DLC),
    Refused(('-l', '--lark'), 'there is no Lark bot reporting here', False),
    Refused(('--max-workers-per-gpu',), 'the local runner hands out no GPUs (a model server uses what '
                                        'CUDA_VISIBLE_DEVICES shows; --max-num-workers caps the tasks)'),
    Refused(('--analysis-repeat',), 'there is no repeat analysis here (with n > 1 samples, results carry '
                                    'pass@k)', False),
    Refused(('--dump-extract-rate',), 'there is no extract rate here (an answer without code is scored as a '
                                      'failed step, status parse_error)', False),
    Refused(('-sp', '--station-path'), NO_STATION),
    Refused(('--station-overwrite',), NO_STATION, False),
    Refused(('--read-from-station',), NO_STATION, False),
    Refused(('--dump-only-message-path',), 'messages are not dumped without asking the model (--dry-run shows '
                                           'the plan)'),
    Refused(('-q', '--quotatype'), "quota types are an extension of some clusters' Slurm; standard Slurm has "
                                   'none (use --qos)'),
    Refused(('--tokenizer-path',), "the model's server loads its tokenizer (name another in --model-kwargs, "
                                   'e.g. tokenizer=PATH for vllm)'),
    Refused(('--tokenizer-kwargs',), "the model's server loads its tokenizer (its options go in --model-kwargs)"),
    Refused(('--peft-path',), 'PEFT adapters are not served here (merge the adapter into the model)'),
    Refused(('--peft-kwargs',), 'PEFT adapters are not served here (merge the adapter into the model)'),
    Refused(('--num-gpus',), 'deprecated in OpenCompass too: use --hf-num-gpus'),
    Refused(('--pad-token-id',), 'no tokenizer is loaded here: the server pads'),
    Refused(('--custom-dataset-path',), SCICODE_ONLY),
    Refused(('--custom-dataset-meta-path',), SCICODE_ONLY),
    Refused(('--custom-dataset-data-type',), SCICODE_ONLY),
    Refused(('--custom-dataset-infer-method',), SCICODE_ONLY),
)


def _dest(flag):
    return 'refused_' + flag.names[-1].lstrip('-').replace('-', '_')


def add_refused_arguments(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """Add to `parser` OpenCompass's flags that are refused here, parsed only to be named by
    refuse_flags(); gives the group holding them."""
    group = parser.add_argument_group('OpenCompass flags refused here', 'given, each stops the run at once, '
                                      'saying why')
    for flag in REFUSED:
        kind = dict(nargs='*', metavar='X') if flag.takes_value else dict(action='store_const', const=True)
        group.add_argument(*flag.names, dest=_dest(flag), default=argparse.SUPPRESS, help=f'refused: {flag.why}',
                           **kind)
    return group


def refuse_flags(args: argparse.Namespace) -> None:
    """Raise ConfigError (one line: the flag and why) for the first refused flag given in `args`."""
    for flag in REFUSED:
        if hasattr(args, _dest(flag)):
            raise ConfigError(f'{flag.shown}: not supported here: {flag.why}')
