"""OpenCompass's command line (`--datasets/--models/--summarizer NAME`, `--hf-path ...`) and its
summary table, on configs in OpenCompass's shape (tests/fixtures/opencompass)."""
import textwrap

import pytest

from helpers import DATA, ROOT, run_cli
from opencompass_scicode.config.from_opencompass.named import config_roots, find_config
from opencompass_scicode.errors import ConfigError
from opencompass_scicode.summarizers.opencompass_table import check_shape, opencompass_table

OC = ROOT / 'tests' / 'fixtures' / 'opencompass' / 'configs'
# The command of OpenCompass's SciCode guide, word for word after `python run.py`.
GUIDE = ['--datasets', 'scicode_gen', '--hf-num-gpus', '1', '--hf-type', 'chat', '--hf-path',
         'meta-llama/Meta-Llama-3-8B-Instruct', '--debug', '--model-kwargs', "device_map='auto'",
         'trust_remote_code=True', '--batch-size', '1']


# ------------------------------------------------------------------ finding configs by name
def test_names_are_found_in_cwd_configs_then_shipped_then_config_dir(tmp_path, monkeypatch):
    mine = tmp_path / 'configs' / 'models' / 'deep' / 'reference.py'
    mine.parent.mkdir(parents=True)
    mine.write_text('models = []\n')
    monkeypatch.chdir(tmp_path)
    roots = config_roots(OC)
    assert roots[0] == tmp_path / 'configs' and roots[-1] == OC
    path, hidden = find_config('reference', 'models', roots)
    assert path == mine and hidden == [ROOT / 'configs' / 'models' / 'reference.py']
    path, hidden = find_config('scicode_wbg_gen_085b98', 'datasets', roots)      # only under --config-dir
    assert path == OC / 'datasets' / 'scicode' / 'scicode_wbg_gen_085b98.py' and hidden == []


def test_a_missing_or_ambiguous_name_lists_the_candidates(tmp_path, monkeypatch):
    for sub in ('a', 'b'):
        (tmp_path / 'configs' / 'datasets' / sub).mkdir(parents=True)
        (tmp_path / 'configs' / 'datasets' / sub / 'twin.py').write_text('x_datasets = []\n')
    monkeypatch.chdir(tmp_path)
    roots = config_roots()
    with pytest.raises(ConfigError, match='2 files of that name') as err:
        find_config('twin', 'datasets', roots)
    assert 'a/twin.py' in str(err.value) and 'b/twin.py' in str(err.value)
    with pytest.raises(ConfigError, match='no scicode_gn.py') as err:
        find_config('scicode_gn', 'datasets', roots)
    assert 'did you mean scicode_gen' in err.value.fix
    with pytest.raises(ConfigError, match='no such directory'):
        config_roots(tmp_path / 'nowhere')


# ------------------------------------------------------------------ the guide's command
def _dry(args, official_data, tmp_path):
    proc = run_cli([*args, '--dry-run', '-w', tmp_path / 'w'])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_the_guides_command_plans_one_gpu_model_and_its_server(official_data, tmp_path):
    proc = _dry(GUIDE, official_data, tmp_path)
    out = proc.stdout
    assert 'infer/Meta-Llama-3-8B-Instruct_hf' in out and 'gpus=1' in out
    (server,) = [line for line in out.splitlines() if 'its inference task starts' in line]
    assert server.split('starts ', 1)[1] == ("vllm serve meta-llama/Meta-Llama-3-8B-Instruct --host 127.0.0.1 "
                                             "--port '{port}' --trust-remote-code --tensor-parallel-size 1")
    assert 'device_map: not used by the vllm server' in proc.stderr
    assert 'OpenCompass\'s command line defaults to 256' in proc.stderr
    assert 'scicode_validation_with_background' in out          # our scicode_gen: both settings


def test_the_guides_command_on_slurm_asks_one_gpu(official_data, tmp_path):
    proc = _dry([*GUIDE, '--slurm', '-p', 'debug'], official_data, tmp_path)
    (infer,) = [line for line in proc.stdout.splitlines() if line.startswith('infer/') and 'sbatch' in line]
    assert '--gres=gpu:1' in infer and '--partition=debug' in infer
    assert not [line for line in proc.stdout.splitlines() if line.startswith('eval/') and '--gres' in line]


