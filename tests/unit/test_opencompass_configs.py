"""OpenCompass configs load as they are: `opencompass.*` names, OpenCompass's dataset, model and
summarizer shapes (adapters/opencompass/), on configs written in its shape (tests/fixtures)."""
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from helpers import ROOT
from opencompass_scicode.config import fill_abbrs, load_config, validate_config
from opencompass_scicode.adapters.opencompass.names import NAMES, OpenCompassName, resolve
from opencompass_scicode.errors import ConfigError
from opencompass_scicode.evaluation.metrics import score

OC = ROOT / 'tests' / 'fixtures' / 'opencompass' / 'configs'
MODEL = 'opencompass_scicode.models.OpenAIChatModel'
# The names the issue lists; each must mean something here.
LISTED = ['opencompass.datasets.SciCodeDataset', 'opencompass.datasets.SciCodeEvaluator',
          'opencompass.models.OpenAI', 'opencompass.models.OpenAISDK', 'opencompass.models.VLLM',
          'opencompass.models.VLLMwithChatTemplate', 'opencompass.models.HuggingFacewithChatTemplate',
          'opencompass.models.HuggingFaceCausalLM', 'opencompass.models.TurboMindModelwithChatTemplate',
          'opencompass.partitioners.NaivePartitioner', 'opencompass.partitioners.NumWorkerPartitioner',
          'opencompass.partitioners.SizePartitioner', 'opencompass.runners.LocalRunner',
          'opencompass.runners.SlurmRunner', 'opencompass.tasks.OpenICLInferTask',
          'opencompass.tasks.OpenICLEvalTask', 'opencompass.summarizers.DefaultSummarizer',
          'opencompass.openicl.icl_prompt_template.PromptTemplate',
          'opencompass.openicl.icl_retriever.ZeroRetriever',
          'opencompass.openicl.icl_inferencer.GenInferencer', 'opencompass.openicl.icl_inferencer.ChatInferencer']


def write(path, text):
    path.write_text(textwrap.dedent(text))
    return path


def top_config(tmp_path, body):
    """A user's config beside a copy of the fixtures (read_base imports are relative to it)."""
    import shutil
    shutil.copytree(OC, tmp_path / 'oc', dirs_exist_ok=True)
    return write(tmp_path / 'eval_oc.py', 'from mmengine.config import read_base\n' + textwrap.dedent(body))


# ------------------------------------------------------------------ the names
@pytest.mark.parametrize('name', LISTED)
def test_every_listed_name_resolves(name):
    found = resolve(name)
    assert isinstance(found, OpenCompassName) and found.short == name.rpartition('.')[2]
    assert found.kind


def test_names_resolve_from_the_modules_that_define_them_too():
    assert resolve('opencompass.models.openai_api.OpenAI') == 'opencompass.models.OpenAI'
    assert resolve('opencompass.openicl.icl_inferencer.icl_chat_inferencer.ChatInferencer').target == 'chat'
    assert resolve('opencompass.datasets.scicode.SciCodeDataset').target.endswith('SciCodeDataset')


def test_an_unknown_name_is_refused_naming_it_and_what_to_use():
    with pytest.raises(ConfigError) as err:
        resolve('opencompass.datasets.HumanevalDataset', location='/x/cfg.py, line 3', key='datasets[0].type')
    text = str(err.value)
    assert 'opencompass.datasets.HumanevalDataset' in text and '/x/cfg.py, line 3' in text
    assert 'SciCodeDataset' in err.value.fix and err.value.key == 'datasets[0].type'
    # a class of the table under the wrong package is no match either
    with pytest.raises(ConfigError, match='opencompass.models.SciCodeDataset'):
        resolve('opencompass.models.SciCodeDataset')


def test_the_table_names_only_existing_targets():
    from opencompass_scicode.registry import resolve_type
    for short, (package, target, kind) in NAMES.items():
        assert package.startswith('opencompass.') and kind
        if target and '.' in target:
            assert resolve_type(target).__name__ == target.rpartition('.')[2]


