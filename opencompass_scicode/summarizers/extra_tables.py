"""The tables beside the main one, and the notes under them.

Paired differences, pass@k, why steps failed, the rates without known-defective
steps, inference usage. Each is `(header, rows)` from the collected results
(usage: from the usage files), and a table with no rows is left out of the
summary. Apart from the main table's layouts because none of them depends on
the layout, and the report shows some of them too.
"""
from typing import Any

from ..results import CATEGORIES
from ..results.stats import paired_difference
from .cells import cost, difference, near_misses, rate_cell
from .results_files import FAILED, MISSING, is_results, read_usage

USAGE_COLUMNS = ('steps answered', 'requests', 'prompt tokens', 'completion tokens', 'errors',
                 'model time (s)')


def comparisons(cfg, collected, groups) -> tuple[list[str], list[list[Any]]]:
    """With minus without background for each model, and each later model minus each earlier
    one on the same dataset, resampled together over the problems both scored."""
    rows = []

    def compare(what, first, second, where):
        if is_results(first) and is_results(second):
            diff = paired_difference(first.problem_counts(), second.problem_counts())
            if diff:
                rows.append([what, where, diff['problems'], difference(*diff['main']),
                             difference(*diff['subproblem'])])

    models = [m['abbr'] for m in cfg['models']]
    for m in models:            # a model's rows together, as in the long table
        for label, members in groups:
            if members['without'] and members['with']:
                compare(f'{m}: w/ bg - w/o bg', collected.get((m, members['without'])),
                        collected.get((m, members['with'])), label)
    for ds in cfg['datasets']:
        for i, first in enumerate(models):
            for second in models[i + 1:]:
                compare(f'{second} - {first}', collected.get((first, ds['abbr'])),
                        collected.get((second, ds['abbr'])), ds['abbr'])
    return ['comparison', 'dataset', 'problems', 'main', 'sub-steps'], rows


def pass_at(cfg, collected) -> tuple[list[str], list[list[Any]]]:
    """Per model and dataset sampled more than once: pass@k of main problems and sub-steps."""
    found = {key: value.pass_at_k for key, value in collected.items()
             if is_results(value) and value.pass_at_k}
    ks = sorted({int(k) for at in found.values() for k in at['main']})
    rows = [[m['abbr'], ds['abbr'],
             *[found[m['abbr'], ds['abbr']][kind].get(str(k), '-') for kind in ('main', 'subproblem')
               for k in ks]]
            for m in cfg['models'] for ds in cfg['datasets'] if (m['abbr'], ds['abbr']) in found]
    return ['model', 'dataset', *[f'{kind} pass@{k}' for kind in ('main', 'sub') for k in ks]], rows


def defect_free(cfg, collected, known_defects=True) -> tuple[list[str], list[list[Any]]]:
    """Per model and dataset: the rates over the steps and problems no known defect touches
    (no rows with `known_defects` off)."""
    rows = []
    for m in cfg['models']:
        for ds in cfg['datasets']:
            results = collected.get((m['abbr'], ds['abbr'])) if known_defects else None
            clean = results.excluding_known_defects if is_results(results) else None
            if clean is not None:
                rows.append([m['abbr'], ds['abbr'], clean.steps_excluded, rate_cell(clean, 'main'),
                             rate_cell(clean, 'sub')])
    return ['model', 'dataset', 'steps left out', 'main', 'sub-steps'], rows


def categories(cfg, collected) -> tuple[list[str], list[list[Any]]]:
    """Per model and dataset: how many scored steps fell in each category (results/record.py),
    and, beside them, the share of failed steps that were near misses (off by less than 10x
    the tolerance of the comparison that failed), where the results file counts them."""
    counted = {key: value.categories for key, value in collected.items() if is_results(value)}
    misses = {key: value.near_misses for key, value in collected.items()
              if is_results(value) and value.near_misses is not None}
    present = [c for c in CATEGORIES if any(c in counts for counts in counted.values())]
    rows = []
    for m in cfg['models']:
        for ds in cfg['datasets']:
            key = (m['abbr'], ds['abbr'])
            if key not in counted:
                continue
            row = [m['abbr'], ds['abbr'], *[counted[key].get(c, 0) for c in present]]
            if misses:
                row.append(near_misses(misses.get(key)))
            rows.append(row)
    return ['model', 'dataset', *present, *(['near misses (of failed)'] if misses else [])], rows


def usage(cfg, run_dir) -> tuple[list[str], list[list[Any]]]:
    """Per model, over the config's datasets: requests, tokens and steps without an answer."""
    rows = []
    for model in cfg['models']:
        by_dataset = read_usage(run_dir, model['abbr'])
        if by_dataset is None:
            continue
        counted = [by_dataset[ds['abbr']] for ds in cfg['datasets'] if ds['abbr'] in by_dataset]
        if not counted:
            continue
        totals = [sum(u.get(column, 0) for u in counted) for column in USAGE_COLUMNS]
        totals[-1] = round(totals[-1], 1)
        rows.append([model['abbr'], *totals, cost(model.get('price'), totals[2], totals[3])])
    return ['model', *USAGE_COLUMNS, 'cost'], rows


def notes(collected) -> list[str]:
    """What the markers and target kinds in the tables mean, for those that occur."""
    out = []
    kinds = {v.targets for v in collected.values() if is_results(v)}
    if 'regenerated' in kinds:
        out.append('targets "regenerated": validation targets rebuilt from the gold code because '
                   'the official test_data.h5 is absent; not the official file.')
    if 'opencompass-per-step' in kinds:
        out.append('targets "opencompass-per-step": OpenCompass\'s one file per step (its '
                   'scicode_test_data.zip), read as the official layout; no official checksum exists '
                   'for these files.')
    if 'verified' in kinds:
        out.append('targets "verified": SciCode-Verified\'s corrected test_data_cleaned.h5 (targets=\'verified\'), '
                   'not the official file: these scores are not comparable with official SciCode numbers.')
    if 'custom' in kinds:
        out.append('targets "custom": a targets file whose sha256 is neither the official nor '
                   'SciCode-Verified\'s (a stand-in, or a file pinned with targets_sha256=).')
    if any(is_results(v) and v.subproblem_not_scored for v in collected.values()):
        out.append('"N steps not scored": the harness could not run these steps (eval_error, e.g. '
                   'no targets for them); the rates count them as failed. Their messages are in the '
                   'results files and the report. The run exits non-zero.')
    if any(v == FAILED for v in collected.values()):
        out.append('"failed": the task producing this result failed; see status.json and logs/.')
    if any(v == MISSING for v in collected.values()):
        out.append('"-": not run (yet).')
    return out