def test_named_configs_and_flags_build_the_model(official_data, tmp_path):
    proc = _dry(['--config-dir', OC, '--datasets', 'scicode_gen', '--models', 'hf_qwen2_5_coder_7b_instruct',
                 '--hf-backend', 'sglang', '--summarizer', 'scicode'], official_data, tmp_path)
    (server,) = [line for line in proc.stdout.splitlines() if 'its inference task starts' in line]
    assert '-m sglang.launch_server --model-path Qwen/Qwen2.5-Coder-7B-Instruct' in server
    # ./configs comes first: our scicode_gen hides the one under --config-dir, and a note says so
    assert 'also found (searched later)' in proc.stderr and 'scicode_validation' in proc.stdout


def test_a_config_file_keeps_what_the_flags_do_not_replace(official_data, tmp_path):
    proc = _dry(['configs/eval_scicode.py', '--hf-path', 'org/Model-7B', '--max-out-len', '1024',
                 '--hf-num-gpus', '2', '--generation-kwargs', 'temperature=0.2', 'top_p=0.9'], official_data, tmp_path)
    assert 'infer/Model-7B_hf' in proc.stdout and 'infer/reference' not in proc.stdout
    assert 'gpus=2' in proc.stdout and '--tensor-parallel-size 2' in proc.stdout
    assert 'its models replaced by the command line' in proc.stderr
    assert '256' not in proc.stderr            # --max-out-len given: no note about OpenCompass's default


# ------------------------------------------------------------------ bad input: exit 2, before any request
@pytest.fixture
def loopback():
    from openai_server import FakeOpenAI
    with FakeOpenAI(key='sk-test') as server:
        yield server


def _refused(proc, *said):
    assert proc.returncode == 2, proc.stdout + proc.stderr
    shown = ' '.join(proc.stderr.split())            # the terminal's line breaks aside
    for text in said:
        assert text in shown, proc.stderr


def test_bad_input_is_refused_with_the_fix_before_any_request(tmp_path, loopback):
    model = textwrap.dedent(f'''
        from opencompass.models import OpenAISDK
        models = [dict(type=OpenAISDK, abbr='api', path='m', key='sk-test', openai_api_base={loopback.base_url!r})]
    ''')
    unknown = tmp_path / 'unknown.py'
    unknown.write_text(model + textwrap.dedent('''
        from opencompass.datasets import HumanevalDataset
        datasets = [dict(type=HumanevalDataset, abbr='h', path='data/humaneval')]
    '''))
    _refused(run_cli([unknown, '-w', tmp_path / 'w']), 'opencompass.datasets.HumanevalDataset', 'line 5',
             'fix: use this package evaluates SciCode only')
    contradicting = tmp_path / 'contradicting.py'
    contradicting.write_text(model + textwrap.dedent(f'''
        from opencompass.datasets import SciCodeDataset, SciCodeEvaluator
        datasets = [dict(type=SciCodeDataset, abbr='s', path={str(DATA)!r}, with_bg=True,
                         split='validation', eval_cfg=dict(evaluator=dict(type=SciCodeEvaluator, with_bg=False)))]
    '''))
    _refused(run_cli([contradicting, '-w', tmp_path / 'w']), 'datasets[0].eval_cfg.evaluator.with_bg',
             "contradicts the dataset's with_bg=True")
    _refused(run_cli(['--datasets', 'scicode_gn', '--models', 'reference', '-w', tmp_path / 'w']),
             '--datasets scicode_gn', 'did you mean scicode_gen')
    _refused(run_cli(['--datasets', 'scicode_gen', '-w', tmp_path / 'w']), 'no models', '--hf-path')
    _refused(run_cli(['--datasets', 'scicode_gen', '--hf-path', 'gpt2', '--hf-type', 'base', '-w', tmp_path / 'w']),
             'base models')
    _refused(run_cli(['--datasets', 'scicode_gen', '--models', 'reference', '--model-kwargs', 'a=1']),
             '--model-kwargs without --hf-path')
    assert loopback.log == []
    assert not (tmp_path / 'w').exists()


