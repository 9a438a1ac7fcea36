"""Every protocol this package reproduces, as plain data: the value of each knob (knobs.py), where
that value was read (repository, commit, file: what it says), and what of the harness is not
reproduced here.

'official' is this package's default and its behaviour before protocols had names; every other
protocol is the official one with the knobs its harness sets differently. A value read nowhere
is marked as ours in its source. The docs page docs/protocols.md shows the table side by side,
with the command that reproduces each protocol.
"""

# Repositories read, at the commits cited below.
SCICODE = 'scicode-bench/SciCode@588b406'
OPENCOMPASS = 'open-compass/opencompass@a5acc4b'
INSPECT_EVALS = 'UKGovernmentBEIS/inspect_evals@590c4de (its fork pro-wh/inspect_evals, same commit)'
NEMO_SKILLS = 'NVIDIA/NeMo-Skills@0b012df'
VERIFIED = 'xantheocracy/scicode-verified@4c3ee08'
VERIFIED_DOCKER = 'xantheocracy/scicode-verified@7782468'
AGENTCOMPASS_PAGE = 'AgentCompass\'s SciCode page (its code was not available to read; docs/from-agentcompass.md)'

OURS = 'ours: the harness sets no such limit'

# The official values, which the others start from.
OFFICIAL = {
    'split': '*', 'targets': 'official', 'with_bg': '*', 'prefilled_mode': 'official', 'mode': 'naive',
    'max_out_len': None, 'temperature': 0.0, 'n': 1, 'tool_use_max_loops': 15, 'code_timeout_seconds': 180,
    'extraction': 'official', 'prefilled_steps': 'skipped', 'timeout': 1800, 'memory_limit_mb': 8192,
    'simps_shim': True, 'environments': ('current',), 'environment_rule': 'any',
}
OFFICIAL_SOURCES = {
    'split': f'{SCICODE} eval/scripts/gencode.py, test_generated_code.py: --split validation|test, both reported',
    'targets': f'{SCICODE} src/scicode/parse/parse.py: H5PY_FILE, the official test_data.h5',
    'with_bg': f'{SCICODE} eval/scripts/gencode.py: --with-background, both settings reported',
    'prefilled_mode': f'{SCICODE} eval/scripts/gencode.py: get_function_from_code keeps the first def of '
                      '13.6, 62.1, 76.3 (__init__ for the class steps)',
    'mode': f'{SCICODE} eval/scripts/gencode.py: one prompt per step, earlier steps\' code in it',
    'max_out_len': f'{SCICODE} eval/scripts/gencode.py: max_tokens=4096 for claude models only, none otherwise',
    'temperature': f'{SCICODE} eval/scripts/gencode.py: --temperature, default 0',
    'n': f'{SCICODE} eval/scripts/gencode.py: one answer per step',
    'tool_use_max_loops': 'unused in naive mode',
    'code_timeout_seconds': 'unused in naive mode',
    'extraction': f'{SCICODE} src/scicode/gen/models.py: extract_python_script (first ```python block, else '
                  'first fence, else all; import lines removed)',
    'prefilled_steps': f'{SCICODE} eval/scripts/test_generated_code.py: 13.6, 62.1, 76.3 never written, so never '
                       'counted (288 test steps)',
    'timeout': f'{SCICODE} eval/scripts/test_generated_code.py: subprocess.run(..., timeout=1800)',
    'memory_limit_mb': OURS,
    'simps_shim': 'ours: the harness runs whatever SciPy is installed (SciPy >= 1.14 lacks simps)',
    'environments': f'{SCICODE} pyproject.toml: numpy, scipy, sympy, h5py unpinned: this interpreter\'s',
    'environment_rule': 'one environment',
}


def _protocol(reproduces, values, sources, not_reproduced=()):
    """A protocol: the official values and sources with its own over them."""
    return {'reproduces': reproduces, 'values': {**OFFICIAL, **values},
            'sources': {**OFFICIAL_SOURCES, **sources}, 'not_reproduced': tuple(not_reproduced)}