# ------------------------------------------------------------------ datasets
def test_opencompass_dataset_configs_load_and_validate_without_opencompass(tmp_path):
    path = top_config(tmp_path, '''
        with read_base():
            from .oc.datasets.scicode.scicode_gen import SciCode_datasets as without_bg
            from .oc.datasets.scicode.scicode_wbg_gen_085b98 import SciCode_datasets as with_bg
            from .oc.models.openai.gpt_4o_oc import models
        datasets = without_bg + with_bg
    ''')
    notes = []
    cfg = load_config(path, notes=notes)
    assert 'opencompass' not in sys.modules
    first, second = cfg['datasets']
    assert first['type'] == 'opencompass_scicode.datasets.SciCodeDataset'
    assert (first['abbr'], first['with_bg'], second['abbr'], second['with_bg']) == (
        'SciCode', False, 'SciCode_with_background', True)
    assert first['split'] == 'test'                  # no split: OpenCompass's data, the test split
    assert dict(first['infer_cfg']) == {'mode': 'chat', 'max_out_len': 4096}
    assert 'reader_cfg' not in first                 # input_columns / output_column carry nothing
    assert dict(first['eval_cfg']['evaluator']) == {'type': 'opencompass_scicode.evaluation.SciCodeEvaluator'}
    text = '\n'.join(notes)
    for said in ('split=\'test\'', '1800 s per step', '120 s', 'official SciCode templates', 'issue 1540',
                 "mode 'chat'", 'completion order', 'meta_template'):
        assert said in text, said
    validate_config(cfg, file=path)


def test_a_generation_inferencer_is_the_official_mode_and_carries_its_max_out_len(tmp_path):
    path = top_config(tmp_path, '''
        from opencompass.openicl.icl_inferencer import GenInferencer
        with read_base():
            from .oc.datasets.scicode.scicode_gen_085b98 import SciCode_datasets
        datasets = [dict(SciCode_datasets[0], split='validation',
                         infer_cfg=dict(SciCode_datasets[0]['infer_cfg'],
                                        inferencer=dict(type=GenInferencer, max_out_len=1024)))]
        models = [dict(type='ReferenceModel', abbr='reference')]
    ''')
    cfg = load_config(path)
    assert dict(cfg['datasets'][0]['infer_cfg']) == {'mode': 'naive', 'max_out_len': 1024}
    assert cfg['datasets'][0]['split'] == 'validation'     # a split the user gives stays


def test_an_evaluator_with_bg_that_contradicts_its_dataset_is_an_error(tmp_path):
    path = top_config(tmp_path, '''
        with read_base():
            from .oc.datasets.scicode.scicode_gen_085b98 import SciCode_datasets
        SciCode_datasets[0]['eval_cfg']['evaluator']['with_bg'] = True
        datasets = SciCode_datasets
        models = [dict(type='ReferenceModel')]
    ''')
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert err.value.key == 'datasets[0].eval_cfg.evaluator.with_bg'
    assert 'contradicts' in err.value.message and str(path) in str(err.value)


def test_chat_inferencer_other_than_every_and_other_retrievers_are_errors(tmp_path):
    path = top_config(tmp_path, '''
        with read_base():
            from .oc.datasets.scicode.scicode_gen_085b98 import SciCode_datasets
        SciCode_datasets[0]['infer_cfg']['inferencer']['infer_mode'] = 'last'
        datasets = SciCode_datasets
        models = [dict(type='ReferenceModel')]
    ''')
    with pytest.raises(ConfigError, match="infer_mode 'last'") as err:
        load_config(path)
    assert err.value.key == 'datasets[0].infer_cfg.inferencer.infer_mode'