# ------------------------------------------------------------------ the OpenCompass-style table
def _results(main, sub):
    from opencompass_scicode.results.schema import ResultsFile
    return ResultsFile(model='m', dataset='d', main_problem_resolve_rate=main, subproblem=sub, accuracy=main,
                       sub_accuracy=sub, main_problem_resolved=0, main_problem_total=0, subproblem_correct=0,
                       subproblem_total=50)


def test_the_table_follows_dataset_abbrs_and_averages_groups():
    models = [{'abbr': 'a'}, {'abbr': 'b'}]
    datasets = [{'abbr': 'SciCode', 'infer_cfg': {'mode': 'chat'}},
                {'abbr': 'SciCode_with_background', 'infer_cfg': {'mode': 'chat'}}]
    collected = {('a', 'SciCode'): _results(20.0, 40.0), ('a', 'SciCode_with_background'): _results(30.0, 50.0),
                 ('b', 'SciCode'): _results(10.0, 30.0), ('b', 'SciCode_with_background'): 'failed'}
    groups = [{'name': 'SciCode', 'subsets': [['SciCode', 'accuracy'], ['SciCode', 'sub_accuracy']]},
              {'name': 'both', 'subsets': ['SciCode', 'SciCode_with_background']},
              {'name': 'weighted', 'subsets': [['SciCode', 'accuracy'], ['SciCode_with_background', 'accuracy']],
               'weights': {'SciCode': 3, 'SciCode_with_background': 1}}]
    abbrs = [['SciCode_with_background', 'accuracy'], 'SciCode', ['SciCode_wo_background', 'accuracy'],
             ['SciCode', 'naive_average'], ['both', 'sub_accuracy'], ['weighted', 'weighted_average']]
    header, rows = opencompass_table(models, datasets, collected, abbrs, groups)
    assert header == ['dataset', 'metric', 'mode', 'a', 'b']
    assert rows == [
        ['SciCode_with_background', 'accuracy', 'chat', '30.00', 'failed'],
        ['SciCode', 'accuracy', 'chat', '20.00', '10.00'],
        ['SciCode_wo_background', '-', '-', '-', '-'],        # no such dataset: '-', as OpenCompass shows it
        ['SciCode', 'naive_average', 'chat', '30.00', '20.00'],   # a group may share its dataset's name
        ['both', 'sub_accuracy', 'chat', '45.00', '-'],       # b misses a subset
        ['weighted', 'weighted_average', 'chat', '22.50', '-'],
    ]


def test_without_dataset_abbrs_every_dataset_and_group_is_listed():
    header, rows = opencompass_table([{'abbr': 'a'}], [{'abbr': 'S'}], {('a', 'S'): _results(10.0, 20.0)},
                                     None, [{'name': 'g', 'subsets': [['S', 'accuracy'], ['S', 'sub_accuracy']],
                                             'metric': 'mean'}])
    assert rows == [['S', 'accuracy', 'naive', '10.00'], ['S', 'sub_accuracy', 'naive', '20.00'],
                    ['g', 'mean', 'naive', '15.00']]


@pytest.mark.parametrize('abbrs, groups, key', [
    ([['a', 'b', 'c']], [], 'dataset_abbrs[0]'),
    ('SciCode', [], 'dataset_abbrs'),
    (None, [{'name': 'g'}], 'summary_groups[0]'),
    (None, [{'name': 'g', 'subsets': ['x', ['y', 'accuracy']]}], 'summary_groups[0].subsets'),
    (None, [{'name': 'g', 'subsets': ['x'], 'transforms': {'x': 'x * 2'}}], 'summary_groups[0].transforms'),
])
def test_summarizer_settings_outside_opencompass_shape_are_refused(abbrs, groups, key):
    with pytest.raises(ConfigError) as err:
        check_shape(abbrs, groups)
    assert err.value.key == key
