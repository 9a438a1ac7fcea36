"""`opencompass-scicode compare A [B]`: two results sets, paired explicitly, step by step.

A and B each name a results set: a run directory (its `results/`), a run's timestamp in the
work dir, a folder laid out as `results/` is (`<model>/<dataset>.json`), or one results file.
Without B, both sides are A (two models of one run: `--models X Y`). Which results are paired is
said, never guessed:
- models: `--model M` (M on both sides) or `--models MA MB` (MA of A against MB of B); with one
  model on each side and neither flag, those two;
- datasets: those of the same abbr on both sides, or `--dataset D`, or `--datasets DA DB`.
Each pair is printed (summarizers/compare.py) and all of them written as one Markdown file.
"""
import argparse
import json
from datetime import datetime
from pathlib import Path

from ..errors import EXIT_OK, ConfigError
from ..results.schema import load_results
from ..summarizers.compare import as_text, compare, step_sides
from ..utils.workdir import RunDir
from ..utils.writes import write_whole


def add_arguments(p) -> None:
    """Add the compare command's arguments to parser `p`."""
    p.add_argument('a', metavar='A', help='a run directory, a run\'s timestamp in the work dir, a results '
                                          'folder (<model>/<dataset>.json) or a results file')
    p.add_argument('b', metavar='B', nargs='?', help='the same for the other side (default: A)')
    p.add_argument('-w', '--work-dir', default='outputs/default', help='where timestamps are looked up')
    which = p.add_mutually_exclusive_group()
    which.add_argument('--model', help='the model compared on both sides')
    which.add_argument('--models', nargs=2, metavar=('MODEL_A', 'MODEL_B'), help='A\'s model against B\'s')
    data = p.add_mutually_exclusive_group()
    data.add_argument('--dataset', help='only this dataset (default: every dataset both sides have)')
    data.add_argument('--datasets', nargs=2, metavar=('DATASET_A', 'DATASET_B'), help='A\'s dataset against B\'s')
    p.add_argument('-o', '--markdown', metavar='FILE.md', help='where the Markdown goes (default: the summary '
                                                               'folder of A\'s run, else here)')


def results_set(name, work_dir) -> tuple[str, dict[tuple[str, str], Path], RunDir | None]:
    """(label, {(model, dataset): results file path}, the run directory or None) of a side."""
    path = Path(name)
    if path.is_file():
        try:
            head = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise ConfigError(f'{name}: not a results file ({exc})', fix='give a results/<model>/<dataset>.json')
        return str(path), {(head.get('model', '?'), head.get('dataset', '?')): path}, None
    run = None
    if not path.is_dir():
        candidate = Path(work_dir) / name
        if not candidate.is_dir():
            raise ConfigError(f'{name}: no such run directory, results folder or file (nor {candidate})',
                              fix=f'give a run directory, a timestamp of a run in {work_dir}/ (-w sets the '
                                  'work dir), a results folder or a results file')
        path = candidate
    if (path / 'results').is_dir():
        run, folder = RunDir(path.parent, path.name), path / 'results'
        label = f'run {path.name}'
    else:
        folder, label = path, str(path)
    files = {(f.parent.name, f.stem): f for f in sorted(folder.glob('*/*.json'))}
    if not files:
        raise ConfigError(f'{name}: {folder} holds no results files (<model>/<dataset>.json)',
                          fix='give a run that has been evaluated, or its results folder')
    return label, files, run


def pairs(args, files_a, files_b) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    """[((model, dataset) of A, (model, dataset) of B)], as the flags say."""
    models_a = sorted({m for m, _ in files_a})
    models_b = sorted({m for m, _ in files_b})
    if args.models:
        model_a, model_b = args.models
    elif args.model:
        model_a = model_b = args.model
    elif len(models_a) == 1 and len(models_b) == 1 and (args.b is not None or models_a != models_b):
        model_a, model_b = models_a[0], models_b[0]
    else:
        raise ConfigError(f'say which models to compare: A holds {", ".join(models_a)}, B {", ".join(models_b)}',
                          fix='--model NAME (the same model on both sides) or --models MODEL_A MODEL_B')
    for model, models, side in ((model_a, models_a, 'A'), (model_b, models_b, 'B')):
        if model not in models:
            raise ConfigError(f'{side} has no results of model {model!r}', fix=f'{side} holds {", ".join(models)}')
    sets_a = sorted(d for m, d in files_a if m == model_a)
    sets_b = sorted(d for m, d in files_b if m == model_b)
    if args.datasets:
        chosen = [tuple(args.datasets)]
    else:
        shared = [d for d in sets_a if d in sets_b and (args.dataset is None or d == args.dataset)]
        if not shared:
            raise ConfigError(f'no dataset {"called " + repr(args.dataset) + " " if args.dataset else ""}on both '
                              f'sides: A has {", ".join(sets_a)}, B {", ".join(sets_b)}',
                              fix='--datasets DATASET_A DATASET_B pairs two datasets of other names')
        chosen = [(d, d) for d in shared]
    for dataset_a, dataset_b in chosen:
        for dataset, sets, side, model in ((dataset_a, sets_a, 'A', model_a), (dataset_b, sets_b, 'B', model_b)):
            if dataset not in sets:
                raise ConfigError(f'{side} has no results of model {model!r} on dataset {dataset!r}',
                                  fix=f'its datasets: {", ".join(sets)}')
    return [((model_a, da), (model_b, db)) for da, db in chosen]


def run_compare(argv, prog, out=print) -> int:
    """The command; returns its exit code (errors are raised as ConfigError: exit 2)."""
    p = argparse.ArgumentParser(prog=f'{prog} compare', description='Compare two results step by step: fixed, '
                                'broken and changed steps, the paired difference, and why each step changed.')
    add_arguments(p)
    args = p.parse_args(argv)
    label_a, files_a, run_a = results_set(args.a, args.work_dir)
    label_b, files_b, _ = (label_a, files_a, run_a) if args.b is None else results_set(args.b, args.work_dir)
    texts = []
    for key_a, key_b in pairs(args, files_a, files_b):
        # the verdicts and the code that ran are in the files themselves: their texts are not needed
        results_a = load_results(files_a[key_a], texts=False)
        results_b = load_results(files_b[key_b], texts=False)
        found = compare(step_sides(results_a), step_sides(results_b), results_a, results_b)
        name_a = f'{label_a} · model {key_a[0]} · dataset {key_a[1]}'
        name_b = f'{label_b} · model {key_b[0]} · dataset {key_b[1]}'
        out(as_text(name_a, name_b, found))
        texts.append(as_text(name_a, name_b, found, fmt='github'))
    stamp = datetime.now().strftime('%Y%m%d_%H%M%S')
    target = Path(args.markdown) if args.markdown else \
        (run_a.root / 'summary' if run_a else Path('.')) / f'compare_{stamp}.md'
    write_whole(target, '# SciCode comparison\n\n' + '\n'.join(texts))
    out(f'written to: {target}')
    return EXIT_OK