def test_an_unknown_opencompass_import_stops_loading_naming_file_and_line(tmp_path):
    path = write(tmp_path / 'cfg.py', '''\
        from opencompass.datasets import SciCodeDataset
        from opencompass.datasets import MBPPDataset
        datasets = [dict(type=MBPPDataset)]
        models = []
    ''')
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert 'opencompass.datasets.MBPPDataset' in err.value.message
    assert err.value.line == 2 and str(err.value.file) == str(path)
    assert 'SciCodeDataset' in err.value.fix


def test_a_base_config_run_as_plain_python_imports_no_opencompass(tmp_path):
    base = write(tmp_path / 'base.py', 'work_dir = "outputs/x"\n')
    path = write(tmp_path / 'cfg.py', f'''\
        from opencompass.models import OpenAISDK
        import opencompass.partitioners as parts
        _base_ = [{str(base)!r}]
        models = [dict(type=OpenAISDK, path='m', key='K', openai_api_base='http://127.0.0.1:9/v1')]
        infer = dict(partitioner=dict(type=parts.NaivePartitioner))
        datasets = [dict(abbr='v', split='validation')]
    ''')
    cfg = load_config(path)
    (model,) = cfg['models']
    assert (model['type'], model['base_url'], model['key']) == (MODEL, 'http://127.0.0.1:9/v1', 'K')
    assert cfg['infer']['partitioner']['type'] == 'opencompass_scicode.partitioners.NaivePartitioner'
    assert cfg['work_dir'] == 'outputs/x'


def test_an_installed_opencompass_is_never_imported_and_its_config_files_are_read(tmp_path):
    """Where OpenCompass is installed, its classes would mean nothing here: they are not built. Its
    config files are read (here one that differs from OpenCompass's real one by its abbr)."""
    fake = tmp_path / 'site' / 'opencompass'
    for sub in ('', 'datasets', 'models', 'openicl', 'openicl/icl_inferencer', 'openicl/icl_prompt_template',
                'openicl/icl_retriever'):
        (fake / sub).mkdir(parents=True, exist_ok=True)
        write(fake / sub / '__init__.py', f'open({str(tmp_path / "imported")!r}, "a").write("x")\n')
    shutil.copytree(OC / 'datasets', fake / 'configs' / 'datasets')
    installed = fake / 'configs' / 'datasets' / 'scicode' / 'scicode_gen_085b98.py'
    installed.write_text(installed.read_text().replace("abbr='SciCode'", "abbr='SciCode_installed'"))
    top = write(tmp_path / 'top.py', '''\
        from mmengine.config import read_base
        with read_base():
            from opencompass.configs.datasets.scicode.scicode_gen import SciCode_datasets
            from opencompass.configs.datasets.scicode.scicode_gen_62c139 import SciCode_datasets as no_limit
    ''')
    (fake / 'configs' / 'datasets' / 'scicode' / 'scicode_gen_62c139.py').unlink()   # an older OpenCompass
    code = textwrap.dedent(f'''
        import opencompass        # importable: a real installation stands here
        import os, sys
        os.remove({str(tmp_path / "imported")!r})
        from opencompass_scicode.config import load_config, validate_config
        from opencompass_scicode.adapters.opencompass.named import config_roots, find_config
        cfg = load_config({str(OC / 'datasets' / 'scicode' / 'scicode_gen.py')!r})
        print(cfg['SciCode_datasets'][0]['type'])
        cfg = load_config({str(top)!r})
        print(cfg['SciCode_datasets'][0]['abbr'], cfg['no_limit'][0]['abbr'])
        print(find_config('scicode_gen_085b98', 'datasets', config_roots())[0])
        print(sorted(m for m in sys.modules if m.startswith('opencompass.')))
    ''')
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path / 'site'), str(ROOT)]))
    env.pop('OPENCOMPASS_CONFIGS', None)
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, env=env, timeout=120,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    # its file where it has one; the stand-in for a file it lacks
    assert proc.stdout.split('\n')[:4] == ['opencompass.datasets.SciCodeDataset', 'SciCode_installed SciCode',
                                           str(installed), '[]']
    assert not (tmp_path / 'imported').exists()


