"""Small hand-made SciCode-format data for fast tests."""
import json
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


def gold_predictions(dataset, wrong=()):
    """Prediction records as the ReferenceModel would give; steps in `wrong` return garbage."""
    from opencompass_scicode.inference.extract import extract_code
    preds = {}
    for problem in dataset.problems:
        for s in problem.scored_steps:
            code = s.ground_truth_code
            if s.step_id in wrong:
                code = s.function_header + '\n    return 12345'
            preds[s.step_id] = {'step_id': s.step_id, 'code': extract_code(f'```python\n{code}\n```'),
                                'program': None, 'error': None}
    return preds


def processes_mentioning(text):
    """Pids of live processes whose command line contains `text` (e.g. a run directory)."""
    import os
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


def wait_until(predicate, timeout=30.0, interval=0.1):
    """Wait until `predicate()` is true; AssertionError after `timeout` seconds."""
    import time
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f'not true within {timeout} s: {getattr(predicate, "__name__", predicate)}')
        time.sleep(interval)


def wait_until_gone(text, timeout=15.0):
    """Seconds until no live process mentions `text`; AssertionError naming them after `timeout`."""
    import time
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if not processes_mentioning(text):
            return time.monotonic() - start
        time.sleep(0.1)
    raise AssertionError(f'still running after {timeout} s: {processes_mentioning(text)}')


# ------------------------------------------------------------ whole runs of run.py
ROOT = Path(__file__).resolve().parent.parent


def run_cli(args, cwd=ROOT, timeout=900, env=None):
    """`python run.py ARGS` in a process of its own; the CompletedProcess (text output)."""
    import os
    import subprocess
    import sys
    return subprocess.run([sys.executable, str(ROOT / 'run.py'), *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **env) if env else None)


def only_run(work):
    """The one run directory in the work dir `work`."""
    (run_dir,) = [p for p in Path(work).iterdir() if p.is_dir()]
    return run_dir


def results(run_dir, model, dataset):
    return json.loads((Path(run_dir) / 'results' / model / f'{dataset}.json').read_text())


def statuses(res):
    """{step_id: status} of a results file, prefilled steps included."""
    return {s['step_id']: s['status'] for p in res['problems'] for s in p['steps']}


def predictions(run_dir, model, dataset):
    lines = (Path(run_dir) / 'predictions' / model / f'{dataset}.jsonl').read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]
