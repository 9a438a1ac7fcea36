"""OpenCompass's command line (`--datasets/--models/--summarizer NAME`, `--hf-path ...`) and its
summary table, on configs in OpenCompass's shape (tests/fixtures/opencompass)."""
import shutil
import textwrap
import time

import pytest

from helpers import DATA, ROOT, run_cli
from opencompass_scicode.adapters.opencompass.named import config_roots, find_config, shipped_configs
from opencompass_scicode.adapters.opencompass.opencompass_settings import NAMED
from opencompass_scicode.errors import ConfigError
from opencompass_scicode.summarizers.opencompass_table import check_shape, opencompass_table

OC = ROOT / 'tests' / 'fixtures' / 'opencompass' / 'configs'
SHIPPED = shipped_configs()
# The command of OpenCompass's SciCode guide, word for word after `python run.py`.
GUIDE = ['--datasets', 'scicode_gen', '--hf-num-gpus', '1', '--hf-type', 'chat', '--hf-path',
         'meta-llama/Meta-Llama-3-8B-Instruct', '--debug', '--model-kwargs', "device_map='auto'",
         'trust_remote_code=True', '--batch-size', '1']


# ------------------------------------------------------------------ finding configs by name
def test_names_are_found_in_config_dir_then_opencompass_then_shipped(tmp_path, monkeypatch):
    monkeypatch.delenv('OPENCOMPASS_CONFIGS', raising=False)
    mine = tmp_path / 'configs' / 'models' / 'deep' / 'reference.py'
    mine.parent.mkdir(parents=True)
    mine.write_text('models = []\n')
    monkeypatch.chdir(tmp_path)
    assert config_roots() == [tmp_path / 'configs', SHIPPED]            # --config-dir's default: ./configs
    found, hidden = find_config('reference', 'models', config_roots())
    assert found.path == mine and [h.path for h in hidden] == [SHIPPED / 'models' / 'reference.py']
    # --config-dir replaces ./configs, as in OpenCompass
    assert config_roots(OC) == [OC, SHIPPED]
    found, hidden = find_config('scicode_wbg_gen_085b98', 'datasets', config_roots(OC))
    assert found.path == OC / 'datasets' / 'scicode' / 'scicode_wbg_gen_085b98.py'
    assert [h.stand_in is not None for h in hidden] == [True]           # OpenCompass's, as stood in for
    # OpenCompass's own configs (OPENCOMPASS_CONFIGS, or an installed OpenCompass's) come after --config-dir
    monkeypatch.setenv('OPENCOMPASS_CONFIGS', str(OC))
    assert config_roots() == [tmp_path / 'configs', OC, SHIPPED]
    found, _ = find_config('scicode_gen', 'datasets', config_roots())
    assert found.path == OC / 'datasets' / 'scicode' / 'scicode_gen.py'


def test_opencompass_names_mean_opencompass_configs_and_ours_never_clash(tmp_path, monkeypatch):
    monkeypatch.delenv('OPENCOMPASS_CONFIGS', raising=False)
    monkeypatch.chdir(tmp_path)
    for name in ('scicode_gen', 'scicode_gen_085b98', 'scicode_gen_62c139', 'scicode_wbg_gen_085b98'):
        found, hidden = find_config(name, 'datasets', config_roots())
        assert found.path is None and hidden == []
        (entry,) = found.stand_in['SciCode_datasets']
        assert 'split' not in entry and entry['abbr'] in ('SciCode', 'SciCode_with_background')
    found, _ = find_config('scicode', 'summarizers', config_roots())
    assert found.stand_in['summarizer']['dataset_abbrs'][0] == ['SciCode_with_background', 'accuracy']
    # this package's own configs: no name of OpenCompass's, none in its naming scheme (NAME_gen_HASH)
    ours = {p.stem for p in SHIPPED.rglob('*.py')}
    assert ours and not ours & (set(NAMED['datasets']) | set(NAMED['summarizers']))
    assert not [stem for stem in ours if '_gen' in stem or '_ppl' in stem]
    found, _ = find_config('scicode_validation', 'datasets', config_roots())
    assert found.path == SHIPPED / 'datasets' / 'scicode' / 'scicode_validation.py'