# ------------------------------------------------------------------ `opencompass.configs.*` imports
OC_NAMES = ('scicode_gen', 'scicode_gen_085b98', 'scicode_gen_62c139', 'scicode_wbg_gen_085b98')


@pytest.fixture
def no_opencompass(monkeypatch):
    """As a user without OpenCompass: no OPENCOMPASS_CONFIGS, no installed package."""
    monkeypatch.delenv('OPENCOMPASS_CONFIGS', raising=False)
    import opencompass_scicode.adapters.opencompass.opencompass_files as files
    monkeypatch.setattr(files, 'installed_configs', lambda: None)


@pytest.mark.parametrize('name', OC_NAMES)
def test_opencompass_configs_imports_load_without_opencompass_as_its_files_do(tmp_path, no_opencompass, name):
    """Each stand-in gives what the file in OpenCompass's shape gives, translated alike."""
    path = top_config(tmp_path, f'''
        with read_base():
            from opencompass.configs.datasets.scicode.{name} import SciCode_datasets as stood_in
            from .oc.datasets.scicode.{name} import SciCode_datasets as written
            from opencompass.configs.summarizers.scicode import summarizer
            from .oc.summarizers.scicode import summarizer as written_summarizer
            from opencompass.configs.summarizers.groups.scicode import scicode_summary_groups
        datasets = stood_in + written
        models = [dict(type='ReferenceModel', abbr='reference')]
    ''')
    notes = []
    cfg = load_config(path, notes=notes)
    assert 'opencompass' not in sys.modules
    stood_in, written = cfg['datasets']
    assert stood_in == written and cfg['stood_in'] == cfg['written']
    assert (stood_in['split'], stood_in['infer_cfg']['mode']) == ('test', 'chat')
    assert stood_in['abbr'] == ('SciCode_with_background' if 'wbg' in name else 'SciCode')
    assert stood_in['infer_cfg'].get('max_out_len') == (None if name.endswith('62c139') else 4096)
    assert cfg['summarizer'] == cfg['written_summarizer'] | {'type': cfg['summarizer']['type']}
    assert cfg['scicode_summary_groups'] == cfg['summarizer']['summary_groups']
    if name.endswith('62c139'):
        assert "the inferencer sets no max_out_len: each model's own applies" in '\n'.join(notes)


def test_a_file_reaching_opencompass_configs_through_a_relative_import_loads(tmp_path, no_opencompass):
    write(tmp_path / 'parts.py', '''\
        from mmengine.config import read_base
        with read_base():
            from opencompass.configs.datasets.scicode.scicode_wbg_gen_085b98 import SciCode_datasets
    ''')
    path = write(tmp_path / 'top.py', '''\
        from mmengine.config import read_base
        with read_base():
            from .parts import SciCode_datasets
        datasets = SciCode_datasets
        models = [dict(type='ReferenceModel', abbr='reference')]
    ''')
    (entry,) = load_config(path)['datasets']
    assert (entry['abbr'], entry['split'], entry['with_bg']) == ('SciCode_with_background', 'test', True)


