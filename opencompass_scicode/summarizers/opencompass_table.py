"""OpenCompass's summary table, beside this package's: rows are dataset (or group) and metric,
columns are models.

A summarizer config in OpenCompass's shape names its rows with `dataset_abbrs`
(a dataset's abbr, or `[abbr, metric]`) and averages with `summary_groups`
(`{'name': ..., 'subsets': [abbr or [abbr, metric], ...]}`, optionally with
`weights`, `sum`, `std`, `harmonic_mean` or `metric`), as OpenCompass's
DefaultSummarizer does. The numbers are the results files' own: `accuracy` (=
main_problem_resolve_rate) and `sub_accuracy` (= subproblem), in percent, or any
other number a results file holds at its top level. A row whose dataset is
neither a dataset of the run nor a group shows `-`, as in OpenCompass.
"""
import math
from typing import Any

from ..errors import ConfigError
from .results_files import is_results

METRICS = ('accuracy', 'sub_accuracy')     # a dataset's rows when dataset_abbrs does not choose
GROUP_RULES = ('std', 'sum', 'harmonic_mean')
HEADER = ['dataset', 'metric', 'mode']


def _is_pair(item):
    return isinstance(item, (list, tuple)) and len(item) == 2 and all(isinstance(x, str) for x in item)


def check_shape(dataset_abbrs, summary_groups) -> None:
    """ConfigError for entries OpenCompass's DefaultSummarizer would not take either."""
    fix_row = "e.g. dataset_abbrs=['SciCode', ['SciCode_with_background', 'sub_accuracy']]"
    if dataset_abbrs is not None:
        if not isinstance(dataset_abbrs, (list, tuple)):
            raise ConfigError('must be a list', key='dataset_abbrs', fix=fix_row)
        for i, item in enumerate(dataset_abbrs):
            if not (isinstance(item, str) or _is_pair(item)):
                raise ConfigError(f'must be an abbr or [abbr, metric], got {item!r}', key=f'dataset_abbrs[{i}]',
                                  fix=fix_row)
    fix_group = "e.g. dict(name='SciCode', subsets=[['SciCode', 'accuracy'], ['SciCode', 'sub_accuracy']])"
    if not isinstance(summary_groups, (list, tuple)):
        raise ConfigError('must be a list of dicts', key='summary_groups', fix=fix_group)
    for i, group in enumerate(summary_groups):
        key = f'summary_groups[{i}]'
        if not isinstance(group, dict) or not isinstance(group.get('name'), str) or not group.get('subsets'):
            raise ConfigError(f'needs a name and subsets, got {group!r}', key=key, fix=fix_group)
        subsets = group['subsets']
        pairs = [_is_pair(s) for s in subsets]
        if not (all(pairs) or all(isinstance(s, str) for s in subsets)):
            raise ConfigError('subsets are all abbrs or all [abbr, metric] pairs', key=f'{key}.subsets',
                              fix=fix_group)
        if group.get('transforms'):
            raise ConfigError('transforms (Python expressions run on the scores) are not evaluated here',
                              key=f'{key}.transforms', fix='leave transforms out')


def _metrics(results) -> dict:
    """{metric: number} of one results file: its top-level numbers."""
    return {k: v for k, v in results
            if isinstance(v, (int, float)) and not isinstance(v, bool) and k != 'schema_version'}


def _aggregate(group, values):
    """OpenCompass's rules: weights -> weighted average, sum, std, harmonic_mean, else the mean.
    `values` maps 'abbr@metric' to a number."""
    numbers = list(values.values())
    if group.get('std'):
        mean = sum(numbers) / len(numbers)
        return math.sqrt(sum((x - mean) ** 2 for x in numbers) / len(numbers))
    if group.get('sum'):
        return sum(numbers)
    if group.get('harmonic_mean'):
        return len(numbers) / sum(1 / max(x, 1) for x in numbers)     # OpenCompass's floor of 1
    weights = group.get('weights')
    if weights:
        def weight(name):
            return weights.get(name, weights.get(name.split('@')[0], 0))
        return sum(v * weight(k) for k, v in values.items()) / sum(weights.values())
    return sum(numbers) / len(numbers)


def _group_metric(group):
    if 'metric' in group:
        return group['metric']
    if group.get('weights'):
        return 'weighted_average'
    named = {'std': 'standard_deviation', 'sum': 'sum', 'harmonic_mean': 'harmonic_mean'}
    return next((named[r] for r in GROUP_RULES if group.get(r)), 'naive_average')


def _group_scores(group, scores):
    """{metric: number} of a group for one model, or None when a subset is missing."""
    default = _group_metric(group)
    subsets = group['subsets']
    if all(_is_pair(s) for s in subsets):
        if any(metric not in scores.get(abbr, {}) for abbr, metric in subsets):
            return None
        return {default: _aggregate(group, {f'{a}@{m}': scores[a][m] for a, m in subsets})}
    if any(abbr not in scores for abbr in subsets):
        return None
    out = {}
    for metric in METRICS:
        if all(metric in scores[abbr] for abbr in subsets):
            out[metric] = _aggregate(group, {f'{a}@{metric}': scores[a][metric] for a in subsets})
    out[default] = _aggregate(group, {f'{a}@{METRICS[0]}': scores[a][METRICS[0]] for a in subsets})
    return out


def opencompass_table(models, datasets, collected, dataset_abbrs=None, summary_groups=()) -> tuple[list[str], list[list[Any]]]:
    """(header, rows). `collected` maps (model abbr, dataset abbr) to a results dict or a marker
    ('-' not run, 'failed'); `models` and `datasets` are the config's entries."""
    model_abbrs = [m['abbr'] for m in models]
    modes = {d['abbr']: (d.get('infer_cfg') or {}).get('mode', 'naive') for d in datasets}
    scores = {m: {d: _metrics(collected[m, d]) for d in modes if is_results(collected.get((m, d)))}
              for m in model_abbrs}
    group_modes = {}
    for group in summary_groups or ():
        for m in model_abbrs:
            found = _group_scores(group, scores[m])
            if found is not None:
                scores[m].setdefault(group['name'], {}).update(found)
                # a group no model has all the subsets of is no row, as in OpenCompass
                members = {modes.get(s if isinstance(s, str) else s[0]) for s in group['subsets']}
                group_modes[group['name']] = members.pop() if len(members) == 1 else 'mixed'

    known = {**modes, **group_modes}

    def metrics_of(abbr):
        seen = []
        for m in model_abbrs:
            seen += [k for k in scores[m].get(abbr, {}) if k not in seen]
        return [k for k in METRICS if k in seen] + [k for k in seen if k not in METRICS and abbr in group_modes]

    if dataset_abbrs is None:
        wanted = [(d, metric) for d in modes for metric in METRICS]
        wanted += [(g, metric) for g in group_modes for metric in metrics_of(g)]
    else:
        wanted = [(item, None) if isinstance(item, str) else tuple(item) for item in dataset_abbrs]
    rows = []
    for abbr, metric in wanted:
        metric = metric or next(iter(metrics_of(abbr)), None)
        if abbr not in known or metric is None:
            rows.append([abbr, '-', '-'] + ['-'] * len(model_abbrs))
            continue
        row = [abbr, metric, known[abbr]]
        for m in model_abbrs:
            value = scores[m].get(abbr, {}).get(metric)
            marker = collected.get((m, abbr))
            row.append(f'{value:.2f}' if value is not None else marker if isinstance(marker, str) else '-')
        rows.append(row)
    return HEADER + model_abbrs, rows
