"""Every flag of OpenCompass's run.py is honoured or refused by name (adapters/opencompass/flags.py),
and docs/from-opencompass.md's table says which."""
import re

import pytest

from helpers import ROOT
from opencompass_scicode import cli
from opencompass_scicode.adapters.opencompass.command_line import config_from_args
from opencompass_scicode.adapters.opencompass.flags import HONOURED, REFUSED
from opencompass_scicode.errors import ConfigError
from opencompass_scicode.launch.plan import LaunchOptions, build_stage, check_slurm_options
from opencompass_scicode.runners import LocalRunner, SlurmRunner

# The flags of OpenCompass's run.py, as its parser spells them (opencompass/cli/main.py at a5acc4b,
# read by hand; test_opencompass_runs.py compares them with a checkout's file where one is given).
OPENCOMPASS_FLAGS = {
    'config', '--slurm', '--dlc', '--models', '--datasets', '--summarizer', '--debug', '--dry-run', '-a',
    '--accelerator', '-m', '--mode', '-r', '--reuse', '-w', '--work-dir', '--config-dir', '--config-verbose',
    '-l', '--lark', '--max-num-workers', '--max-workers-per-gpu', '--retry', '--dump-eval-details',
    '--dump-res-length', '--analysis-repeat', '--dump-extract-rate', '-sp', '--station-path',
    '--station-overwrite', '--read-from-station', '--dataset-num-runs', '--dump-only-message-path',
    '-p', '--partition', '-q', '--quotatype', '--qos', '--aliyun-cfg', '--hf-type', '--hf-path',
    '--model-kwargs', '--tokenizer-path', '--tokenizer-kwargs', '--peft-path', '--peft-kwargs',
    '--generation-kwargs', '--max-seq-len', '--max-out-len', '--min-out-len', '--batch-size', '--num-gpus',
    '--hf-num-gpus', '--pad-token-id', '--stop-words', '--custom-dataset-path', '--custom-dataset-meta-path',
    '--custom-dataset-data-type', '--custom-dataset-infer-method',
}
DOCS = ROOT / 'docs' / 'from-opencompass.md'


def test_every_flag_of_opencompass_is_honoured_or_refused_once():
    honoured = [name for names in HONOURED for name in names]
    refused = [name for flag in REFUSED for name in flag.names]
    assert sorted(honoured + refused) == sorted(OPENCOMPASS_FLAGS)          # each once, none missing
    options = cli.make_parser()._option_string_actions                      # every spelling parses here
    assert [name for name in honoured + refused if name != 'config' and name not in options] == []


def _docs_table():
    text = DOCS.read_text()
    table = text[text.index("## Every flag of OpenCompass's run.py"):]
    rows = {}
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip().strip('|').split('|')]
        if len(cells) == 3 and cells[1] in ('honoured', 'refused'):
            rows[tuple(re.findall(r'`([^`]+)`', cells[0]))] = cells[1]
    return rows


def test_the_docs_table_lists_each_flag_as_it_is_treated():
    expected = {names: 'honoured' for names in HONOURED}
    expected.update({flag.names: 'refused' for flag in REFUSED})
    assert _docs_table() == expected


@pytest.mark.parametrize('flag', REFUSED, ids=lambda flag: flag.names[-1])
def test_a_refused_flag_stops_with_one_line_naming_it(flag, capsys):
    value = ['x'] if flag.takes_value else []
    code = cli.main([flag.names[0], *value, '--datasets', 'scicode_validation', '--models', 'reference'])
    shown = ' '.join(capsys.readouterr().err.split())
    assert code == 2 and shown == f'error: {flag.shown}: not supported here: {flag.why}'


def _config(argv):
    return config_from_args(cli.parse_args(argv))


def test_a_refusal_is_one_line_and_comes_before_anything_is_loaded():
    with pytest.raises(ConfigError) as err:
        _config(['configs/no_such_file.py', '--lark'])         # the flag is named, not the missing file
    assert '\n' not in str(err.value) and str(err.value).startswith('-l/--lark: not supported here')
    with pytest.raises(ConfigError, match='--dump-eval-details False: not supported here'):
        _config(['--datasets', 'scicode_gen', '--hf-path', 'org/m', '--dump-eval-details', 'False'])
    with pytest.raises(ConfigError, match='--dataset-num-runs applies to the datasets --datasets names'):
        _config(['configs/eval_scicode.py', '--dataset-num-runs', '2'])


def test_honoured_flags_keep_their_opencompass_meaning():
    cfg, _, notes = _config(['--datasets', 'scicode_validation', 'scicode_gen', '--hf-path', 'org/m',
                             '--dataset-num-runs', '4', '--min-out-len', '16', '--dump-eval-details',
                             '--dump-res-length', '--generation-kwargs', 'temperature=0.7'])
    assert [(d['abbr'], d['infer_cfg']['n'], d['eval_cfg']['pass_at_k']) for d in cfg['datasets']] == [
        ('scicode_validation', 4, [4]), ('scicode_validation_with_background', 4, [4]), ('SciCode', 4, [4])]
    (model,) = cfg['models']
    assert model['extra_body'] == {'min_tokens': 16} and model['temperature'] == 0.7
    # --max-out-len not given: 4096, and the note says so; given: that
    assert model['max_out_len'] == 4096 and any("the model's limit is 4096 tokens" in n for n in notes)
    cfg, _, notes = _config(['--datasets', 'scicode_gen', '--hf-path', 'org/m', '--max-out-len', '256'])
    assert cfg['models'][0]['max_out_len'] == 256 and not any('--max-out-len' in n for n in notes)


def test_config_verbose_prints_the_config_as_translated(official_data, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code = cli.main(['--datasets', 'scicode_gen', '--hf-path', 'org/m', '--config-verbose', '--dry-run',
                     '-w', str(official_data / 'never-written')])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("{'datasets': [{'abbr': 'SciCode',")
    assert "'split': 'test'" in out and "'mode': 'chat'" in out
    assert not (official_data / 'never-written').exists()


def test_partition_qos_and_retry_need_a_slurm_runner_and_reach_the_configs():
    local = {'datasets': [], 'models': []}
    with pytest.raises(ConfigError) as err:
        check_slurm_options(local, LaunchOptions(partition='gpu', retry=1))
    assert str(err.value) == ('-p/--partition and --retry: no Slurm runner in this run; add --slurm (or use a '
                              'SlurmRunner in the config)')
    with pytest.raises(ConfigError, match='--slurm needs -p PARTITION'):
        check_slurm_options(local, LaunchOptions(slurm=True))
    # a config whose inference runs on Slurm: -p and --qos reach that runner, as in OpenCompass
    on_slurm = dict(local, infer=dict(runner=dict(type=SlurmRunner, partition='cpu', qos='low')))
    options = LaunchOptions(partition='gpu', qos='high', run_mode='infer')
    check_slurm_options(on_slurm, options)
    _, runner = build_stage(on_slurm, 'infer', options)
    assert isinstance(runner, SlurmRunner) and (runner.partition, runner.qos) == ('gpu', 'high')
    _, runner = build_stage(local, 'eval', LaunchOptions())
    assert isinstance(runner, LocalRunner)