def test_an_opencompass_model_config_is_read_from_opencompass_configs_or_refused_saying_how(
        tmp_path, no_opencompass, monkeypatch):
    path = write(tmp_path / 'eval_oc.py', '''\
        from mmengine.config import read_base
        with read_base():
            from opencompass.configs.datasets.scicode.scicode_gen import SciCode_datasets
            from opencompass.configs.models.openai.gpt_4o_oc import models
        datasets = SciCode_datasets
    ''')
    with pytest.raises(ConfigError) as err:           # no OpenCompass: the model file is nowhere
        load_config(path)
    assert (str(err.value.file), err.value.line) == (str(path), 4)
    assert 'opencompass.configs.models.openai.gpt_4o_oc: OpenCompass is not installed here' in err.value.message
    assert 'OPENCOMPASS_CONFIGS' in err.value.fix and 'from .gpt_4o_oc import' in err.value.fix
    monkeypatch.setenv('OPENCOMPASS_CONFIGS', str(OC))     # a checkout's configs: read as written
    (model,) = load_config(path)['models']
    assert (model['type'], model['abbr'], model['base_url']) == (MODEL, 'gpt-4o-oc', 'https://api.openai.com/v1')
    untranslatable = write(tmp_path / 'glm.py', '''\
        from mmengine.config import read_base
        with read_base():
            from opencompass.configs.models.chatglm.hf_chatglm3_6b import models
        datasets = []
    ''')
    with pytest.raises(ConfigError) as err:
        load_config(untranslatable)
    assert 'opencompass.models.HuggingFaceChatGLM3' in err.value.message
    assert str(err.value.file) == str(OC / 'models' / 'chatglm' / 'hf_chatglm3_6b.py') and err.value.line == 2
    monkeypatch.setenv('OPENCOMPASS_CONFIGS', str(tmp_path / 'nowhere'))
    with pytest.raises(ConfigError, match='OPENCOMPASS_CONFIGS=.*no such directory'):
        load_config(path)


# ------------------------------------------------------------------ models
def _models(tmp_path, body, backend=None):
    path = top_config(tmp_path, textwrap.dedent(body) + 'datasets = [dict(abbr="v", split="validation")]\n')
    notes = []
    cfg = load_config(path, backend=backend, notes=notes)
    return cfg['models'], '\n'.join(notes)


def test_openai_models_carry_their_settings(tmp_path):
    (model,), notes = _models(tmp_path, '''
        with read_base():
            from .oc.models.openai.gpt_4o_oc import models
    ''')
    assert dict(model) == {'type': MODEL, 'abbr': 'gpt-4o-oc', 'path': 'gpt-4o', 'key': 'ENV',
                           'base_url': 'https://api.openai.com/v1', 'query_per_second': 2,
                           'max_out_len': 2048, 'max_concurrency': 4, 'retries': 3, 'temperature': 0}
    assert "'meta_template': accepted, not used" in notes and "'max_seq_len': accepted, not used" in notes


def test_an_api_model_without_temperature_gets_the_official_zero_with_a_note(tmp_path):
    (model,), notes = _models(tmp_path, '''
        from opencompass.models import OpenAISDK
        models = [dict(type=OpenAISDK, path='o3', key='ENV', openai_api_base='http://127.0.0.1:8/v1/',
                       max_completion_tokens=8192, generation_kwargs=dict(reasoning_effort='high'))]
    ''')
    assert model['base_url'] == 'http://127.0.0.1:8/v1' and model['max_out_len'] == 8192
    assert 'temperature' not in model and dict(model['extra_body']) == {'reasoning_effort': 'high'}
    assert 'temperature not given: 0' in notes


def test_vllm_models_become_a_server_started_per_task(tmp_path):
    (model,), notes = _models(tmp_path, '''
        with read_base():
            from .oc.models.vllm.vllm_qwen2_5_coder_7b_instruct import models
    ''')
    assert model['server']['command'] == [
        'vllm', 'serve', 'Qwen/Qwen2.5-Coder-7B-Instruct', '--host', '127.0.0.1', '--port', '{port}',
        '--tensor-parallel-size', '2', '--max-model-len', '32768', '--trust-remote-code']
    assert (model['path'], model['key'], model['max_concurrency'], model['temperature']) == (
        'Qwen/Qwen2.5-Coder-7B-Instruct', 'EMPTY', 32, 0)
    assert dict(model['extra_body']) == {'top_p': 0.95} and dict(model['run_cfg']) == {'num_gpus': 2}
    assert 'served by vllm' in notes