def test_a_missing_name_lists_the_candidates_and_of_several_the_first_is_used(tmp_path, monkeypatch):
    for sub in ('b', 'a', 'a/deeper'):
        (tmp_path / 'configs' / 'datasets' / sub).mkdir(parents=True, exist_ok=True)
        (tmp_path / 'configs' / 'datasets' / sub / 'twin.py').write_text('x_datasets = []\n')
    monkeypatch.chdir(tmp_path)
    roots = config_roots()
    found, hidden = find_config('twin', 'datasets', roots)      # as OpenCompass: the first, the others noted
    folder = tmp_path / 'configs' / 'datasets'
    assert found.path == folder / 'a' / 'twin.py'
    assert [h.path for h in hidden] == [folder / 'b' / 'twin.py', folder / 'a' / 'deeper' / 'twin.py']
    with pytest.raises(ConfigError, match='no scicode_gn.py') as err:
        find_config('scicode_gn', 'datasets', roots)
    assert 'did you mean scicode_gen' in err.value.fix
    with pytest.raises(ConfigError, match='no such directory'):
        config_roots(tmp_path / 'nowhere')


def test_a_name_may_be_the_path_of_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    path = 'configs/summarizers/scicode_summary.py'
    found, hidden = find_config(path, 'summarizers', config_roots())
    assert found.path == ROOT / path and hidden == []
    with pytest.raises(ConfigError, match='--summarizer configs/summarizers/nothing.py: no such file'):
        find_config('configs/summarizers/nothing.py', 'summarizers', config_roots())


# ------------------------------------------------------------------ the guide's command
def _dry(args, official_data, tmp_path):
    proc = run_cli([*args, '--dry-run', '-w', tmp_path / 'w'])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def _as_a_new_user(args, tmp_path, official_wheel, timeout=120):
    """`python run.py ARGS` in an empty directory: no configs, no data, no API key, no OpenCompass
    (the data files come from the wheel a user may stage, SCICODE_WHEEL, rather than the network)."""
    empty = tmp_path / 'empty'
    empty.mkdir()
    env = {'SCICODE_WHEEL': str(official_wheel), 'OPENAI_API_KEY': None, 'OPENCOMPASS_CONFIGS': None}
    return run_cli(args, cwd=empty, env=env, timeout=timeout), empty


def test_the_guides_dry_run_plans_opencompass_test_split_and_writes_nothing(official_wheel, tmp_path):
    proc, empty = _as_a_new_user([*GUIDE, '--dry-run'], tmp_path, official_wheel)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(empty.iterdir()) == []                  # no data/, no outputs/: a dry run writes nothing here
    rows = [line.split() for line in proc.stdout.splitlines()
            if line.startswith(('infer/', 'eval/')) and not line.split()[0].endswith(':')]   # the table's
    # OpenCompass's scicode_gen: the test split without background, abbr SciCode; no validation dataset
    assert [row[:4] for row in rows] == [['infer/Meta-Llama-3-8B-Instruct_hf', 'SciCode', '-', '65'],
                                         ['eval/Meta-Llama-3-8B-Instruct_hf/SciCode', 'SciCode', '-', '65']]
    assert [row[row.index('...)') + 1] for row in rows] == ['288', '288'] and 'gpus=1' in rows[0]
    assert 'validation' not in proc.stdout
    out = proc.stdout.splitlines()
    (server,) = [line for line in out if 'its inference task starts' in line]
    assert server.split('starts ', 1)[1] == ("vllm serve meta-llama/Meta-Llama-3-8B-Instruct --host 127.0.0.1 "
                                             "--port '{port}' --trust-remote-code --tensor-parallel-size 1")
    # what a run would fetch first: the data files, then the test targets
    assert "dataset 'SciCode': data files missing in data/scicode/" in out[1]
    assert any(line.startswith("dataset 'SciCode': targets missing in data/scicode/") for line in out)
    # the token limit the note states is the one the requests carry: the dataset's 4096
    assert 'Meta-Llama-3-8B-Instruct_hf on SciCode: max_tokens 4096 (the dataset\'s max_out_len)' in out
    notes = ' '.join(proc.stderr.split())
    for said in ("split='test'", "mode 'chat'", 'completion order', 'official SciCode templates',
                 "--max-out-len not given: the model's limit is 4096", 'device_map: not used by the vllm server'):
        assert said in notes, said
    if shutil.which('vllm') is None:            # where it is missing, a run would stop: the dry run says so
        assert 'vllm is not installed here: a run would stop here (pip install vllm' in notes


