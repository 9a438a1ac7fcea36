"""What a summary reads from a run: each model x dataset's results file, status.json and the
usage figures that inference tasks write.

In one place so that it is plain which files a summary depends on, and that nothing else in
summarizers/ opens a file of the run. Never the predictions, nor anything that ran
(tests/unit/test_layers.py holds the imports to that): a run's summary can be rebuilt from these
files alone, on another machine.

`collect` gives {(model abbr, dataset abbr): the results file (results/schema.py's ResultsFile,
read through its typed loader), or `-` (not run) or `failed` (the task that should have produced
it failed)}; every table, the plot and the report start from it.
"""
import json

from ..results.schema import ResultsFile, load_results

MISSING, FAILED = '-', 'failed'


def is_results(value: object) -> bool:
    """Whether a collected value is a results file (not a marker)."""
    return isinstance(value, ResultsFile)


def stopped_tasks(status: dict) -> dict:
    """{(model, dataset or None): stage} of the tasks that failed or were interrupted."""
    stopped = {}
    for entry in status.values():
        if entry.get('state') in ('failed', 'interrupted') and entry.get('model'):
            stopped[entry['model'], entry.get('dataset')] = entry.get('stage')
    return stopped


def collect(cfg: dict, run_dir, steps: bool = True, each=None) -> dict:
    """The results of every model x dataset of the config, or a marker where there are none.
    `each(model, dataset, results)` is called with each results file as read, step records and
    their texts and all; with `steps=False` they are then let go (every table and the plot need
    only the numbers and the problems' verdicts, and a large run's step records hold hundreds of
    MB), and without `each` their texts are not read at all."""
    stopped = stopped_tasks(run_dir.load_status())
    table = {}
    for model in cfg['models']:
        m = model['abbr']
        for ds in cfg['datasets']:
            d = ds['abbr']
            path = run_dir.results_path(m, d)
            failed = (m, None) in stopped or (m, d) in stopped
            results = None
            if path.is_file() and stopped.get((m, d)) != 'eval':
                results = load_results(path, texts=steps or each is not None)
            if results is not None and each is not None:
                each(m, d, results)
            if results is not None and not steps:
                for problem in results.problems:
                    problem.steps = []
            table[m, d] = results if results is not None else (FAILED if failed else MISSING)
    return table


def read_usage(run_dir, model_abbr: str) -> dict | None:
    """{dataset abbr: usage figures} of one model, or None where its file is missing or unreadable."""
    try:
        return json.loads(run_dir.usage_path(model_abbr).read_text())
    except (OSError, ValueError):
        return None