@pytest.mark.parametrize('backend, head, flags', [
    (None, ['vllm', 'serve', 'Qwen/Qwen2.5-Coder-7B-Instruct'],
     ['--trust-remote-code', '--tensor-parallel-size', '1', '--max-model-len', '32768']),
    ('sglang', [sys.executable, '-m', 'sglang.launch_server', '--model-path', 'Qwen/Qwen2.5-Coder-7B-Instruct'],
     ['--trust-remote-code', '--tp-size', '1', '--context-length', '32768']),
    ('lmdeploy', ['lmdeploy', 'serve', 'api_server', 'Qwen/Qwen2.5-Coder-7B-Instruct'],
     ['--trust-remote-code', '--tp', '1', '--session-len', '32768']),
])
def test_huggingface_models_are_served_by_the_backend_named(tmp_path, backend, head, flags):
    (model,), notes = _models(tmp_path, '''
        with read_base():
            from .oc.models.hf.hf_qwen2_5_coder_7b_instruct import models
    ''', backend=backend)
    command = model['server']['command']
    assert command[:len(head)] == head and command[-len(flags):] == flags
    assert '{port}' in command and not any('device' in part for part in command)
    assert 'model_kwargs.device_map: not used' in notes
    assert dict(model['extra_body']) == {'stop': ['<|im_end|>']}


def test_a_model_entry_may_name_its_backend_and_llamacpp_flags_take_values(tmp_path):
    (model,), _ = _models(tmp_path, '''
        from opencompass.models import HuggingFacewithChatTemplate
        models = [dict(type=HuggingFacewithChatTemplate, path='/m/tiny.gguf', backend='llamacpp',
                       model_kwargs=dict(n_ctx=8192, logits_all=False, trust_remote_code=True))]
    ''', backend='vllm')
    assert model['server']['command'] == [
        sys.executable, '-m', 'llama_cpp.server', '--model', '/m/tiny.gguf', '--model_alias', '/m/tiny.gguf',
        '--host', '127.0.0.1', '--port', '{port}', '--n_ctx', '8192', '--logits_all', 'false']


def test_turbomind_engine_config_becomes_lmdeploy_flags_once(tmp_path):
    (model,), _ = _models(tmp_path, '''
        from opencompass.models import TurboMindModelwithChatTemplate
        models = [dict(type=TurboMindModelwithChatTemplate, abbr='t', path='Qwen/Q',
                       engine_config=dict(session_len=16384, max_batch_size=16, tp=1),
                       gen_config=dict(top_k=1, temperature=1e-6, max_new_tokens=2048),
                       max_seq_len=16384, batch_size=16, run_cfg=dict(num_gpus=1))]
    ''')
    command = model['server']['command']
    assert command.count('--tp') == 1 and command.count('--session-len') == 1
    assert command[command.index('--max-batch-size') + 1] == '16'
    assert (model['temperature'], model['max_out_len']) == (1e-6, 2048)
    assert dict(model['extra_body']) == {'top_k': 1}


def test_model_options_without_counterpart_and_base_models_are_errors(tmp_path):
    with pytest.raises(ConfigError) as err:
        _models(tmp_path, '''
            from opencompass.models import OpenAI
            models = [dict(type=OpenAI, path='gpt-4o', key='K', fancy=1)]
        ''')
    assert err.value.key == 'models[0].fancy' and 'max_concurrency' in err.value.fix
    with pytest.raises(ConfigError, match='base models') as err:
        _models(tmp_path, '''
            from opencompass.models import HuggingFaceBaseModel
            models = [dict(type=HuggingFaceBaseModel, path='gpt2')]
        ''')
    assert err.value.key == 'models[0].type'