def test_a_dry_run_needs_no_key_and_offline_lists_what_it_would_fetch(official_wheel, tmp_path):
    config = tmp_path / 'configs' / 'models' / 'gpt_4o_oc.py'
    config.parent.mkdir(parents=True)
    shutil.copy(OC / 'models' / 'openai' / 'gpt_4o_oc.py', config)
    args = ['--config-dir', tmp_path / 'configs', '--datasets', 'scicode_gen', '--models', 'gpt_4o_oc', '--dry-run']
    proc, empty = _as_a_new_user(args, tmp_path, official_wheel)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no API key for model 'gpt-4o-oc': $OPENAI_API_KEY is not set: a run would stop here" in ' '.join(
        proc.stderr.split())
    assert 'eval/gpt-4o-oc/SciCode' in proc.stdout and list(empty.iterdir()) == []
    # offline, without the data files: what a run would fetch, no tasks, nothing written
    offline = run_cli(args, cwd=empty, env={'SCICODE_OFFLINE': '1', 'OPENAI_API_KEY': None,
                                            'OPENCOMPASS_CONFIGS': None}, timeout=120)
    assert offline.returncode == 0, offline.stdout + offline.stderr
    out = offline.stdout
    assert "dataset 'SciCode': data files missing in data/scicode/" in out and 'nvidia-scicode==26.3' in out
    assert "tasks: listed once the problems of 'SciCode' are in place" in out and 'infer/' not in out
    assert list(empty.iterdir()) == []


def test_the_guides_command_without_vllm_stops_at_once_naming_it(official_wheel, tmp_path):
    """Before any data, targets or request: exit 2 within seconds, saying what to install."""
    bin_dir = tmp_path / 'bin'                  # a PATH without vllm, wherever this runs
    bin_dir.mkdir()
    started = time.monotonic()
    proc, empty = _as_a_new_user(GUIDE, tmp_path, official_wheel)
    with_path = run_cli(GUIDE, cwd=empty, env={'PATH': str(bin_dir), 'SCICODE_WHEEL': str(official_wheel)},
                        timeout=60)
    elapsed = time.monotonic() - started
    for run in (proc, with_path) if shutil.which('vllm') is None else (with_path,):
        assert run.returncode == 2, run.stdout + run.stderr
        shown = ' '.join(run.stderr.split())
        assert "model 'Meta-Llama-3-8B-Instruct_hf' is served by `vllm serve" in shown
        assert 'vllm is not installed here' in shown and 'fix: pip install vllm' in shown
    assert elapsed < 20                         # both runs: each well within 10 s
    assert list(empty.iterdir()) == []          # nothing fetched, nothing regenerated, no run directory


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
    # --config-dir comes first: its scicode_gen (OpenCompass's file) hides the stand-in, and a note says so
    notes = ' '.join(proc.stderr.split())
    assert (f"scicode_gen: {OC / 'datasets' / 'scicode' / 'scicode_gen.py'} is used; also found (not used): "
            f"OpenCompass's scicode_gen (as this package stands in for it)") in notes
    # of two scicode.py under summarizers/, the first (OpenCompass's summarizer; groups/ holds its groups)
    assert (f"scicode: {OC / 'summarizers' / 'scicode.py'} is used; also found (not used): "
            f"{OC / 'summarizers' / 'groups' / 'scicode.py'}") in notes
    assert 'infer/qwen2.5-coder-7b-instruct-hf SciCode' in ' '.join(proc.stdout.split())


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
