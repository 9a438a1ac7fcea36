"""The main results table: datasets paired without and with background, in two layouts.

Datasets are paired into groups: the same split, problems and generation and
evaluation settings, without and with background. Two layouts: `wide`, one
row per model and a column group per dataset group (the default job's table),
and `long`, one row per model and dataset group (a sweep's table: it grows
down, not across). `layout='auto'` takes wide for one dataset group and long
for more.

Each cell is `rate (correct/total)`. `-` means not run, `failed` means the
task that should have produced it failed. The kind of targets is shown per
dataset group, because regenerated targets are not the official ones, and so is
the protocol that made the numbers (protocols/): its name says every knob that
differs from the protocol it is named after, so numbers of different protocols
never sit under one header without a `protocol` cell naming the difference.

Apart from the summarizer because the plot and the comparisons use the same
grouping, and a layout can be checked from collected results without files.
"""
import json
from collections import OrderedDict
from typing import Any, Literal

from ..utils.plain import to_plain
from .cells import count, rate_cell
from .results_files import MISSING, is_results

LAYOUTS = ('auto', 'wide', 'long')
Layout = Literal[LAYOUTS]
LONG_HEADER = ['model', 'dataset', 'targets', 'protocol', 'main w/o bg', 'main w/ bg', 'sub-steps w/o bg',
               'sub-steps w/ bg']
UNRECORDED = 'unrecorded'      # a results file written before protocols were recorded
SIDES = (('without', 'w/o bg'), ('with', 'w/ bg'))
METRICS = (('main', 'main'), ('sub', 'sub-steps'))


def _settings_text(value):
    """A dataset section (infer_cfg, eval_cfg) as text that compares equal when the settings do."""
    return json.dumps(to_plain(dict(value or {})), sort_keys=True, default=str)


def _group_key(ds):
    """What two datasets must share to be one group (without and with background): split,
    problems, data path, targets mode (official and SciCode-Verified side by side stay apart) and
    how answers are generated and scored (a sweep's modes differ here)."""
    ids = ds.get('sample_ids')
    infer = dict(ds.get('infer_cfg') or {})
    infer.setdefault('mode', 'naive')
    return (ds.get('split', 'validation'), tuple(str(i) for i in ids) if ids else None,
            ds.get('path', 'data/scicode'), ds.get('targets', 'official'), ds.get('protocol', 'official'),
            _settings_text(infer), _settings_text(ds.get('eval_cfg')))


def group_datasets(datasets) -> list[tuple[str, dict[str, str | None]]]:
    """[(label, {'without': abbr|None, 'with': abbr|None})], pairing by _group_key."""
    groups = OrderedDict()
    for ds in datasets:
        side = 'with' if ds.get('with_bg') else 'without'
        key = _group_key(ds)
        abbr = ds['abbr']
        # A second dataset for the same side gets a group of its own.
        while key in groups and groups[key][side] is not None:
            key = key + (abbr,)
        groups.setdefault(key, {'without': None, 'with': None, 'label': None})
        groups[key][side] = abbr
        if side == 'without' or groups[key]['label'] is None:
            groups[key]['label'] = abbr.replace('_with_background', '')
    return [(g.pop('label'), g) for g in groups.values()]


def choose_layout(layout, groups) -> str:
    """'wide' or 'long' for these dataset groups; `layout` is one of LAYOUTS."""
    if layout != 'auto':
        return layout
    return 'wide' if len(groups) <= 1 else 'long'


def side_value(collected, model, members, side) -> Any:
    """The results (or marker) of `model` on one side of a dataset group."""
    abbr = members[side]
    return collected.get((model, abbr), MISSING) if abbr else MISSING


def protocol_name(results) -> str:
    """The name of the protocol that made a results file's numbers (protocols/record.py)."""
    return (results.protocol or {}).get('name') or UNRECORDED


def protocol_cell(values) -> str:
    """The protocols of the results among `values` (markers left out), one name or several."""
    return '/'.join(sorted({protocol_name(v) for v in values if is_results(v)})) or MISSING


def title(cfg, groups, layout) -> str:
    """The title of the main table for `layout`."""
    if layout == 'wide':
        return 'SciCode results: ' + ', '.join(label for label, _ in groups)
    return (f'SciCode results: {count(len(cfg["models"]), "model")} x '
            f'{count(len(groups), "dataset group")} (each w/o and w/ background), one row per combination')


def wide_table(cfg, collected, groups) -> tuple[list[str], list[list[Any]]]:
    """(header, rows): one row per model; per dataset group its targets and protocol, then main and
    sub-steps without background, then with."""
    header = ['model']
    for label, _ in groups:
        prefix = f'{label} ' if len(groups) > 1 else ''
        header.append(f'{prefix}targets')
        header.append(f'{prefix}protocol')
        for _, side_name in SIDES:
            for _, metric_name in METRICS:
                header.append(f'{prefix}{metric_name} {side_name}')
    body = []
    for model in cfg['models']:
        m = model['abbr']
        row = [m]
        for _, members in groups:
            kinds = set()
            cells, values = [], []
            for side, _ in SIDES:
                value = side_value(collected, m, members, side)
                values.append(value)
                for metric, _ in METRICS:
                    cells.append(rate_cell(value, metric) if is_results(value) else value)
                if is_results(value):
                    kinds.add(value.targets or '?')
            row.append('/'.join(sorted(kinds)) or MISSING)
            row.append(protocol_cell(values))
            row.extend(cells)
        body.append(row)
    return header, body


def long_table(cfg, collected, groups) -> tuple[list[str], list[list[Any]]]:
    """(LONG_HEADER, rows): one row per model and dataset group, a model's rows together (models,
    then groups, in config order): model, group label, targets, protocol, main w/o, main w/,
    sub-steps w/o, sub-steps w/."""
    body = []
    for model in cfg['models']:
        m = model['abbr']
        for label, members in groups:
            values = {side: side_value(collected, m, members, side) for side, _ in SIDES}
            kinds = {v.targets or '?' for v in values.values() if is_results(v)}
            row = [m, label, '/'.join(sorted(kinds)) or MISSING, protocol_cell(values.values())]
            for metric, _ in METRICS:
                for side, _ in SIDES:
                    value = values[side]
                    row.append(rate_cell(value, metric) if is_results(value) else value)
            body.append(row)
    return LONG_HEADER, body