def test_stage_entries_keep_what_carries_over(tmp_path):
    path = top_config(tmp_path, '''
        from opencompass.partitioners import NumWorkerPartitioner
        from opencompass.runners import SlurmRunner, LocalRunner
        from opencompass.tasks import OpenICLInferTask, OpenICLEvalTask
        models = [dict(type='ReferenceModel')]
        datasets = [dict(abbr='v', split='validation')]
        infer = dict(partitioner=dict(type=NumWorkerPartitioner, num_worker=4, min_task_size=16),
                     runner=dict(type=SlurmRunner, partition='gpu', quotatype='auto', retry=1,
                                 max_num_workers=8, task=dict(type=OpenICLInferTask)))
        eval = dict(runner=dict(type=LocalRunner, max_num_workers=2, task=dict(type=OpenICLEvalTask)))
    ''')
    notes = []
    cfg = load_config(path, notes=notes)
    assert dict(cfg['infer']['partitioner']) == {'type': 'opencompass_scicode.partitioners.NumWorkerPartitioner',
                                                 'num_worker': 4}
    assert dict(cfg['infer']['runner']) == {'type': 'opencompass_scicode.runners.SlurmRunner',
                                            'partition': 'gpu', 'retry': 1, 'max_num_workers': 8}
    assert dict(cfg['eval']['runner']) == {'type': 'opencompass_scicode.runners.LocalRunner', 'max_num_workers': 2}
    text = '\n'.join(notes)
    assert "'min_task_size': not used" in text and "'quotatype': not used" in text
    validate_config(cfg, file=path)


def test_our_own_configs_pass_unchanged():
    plain = load_config(ROOT / 'configs' / 'eval_scicode.py')
    notes = []
    again = load_config(ROOT / 'configs' / 'eval_scicode.py', notes=notes)
    assert notes == [] and plain.to_dict() == again.to_dict()
    assert again['datasets'][0]['infer_cfg']['mode'] == 'naive'


# ------------------------------------------------------------------ summarizer and results
def test_an_opencompass_summarizer_config_becomes_ours_with_its_rows(tmp_path):
    path = top_config(tmp_path, '''
        with read_base():
            from .oc.summarizers.scicode import summarizer
        models = [dict(type='ReferenceModel', abbr='reference')]
        datasets = [dict(abbr='SciCode_with_background', split='validation', with_bg=True)]
    ''')
    cfg = load_config(path)
    assert cfg['summarizer']['type'] == 'opencompass_scicode.summarizers.SciCodeSummarizer'
    assert [list(x) for x in cfg['summarizer']['dataset_abbrs']][0] == ['SciCode_with_background', 'accuracy']
    assert [g['name'] for g in cfg['summarizer']['summary_groups']] == [
        'SciCode', 'SciCode_with_background', 'SciCode_wo_background']
    validate_config(cfg, file=path)


def test_results_carry_opencompass_metric_names():
    from opencompass_scicode.datasets.scicode import Problem, Step
    from opencompass_scicode.results import StepRecord
    problems = [Problem(problem_id=pid, name='', dependencies='', steps=tuple(
        Step(step_id=f'{pid}.{i}', index=i, description='', background='', function_header='def f():',
             return_line='', test_cases=('pass',)) for i in range(1, n + 1))) for pid, n in (('1', 2), ('2', 1))]
    records = {('1.1', 0): StepRecord('1.1', 'pass'), ('1.2', 0): StepRecord('1.2', 'fail'),
               ('2.1', 0): StepRecord('2.1', 'pass')}
    out = score(problems, records)
    assert (out['accuracy'], out['sub_accuracy']) == (out['main_problem_resolve_rate'], out['subproblem'])
    assert round(out['accuracy'], 2) == 50.0 and round(out['sub_accuracy'], 2) == 66.67


def test_fill_abbrs_names_opencompass_models_as_they_are_named(tmp_path):
    (model,), _ = _models(tmp_path, '''
        from opencompass.models import VLLMwithChatTemplate
        models = [dict(type=VLLMwithChatTemplate, path='Qwen/Qwen2.5-7B-Instruct')]
    ''')
    cfg = fill_abbrs({'models': [dict(model)], 'datasets': [dict(abbr='v')]})
    assert cfg['models'][0]['abbr'] == 'Qwen2.5-7B-Instruct'
