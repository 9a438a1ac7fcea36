"""Every prompt of split `all` (80 problems, 338 steps), both settings, both prefilled modes,
byte-identical to the official generator's on the same answers.

Our side is a real `run.py -m infer` against the loopback OpenAI server; the server answers each
prompt with one of several shapes of response (python fence, generic fence, `Python` fence, no
fence, two blocks, import lines inside) chosen by the prompt's hash, so that the chain of earlier
code, extraction and import stripping all reach the later prompts. The reference is the official
generator from the nvidia-scicode wheel (tests/official_generator.py), fed our answers.
"""
import hashlib
import json
import subprocess
import sys
import textwrap

import pytest

from helpers import DATA, ROOT, only_run, predictions, run_cli

pytestmark = pytest.mark.slow


def answer_for(prompt):
    tag = hashlib.sha256(prompt.encode()).hexdigest()[:8]
    shapes = [
        f'Here it is.\n```python\nimport numpy as np\nfrom scipy import linalg\ndef f_{tag}(x):\n'
        f'    import math\n    return math.sqrt(x)\n```\nDone.',
        f'```\ndef g_{tag}():\n    return 1\n```',
        f'def h_{tag}():\n    return 2\n',
        f'First:\n```python\ndef a_{tag}():\n    return 3\n```\nthen\n```python\ndef b_{tag}():\n    pass\n```',
        f'```Python\ndef c_{tag}():\n    return 4\n```',
    ]
    return shapes[int(tag, 16) % len(shapes)]


def test_every_prompt_of_split_all_is_the_official_generators(tmp_path, official_data, official_wheel):
    from openai_server import FakeOpenAI
    with FakeOpenAI([]) as server:
        server.rule = lambda body: {'content': answer_for(body['messages'][-1]['content'])}
        cfg = tmp_path / 'cfg.py'
        cfg.write_text(textwrap.dedent(f'''
            from opencompass_scicode.datasets import SciCodeDataset
            from opencompass_scicode.evaluation import SciCodeEvaluator
            from opencompass_scicode.models import OpenAIChatModel
            models = [dict(type=OpenAIChatModel, abbr='api', path='test-model', base_url={server.base_url!r},
                           key='sk-test', retries=1, timeout=30)]
            datasets = [dict(abbr=f'all_{{mode}}' + sfx, type=SciCodeDataset, path={str(DATA)!r}, split='all',
                             with_bg=bg, eval_cfg=dict(evaluator=dict(type=SciCodeEvaluator, prefilled_mode=mode)))
                        for mode in ('official', 'full') for bg, sfx in ((False, ''), (True, '_bg'))]
        '''))
        work = tmp_path / 'w'
        proc = run_cli([cfg, '-w', work, '-m', 'infer'])
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        assert len(server.log) == 4 * 338
    run_dir = only_run(work)
    for mode in ('official', 'full'):
        ours, answers = {}, {}
        for setting, sfx in (('without_bg', ''), ('with_bg', '_bg')):
            records = predictions(run_dir, 'api', f'all_{mode}{sfx}')
            ours[setting] = {r['step_id']: r['prompt'] for r in records}
            answers[setting] = {r['step_id']: r['response'] for r in records}
        (tmp_path / f'answers_{mode}.json').write_text(json.dumps(answers))
        out = tmp_path / f'official_{mode}.json'
        gen = subprocess.run([sys.executable, str(ROOT / 'tests' / 'official_generator.py'), str(official_wheel),
                              str(tmp_path / f'answers_{mode}.json'), str(out),
                              *(['--full-prefilled'] if mode == 'full' else [])],
                             capture_output=True, text=True, timeout=300)
        assert gen.returncode == 0, gen.stderr[-3000:]
        official = json.loads(out.read_text())
        for setting in ('without_bg', 'with_bg'):
            assert len(official[setting]) == len(ours[setting]) == 338
            differ = [sid for sid in official[setting] if official[setting][sid] != ours[setting].get(sid)]
            assert differ == [], (mode, setting, differ[:5])
    # the chain past the prefilled steps is where the two modes differ (and they do differ)
    by_mode = {mode: json.loads((tmp_path / f'official_{mode}.json').read_text())['without_bg']
               for mode in ('official', 'full')}
    for sid in ('13.7', '62.2', '76.4'):
        assert by_mode['official'][sid] != by_mode['full'][sid], sid
    assert 'class Maxwell' in by_mode['full']['13.7'] and 'class Maxwell' not in by_mode['official']['13.7']
