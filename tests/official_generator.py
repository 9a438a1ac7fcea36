"""Runs the official SciCode prompt generator on given answers and prints the prompts it writes.

    python tests/official_generator.py WHEEL ANSWERS.json OUT.json [--full-prefilled]

The official generator (`scicode.gen.gencode_json.Gencode`) is imported from the
`nvidia-scicode` wheel the data files come from, unpacked at test time, in this process of its own; no
line of it is copied here. Its model clients import libraries it does not need for prompts
(`requests`, `anthropic`, `google.generativeai`, `litellm`, a `config` module): empty modules
stand in for the ones that are not installed. The "model" answers each step with the text in
ANSWERS.json ({"with_bg" | "without_bg": {step_id: response}}), as the run under test got it.

The loop over problems and steps is the one of the official `scicode/__main__.py`: problems of
problems_all.jsonl then problems_dev.jsonl, a fresh copy of the generator per problem, the
prefilled steps 13.6, 62.1 and 76.3 skipped. `--full-prefilled`: the prefilled steps' code is
their whole file instead of the official first definition (what `prefilled_mode='full'` means).
OUT.json: {"with_bg" | "without_bg": {step_id: prompt}}.
"""
import atexit
import copy
import importlib.util
import json
import shutil
import sys
import tempfile
import types
import zipfile
from importlib import resources
from pathlib import Path

PREFILLED = {('13', 5), ('62', 0), ('76', 2)}     # (problem, 0-based step), as the official loop
UNUSED_BY_PROMPTS = ('requests', 'anthropic', 'google', 'google.generativeai', 'config', 'litellm',
                     'litellm.utils')


def _stand_in_for_unused_imports():
    for name in UNUSED_BY_PROMPTS:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            module = types.ModuleType(name)
            module.validate_environment = lambda *a, **k: {}
            sys.modules[name] = module
    if 'google' in sys.modules and isinstance(sys.modules['google'], types.ModuleType):
        sys.modules['google'].generativeai = sys.modules.get('google.generativeai')


def main(argv):
    wheel, answers_path, out_path = argv[:3]
    full_prefilled = '--full-prefilled' in argv
    unpacked = tempfile.mkdtemp(prefix='official-scicode-')
    atexit.register(shutil.rmtree, unpacked, ignore_errors=True)
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(unpacked, [n for n in zf.namelist() if n.startswith('scicode/')])
    sys.path.insert(0, unpacked)
    _stand_in_for_unused_imports()
    from scicode.gen import gencode_json
    from scicode.parse.parse import read_from_jsonl

    answers = json.loads(Path(answers_path).read_text())
    current = {}
    gencode_json.get_model_function = lambda model, **kw: (lambda prompt: current['answer'])
    if full_prefilled:
        given = {resources.read_text('scicode.data', f'{sid}.txt') for sid in ('13.6', '62.1', '76.3')}
        official_lookup = gencode_json.get_function_from_code
        gencode_json.get_function_from_code = (
            lambda code, name: code if code in given else official_lookup(code, name))

    with resources.path('scicode.data', 'problems_all.jsonl') as p:
        problems = read_from_jsonl(p)
    with resources.path('scicode.data', 'problems_dev.jsonl') as p:
        problems += read_from_jsonl(p)
    out = {}
    with tempfile.TemporaryDirectory(prefix='official-gen-') as tmp:
        for with_bg, setting, template_name in ((False, 'without_bg', 'background_comment_template.txt'),
                                                (True, 'with_bg', 'multistep_template.txt')):
            template = resources.read_text('scicode.data', template_name)
            pristine = gencode_json.Gencode(model='standin', output_dir=Path(tmp) / 'code',
                                            prompt_dir=Path(tmp) / 'prompt', with_background=with_bg)
            for problem in problems:
                generator = copy.deepcopy(pristine)
                steps = len(problem['sub_steps'])
                for i in range(steps):
                    if (problem['problem_id'], i) in PREFILLED:
                        continue
                    current['answer'] = answers[setting][problem['sub_steps'][i]['step_number']]
                    generator.generate_response_with_steps(problem, i + 1, steps, 'standin', template)
            folder = Path(tmp) / 'prompt' / 'standin' / ('with_background' if with_bg else 'without_background')
            prompts = {}
            for problem in problems:
                for i, step in enumerate(problem['sub_steps']):
                    path = folder / f'{problem["problem_id"]}.{i + 1}.txt'
                    if path.is_file():
                        prompts[step['step_number']] = path.read_text(encoding='utf-8')
            out[setting] = prompts
    Path(out_path).write_text(json.dumps(out))


if __name__ == '__main__':
    main(sys.argv[1:])