PROTOCOLS = {
    'official': _protocol(
        'the official SciCode scripts (eval/scripts: gencode.py, test_generated_code.py)', {}, {},
        ('no memory limit and no sandbox: ours adds both (verdicts of correct code are the same)',
         'the simps shim is ours (the official scripts fail steps 2.1 and 28.1-28.3 on SciPy >= 1.14)')),
    'official_inspect': _protocol(
        'the official inspect_ai task (eval/inspect_ai/scicode.py)',
        {'prefilled_steps': 'failed'},
        {'prefilled_steps': f'{SCICODE} eval/inspect_ai/scicode.py: total_steps = len(sub_steps), the '
                            'prefilled steps never pass, so problems 13, 62, 76 can never be solved (291 test steps)',
         'temperature': f'{SCICODE} eval/inspect_ai/README.md: inspect eval scicode.py --temperature 0'}),
    'inspect_evals': _protocol(
        'inspect_evals\' SciCode task (src/inspect_evals/scicode)',
        {'split': 'test', 'with_bg': False, 'mode': 'chat', 'prefilled_mode': 'full', 'temperature': None,
         'extraction': 'inspect_evals', 'prefilled_steps': 'scored', 'timeout': 300, 'simps_shim': False},
        {'split': f'{INSPECT_EVALS} scicode.py: include_dev_set=False (problems_all.jsonl only)',
         'with_bg': f'{INSPECT_EVALS} scicode.py: provide_scientific_background=False',
         'mode': f'{INSPECT_EVALS} solver.py: the steps of a problem as one chat, each answer kept',
         'prefilled_mode': f'{INSPECT_EVALS} solver.py: the model writes every step, 13.6, 62.1, 76.3 too; here '
                           'the benchmark\'s whole code stands in for it',
         'temperature': f'{INSPECT_EVALS} scicode.py: none set (the model\'s default)',
         'extraction': f'{INSPECT_EVALS} util.py: extract_code removes every fence, keeps the imports',
         'prefilled_steps': f'{INSPECT_EVALS} scorer.py: every sub_step is verified and counted (291 test steps)',
         'timeout': f'{INSPECT_EVALS} scicode.py: timeout=300',
         'simps_shim': f'{INSPECT_EVALS} docker-requirements.txt: numpy, scipy unpinned (today\'s SciPy, no simps)',
         'environments': f'{INSPECT_EVALS} Dockerfile: python:3.11-slim with the latest numpy, scipy, sympy, h5py'},
        ('its own system and step prompts (prompt_templates.py): here the chat mode sends the official ones',
         'the model is not asked for 13.6, 62.1, 76.3: the benchmark\'s code is scored in their place',
         'tests run in a Docker container: here in this package\'s sandbox')),
    'opencompass': _protocol(
        'OpenCompass\'s SciCode dataset and evaluator (configs/datasets/scicode, datasets/scicode.py)',
        {'split': 'test', 'with_bg': False, 'mode': 'chat', 'max_out_len': 4096, 'temperature': 0.7,
         'extraction': 'opencompass', 'timeout': 120, 'simps_shim': False},
        {'split': f'{OPENCOMPASS} datasets/scicode.py: SciCode_datasets.json holds the 65 test problems',
         'with_bg': f'{OPENCOMPASS} configs/datasets/scicode/scicode_gen.py -> scicode_gen_085b98.py: with_bg=False',
         'mode': f'{OPENCOMPASS} scicode_gen_085b98.py: ChatInferencer(infer_mode=\'every\')',
         'max_out_len': f'{OPENCOMPASS} scicode_gen_085b98.py: max_out_len=4096',
         'temperature': f'{OPENCOMPASS} models/openai_api.py: OpenAI.generate(temperature=0.7) when the model '
                        'sets none',
         'extraction': f'{OPENCOMPASS} datasets/scicode.py: extract_python_script takes the first ```python block '
                       'only (no block: no code), import lines removed',
         'timeout': f'{OPENCOMPASS} datasets/scicode.py: run_script(..., timeout=120)',
         'simps_shim': f'{OPENCOMPASS} datasets/scicode.py: sys.executable, the host\'s SciPy, no shim',
         'environments': f'{OPENCOMPASS} datasets/scicode.py: subprocess.run([sys.executable, ...])'},
        ('its own prompts from the data pack (SciCode_datasets.json): here the official ones',
         'its test programs leave the prefilled steps\' code out: here the official chain',
         'its verdicts are paired with scripts in completion order (a bug): here each with its own step')),
    'nemo_skills': _protocol(
        'NeMo-Skills\' SciCode benchmark, Artificial Analysis\' settings (nemo_skills/dataset/scicode)',
        {'split': 'all', 'with_bg': True, 'timeout': 30, 'simps_shim': False, 'environments': ('2024',)},
        {'split': f'{NEMO_SKILLS} nemo_skills/dataset/scicode/__init__.py: EVAL_SPLIT = "test_aai", dev + test '
                  '(80/338) as Artificial Analysis',
         'with_bg': f'{NEMO_SKILLS} nemo_skills/inference/eval/scicode.py: with_background: bool = True',
         'prefilled_mode': f'{NEMO_SKILLS} nemo_skills/inference/eval/scicode_utils.py: prefilled_steps_code, '
                           'the official truncated code',
         'temperature': f'{NEMO_SKILLS} nemo_skills/inference/generate.py: temperature 0.0',
         'max_out_len': f'{NEMO_SKILLS} nemo_skills/inference/generate.py: tokens_to_generate None',
         'extraction': f'{NEMO_SKILLS} nemo_skills/inference/eval/scicode_utils.py: extract_python_script, the '
                       'official rule',
         'timeout': f'{NEMO_SKILLS} nemo_skills/evaluation/evaluator/scicode.py: timeout: float = 30.0',
         'simps_shim': f'{NEMO_SKILLS} nemo_skills/evaluation/evaluator/scicode.py: pip install scipy==1.10.1 '
                       '(simps present), no shim',
         'environments': f'{NEMO_SKILLS} nemo_skills/evaluation/evaluator/scicode.py: scipy==1.10.1 in its '
                         'sandbox; here the 2024 environment (SciPy 1.13.1, which still has simps)'},
        ('its prompt pairs the background text with the background-comment template '
         '(prompt_config eval/scicode/default with with_background=True): here the official pairing',
         'SciPy 1.10.1 over its sandbox image\'s NumPy: here the 2024 environment',
         '20 steps in parallel in a sandbox container: here this package\'s sandbox')),
    'scicode_verified': _protocol(
        'SciCode-Verified\'s harness (eval_clean/run_deepseek_eval.py with --envs 2024,2025)',
        {'split': 'test', 'targets': 'verified', 'prefilled_mode': 'full', 'temperature': None,
         'simps_shim': False, 'environments': ('2024', 'current'), 'environment_rule': 'any'},
        {'split': f'{VERIFIED} eval_clean/README.md: 64 problems, 287 scored steps (the test split, corrected)',
         'targets': f'{VERIFIED} eval_clean/run_deepseek_eval.py: test_data_cleaned.h5 and problems_test.jsonl',
         'prefilled_mode': f'{VERIFIED} eval_clean/run_deepseek_eval.py: SKIP steps get the whole gold file, '
                           'import lines removed',
         'temperature': f'{VERIFIED} eval_clean/run_deepseek_eval.py: none sent (the API default)',
         'max_out_len': f'{VERIFIED} eval_clean/run_deepseek_eval.py: MAX_TOKENS = None',
         'timeout': f'{VERIFIED} eval_clean/run_deepseek_eval.py: timeout=1800 per environment',
         'simps_shim': f'{VERIFIED} eval_clean/run_deepseek_eval.py: none; the 2024 environment has simps',
         'environments': f'{VERIFIED_DOCKER} eval_clean/inspect/Dockerfile: 2024 = numpy 1.26.4, scipy 1.13.1, '
                         'sympy 1.13.3, h5py 3.12.1; 2025 = numpy 2.4.2, scipy 1.17.1 (here: current)',
         'environment_rule': f'{VERIFIED} eval_clean/regrade_multienv.py: PASSED if it passes in ANY env'},
        ('its 2025 environment is pinned (numpy 2.4.2, scipy 1.17.1, sympy 1.14.0, h5py 3.15.1, matplotlib '
         '3.10.9): here this interpreter\'s libraries stand for it',
         'one BLAS thread per grading process: here the step pool\'s share of the CPUs')),
    'agentcompass': _protocol(
        'AgentCompass\'s SciCode benchmark (scicode_tool_use, host_process)',
        {'split': 'all', 'with_bg': False, 'mode': 'tool_use'},
        {'split': f'{AGENTCOMPASS_PAGE}: split defaults to all',
         'with_bg': f'{AGENTCOMPASS_PAGE}: with_background off unless given',
         'mode': f'{AGENTCOMPASS_PAGE}: mode tool_use (default)',
         'tool_use_max_loops': f'{AGENTCOMPASS_PAGE}: tool_use_max_loops 15 in the recommended config',
         'code_timeout_seconds': f'{AGENTCOMPASS_PAGE}: code_timeout_seconds 180 in the recommended config',
         'temperature': f'{AGENTCOMPASS_PAGE}: model_params temperature 0 in the recommended config',
         'extraction': f'{AGENTCOMPASS_PAGE}: no fence or an empty block is parse_error; the named rule for it '
                       'is not in this build yet, so the official rule stands in',
         'simps_shim': f'{AGENTCOMPASS_PAGE}: a simps -> simpson shim in the test preamble',
         'timeout': f'{AGENTCOMPASS_PAGE}: no step timeout stated; the official 1800 s'},
        ('its code was not available to read: the values come from its documentation page',
         'its extraction rule (no fence or an empty block: parse_error): the official rule here until the '
         'extraction module names it')),
}

DEFAULT = 'official'
