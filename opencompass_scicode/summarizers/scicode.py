"""Lays out results, without and with background side by side.

Datasets are paired into groups: the same split, problems and generation and
evaluation settings, without and with background. Two layouts: `wide`, one
row per model and a column group per dataset group (the default job's table),
and `long`, one row per model and dataset group (a sweep's table: it grows
down, not across). `layout='auto'` takes wide for one dataset group and long
for more.

Each cell is `rate (correct/total)`. `-` means not run, `failed` means the
task that should have produced it failed. The kind of targets is shown per
dataset group, because regenerated targets are not the official ones.

It reads files only: the results files, the run's status.json and the usage
figures inference tasks write; never the predictions or anything that ran.
The config it is given has every model's and dataset's `abbr` filled in.
"""
import csv
import io
import json
import threading
from collections import OrderedDict
from typing import Optional

from tabulate import tabulate

from ..errors import ConfigError
from ..registry import to_plain
from ..results import CATEGORIES
from ..results.stats import paired_difference
from .opencompass_table import check_shape, opencompass_table
from .report import build_report

MISSING, FAILED = '-', 'failed'
USAGE_COLUMNS = ('steps answered', 'requests', 'prompt tokens', 'completion tokens', 'errors',
                 'model time (s)')


LAYOUTS = ('auto', 'wide', 'long')
LONG_HEADER = ['model', 'dataset', 'targets', 'main w/o bg', 'main w/ bg', 'sub-steps w/o bg', 'sub-steps w/ bg']


def _settings_text(value):
    """A dataset section (infer_cfg, eval_cfg) as text that compares equal when the settings do."""
    return json.dumps(to_plain(dict(value or {})), sort_keys=True, default=str)


def _group_key(ds):
    """What two datasets must share to be one group (without and with background): split,
    problems, data path and how answers are generated and scored (a sweep's modes differ here)."""
    ids = ds.get('sample_ids')
    infer = dict(ds.get('infer_cfg') or {})
    infer.setdefault('mode', 'naive')
    return (ds.get('split', 'validation'), tuple(str(i) for i in ids) if ids else None,
            ds.get('path', 'data/scicode'), _settings_text(infer), _settings_text(ds.get('eval_cfg')))


def group_datasets(datasets):
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


# metric -> (rate key, its 95% interval, numerator, denominator) of a results file
KEYS = {'main': ('main_problem_resolve_rate', 'main_problem_resolve_rate_ci95', 'main_problem_resolved',
                 'main_problem_total'),
        'sub': ('subproblem', 'subproblem_ci95', 'subproblem_correct', 'subproblem_total')}


def _cell(results, metric):
    """`rate (correct/total) [95% interval]`; the interval only where the results file has one."""
    rate, ci, num, den = KEYS[metric]
    text = f'{results[rate]:.1f} ({results[num]}/{results[den]})'
    if results.get(ci):
        text += f' [{results[ci][0]:.0f}-{results[ci][1]:.0f}]'
    n = results.get('subproblem_not_scored') or 0
    if n:       # beside the rate, so that unscored steps never read as a low score
        text += f'; {_count(n, "step")} not scored'
    return text


def _cost(price, prompt_tokens, completion_tokens):
    """Money spent, from the model entry's price=dict(input=, output=) per million tokens."""
    if not price:
        return '-'
    cost = (prompt_tokens * price.get('input', 0) + completion_tokens * price.get('output', 0)) / 1e6
    return f'{cost:.4f}'


def _count(n, noun):
    return f'{n} {noun}' + ('' if n == 1 else 's')


def _near_misses(counts):
    """`k/failed (share%)`, or `-` for a results file written without forensics."""
    if not counts:
        return MISSING
    return f'{counts.get("near_misses", 0)}/{counts.get("failed", 0)} ({counts.get("share", 0.0):.1f}%)'


def _difference(point, interval):
    return f'{point:+.1f} [{interval[0]:+.1f}, {interval[1]:+.1f}]'


class SciCodeSummarizer:
    """plot: also save a bar chart next to the tables; known_defects: also a table of the rates
    without the steps SciCode-Verified lists as defective (beside the official ones); report:
    also write summary/report_<timestamp>.html (report.py); layout: 'wide' (one row per model,
    a column group per dataset group), 'long' (one row per model and dataset group) or 'auto'
    (wide for one dataset group, long for more); dataset_abbrs, summary_groups: OpenCompass's
    summarizer settings, for its table beside these (opencompass_table.py)."""

    SIDES = (('without', 'w/o bg'), ('with', 'w/ bg'))
    METRICS = (('main', 'main'), ('sub', 'sub-steps'))

    def __init__(self, plot: bool = True, known_defects: bool = True, report: bool = True,
                 layout: str = 'auto', dataset_abbrs: Optional[list] = None,
                 summary_groups: Optional[list] = None):
        check_shape(dataset_abbrs, summary_groups or [])
        self.dataset_abbrs = dataset_abbrs
        self.summary_groups = summary_groups or []
        if layout not in LAYOUTS:
            raise ConfigError(f'unknown layout {layout!r}', key='layout',
                              fix="use 'auto' (wide for one dataset group, long for more), 'wide' (one row "
                                  "per model) or 'long' (one row per model and dataset group)")
        self.plot = plot
        self.known_defects = known_defects
        self.report = report
        self.layout = layout

    def layout_for(self, groups):
        """'wide' or 'long' for these dataset groups."""
        if self.layout != 'auto':
            return self.layout
        return 'wide' if len(groups) <= 1 else 'long'

    def prepare(self):
        """Called while the tasks run: import the plotting library meanwhile (about half a
        second that the summary would otherwise add at the end)."""
        if self.plot:
            threading.Thread(target=_import_pyplot, name='import-matplotlib', daemon=True).start()

    @staticmethod
    def _stopped(status):
        """{(model, dataset or None): stage} of the tasks that failed or were interrupted."""
        stopped = {}
        for entry in status.values():
            if entry.get('state') in ('failed', 'interrupted') and entry.get('model'):
                stopped[entry['model'], entry.get('dataset')] = entry.get('stage')
        return stopped

    def collect(self, cfg, run_dir):
        stopped = self._stopped(run_dir.load_status())
        table = {}
        for model in cfg['models']:
            m = model['abbr']
            for ds in cfg['datasets']:
                d = ds['abbr']
                path = run_dir.results_path(m, d)
                failed = (m, None) in stopped or (m, d) in stopped
                results = None
                if path.is_file() and stopped.get((m, d)) != 'eval':
                    results = json.loads(path.read_text())
                table[m, d] = results if results else (FAILED if failed else MISSING)
        return table

    def _side(self, collected, model, members, side):
        abbr = members[side]
        return collected.get((model, abbr), MISSING) if abbr else MISSING

    def rows(self, cfg, run_dir):
        groups = group_datasets(cfg['datasets'])
        collected = self.collect(cfg, run_dir)
        if self.layout_for(groups) == 'long':
            return LONG_HEADER, self._long_rows(cfg, collected, groups), collected, groups
        header = ['model']
        for label, _ in groups:
            prefix = f'{label} ' if len(groups) > 1 else ''
            header.append(f'{prefix}targets')
            for _, side_name in self.SIDES:
                for _, metric_name in self.METRICS:
                    header.append(f'{prefix}{metric_name} {side_name}')
        body = []
        for model in cfg['models']:
            m = model['abbr']
            row = [m]
            for _, members in groups:
                kinds = set()
                cells = []
                for side, _ in self.SIDES:
                    abbr = members[side]
                    value = collected.get((m, abbr), MISSING) if abbr else MISSING
                    for metric, _ in self.METRICS:
                        cells.append(_cell(value, metric) if isinstance(value, dict) else value)
                    if isinstance(value, dict):
                        kinds.add(value.get('targets', '?'))
                row.append('/'.join(sorted(kinds)) or MISSING)
                row.extend(cells)
            body.append(row)
        return header, body, collected, groups

    def _long_rows(self, cfg, collected, groups):
        """One row per model and dataset group, a model's rows together (models, then groups, in
        config order): model, group label, targets, main w/o, main w/, sub-steps w/o, sub-steps w/."""
        body = []
        for model in cfg['models']:
            m = model['abbr']
            for label, members in groups:
                values = {side: self._side(collected, m, members, side) for side, _ in self.SIDES}
                kinds = {v.get('targets', '?') for v in values.values() if isinstance(v, dict)}
                row = [m, label, '/'.join(sorted(kinds)) or MISSING]
                for metric, _ in self.METRICS:
                    for side, _ in self.SIDES:
                        value = values[side]
                        row.append(_cell(value, metric) if isinstance(value, dict) else value)
                body.append(row)
        return body

    def summarize(self, cfg, run_dir, echo=True, compare=()):
        """Tables, plot and report of `run_dir`; `compare`: other RunDirs the report shows beside it."""
        header, body, collected, groups = self.rows(cfg, run_dir)
        if self.layout_for(groups) == 'wide':
            title = 'SciCode results: ' + ', '.join(label for label, _ in groups)
        else:
            title = (f'SciCode results: {_count(len(cfg["models"]), "model")} x '
                     f'{_count(len(groups), "dataset group")} (each w/o and w/ background), one row per combination')
        sections = [('results', title, header, body)]
        if self.dataset_abbrs is not None or self.summary_groups:
            sections.append(('opencompass', 'OpenCompass-style table (%; accuracy = main problems, sub_accuracy '
                                            '= sub-steps)',
                             *opencompass_table(cfg['models'], cfg['datasets'], collected, self.dataset_abbrs,
                                                self.summary_groups)))
        for name, heading, (extra_header, extra_rows) in (
                ('comparisons', 'Paired differences (percentage points, 95% interval over shared problems)',
                 self.comparisons(cfg, collected, groups)),
                ('pass_at_k', 'pass@k over samples (%; unbiased estimator)', self.pass_at(cfg, collected)),
                ('categories', 'Why steps failed (scored steps per category)', self.categories(cfg, collected)),
                ('defect_free', 'Without the steps SciCode-Verified lists as defective (beside the official '
                                'numbers, not instead)', self.defect_free(cfg, collected)),
                ('usage', 'Inference usage', self.usage(cfg, run_dir))):
            if extra_rows:
                sections.append((name, heading, extra_header, extra_rows))
        notes = self._notes(collected)
        txt = '\n\n'.join(f'{heading}\n\n' + tabulate(rows, headers=head, tablefmt='simple', disable_numparse=True)
                          for _, heading, head, rows in sections)
        txt += ('\n\n' + '\n'.join(notes) if notes else '') + '\n'
        run_dir.summary_path('txt').write_text(txt, encoding='utf-8')
        md = '\n\n'.join(f'{"##" if i == 0 else "###"} {heading}\n\n'
                         + tabulate(rows, headers=head, tablefmt='github', disable_numparse=True)
                         for i, (_, heading, head, rows) in enumerate(sections))
        md += ('\n\n' + '\n'.join(f'- {n}' for n in notes) if notes else '') + '\n'
        run_dir.summary_path('md').write_text(md, encoding='utf-8')
        written = [run_dir.summary_path(ext) for ext in ('txt', 'md')]
        for name, _, head, rows in sections:       # one CSV per table: summary_<ts>.csv, ...
            path = run_dir.summary_path('csv' if name == 'results' else f'{name}.csv')
            buf = io.StringIO()
            writer = csv.writer(buf)
            writer.writerow(head)
            writer.writerows(rows)
            path.write_text(buf.getvalue(), encoding='utf-8')
            written.append(path)
        png = self._plot(cfg, collected, groups, run_dir) if self.plot else None
        if png:
            written.append(png)
        report = None
        if self.report:
            tables = {name: (head, rows) for name, _, head, rows in sections}
            report = build_report(cfg, run_dir, collected, self.usage(cfg, run_dir)[1],
                                  plots=[png] if png else [], tables=tables,
                                  known_defects=self.known_defects,
                                  compare=[(other.timestamp, self.collect(cfg, other)) for other in compare])
            written.append(report)
        if echo:
            print(txt)
            print('summary written to:\n  ' + '\n  '.join(map(str, written)))
            if report:
                print(f'open the report in a browser: {report}')
        return {'header': header, 'rows': body, 'files': [str(p) for p in written],
                'not_scored': {f'{m} / {d}': v['subproblem_not_scored'] for (m, d), v in collected.items()
                               if isinstance(v, dict) and v.get('subproblem_not_scored')}}

    @staticmethod
    def comparisons(cfg, collected, groups):
        """With minus without background for each model, and each later model minus each earlier
        one on the same dataset, resampled together over the problems both scored."""
        rows = []

        def compare(what, first, second, where):
            if isinstance(first, dict) and isinstance(second, dict):
                diff = paired_difference(first['problems'], second['problems'])
                if diff:
                    rows.append([what, where, diff['problems'], _difference(*diff['main']),
                                 _difference(*diff['subproblem'])])

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

    @staticmethod
    def pass_at(cfg, collected):
        """Per model and dataset sampled more than once: pass@k of main problems and sub-steps."""
        found = {key: value['pass_at_k'] for key, value in collected.items()
                 if isinstance(value, dict) and value.get('pass_at_k')}
        ks = sorted({int(k) for at in found.values() for k in at['main']})
        rows = [[m['abbr'], ds['abbr'],
                 *[found[m['abbr'], ds['abbr']][kind].get(str(k), '-') for kind in ('main', 'subproblem')
                   for k in ks]]
                for m in cfg['models'] for ds in cfg['datasets'] if (m['abbr'], ds['abbr']) in found]
        return ['model', 'dataset', *[f'{kind} pass@{k}' for kind in ('main', 'sub') for k in ks]], rows

    def defect_free(self, cfg, collected):
        """Per model and dataset: the rates over the steps and problems no known defect touches."""
        rows = []
        for m in cfg['models']:
            for ds in cfg['datasets']:
                clean = (collected.get((m['abbr'], ds['abbr'])) or {}) if self.known_defects else {}
                clean = clean.get('excluding_known_defects') if isinstance(clean, dict) else None
                if clean:
                    rows.append([m['abbr'], ds['abbr'], clean['steps_excluded'], _cell(clean, 'main'),
                                 _cell(clean, 'sub')])
        return ['model', 'dataset', 'steps left out', 'main', 'sub-steps'], rows

    @staticmethod
    def categories(cfg, collected):
        """Per model and dataset: how many scored steps fell in each category (results/record.py),
        and, beside them, the share of failed steps that were near misses (off by less than 10x
        the tolerance of the comparison that failed), where the results file counts them."""
        counted = {key: value.get('categories') or {} for key, value in collected.items()
                   if isinstance(value, dict)}
        misses = {key: value.get('near_misses') for key, value in collected.items()
                  if isinstance(value, dict) and isinstance(value.get('near_misses'), dict)}
        present = [c for c in CATEGORIES if any(c in counts for counts in counted.values())]
        rows = []
        for m in cfg['models']:
            for ds in cfg['datasets']:
                key = (m['abbr'], ds['abbr'])
                if key not in counted:
                    continue
                row = [m['abbr'], ds['abbr'], *[counted[key].get(c, 0) for c in present]]
                if misses:
                    row.append(_near_misses(misses.get(key)))
                rows.append(row)
        return ['model', 'dataset', *present, *(['near misses (of failed)'] if misses else [])], rows

    @staticmethod
    def usage(cfg, run_dir):
        """Per model, over the config's datasets: requests, tokens and steps without an answer."""
        rows = []
        for model in cfg['models']:
            try:
                by_dataset = json.loads(run_dir.usage_path(model['abbr']).read_text())
            except (OSError, ValueError):
                continue
            counted = [by_dataset[ds['abbr']] for ds in cfg['datasets'] if ds['abbr'] in by_dataset]
            if not counted:
                continue
            totals = [sum(u.get(column, 0) for u in counted) for column in USAGE_COLUMNS]
            totals[-1] = round(totals[-1], 1)
            rows.append([model['abbr'], *totals, _cost(model.get('price'), totals[2], totals[3])])
        return ['model', *USAGE_COLUMNS, 'cost'], rows

    @staticmethod
    def _notes(collected):
        notes = []
        if any(isinstance(v, dict) and v.get('targets') == 'regenerated' for v in collected.values()):
            notes.append('targets "regenerated": validation targets rebuilt from the gold code because '
                         'the official test_data.h5 is absent; not the official file.')
        if any(isinstance(v, dict) and v.get('targets') == 'opencompass-per-step' for v in collected.values()):
            notes.append('targets "opencompass-per-step": OpenCompass\'s one file per step (its '
                         'scicode_test_data.zip), read as the official layout; no official checksum exists '
                         'for these files.')
        if any(isinstance(v, dict) and v.get('subproblem_not_scored') for v in collected.values()):
            notes.append('"N steps not scored": the harness could not run these steps (eval_error, e.g. '
                         'no targets for them); the rates count them as failed. Their messages are in the '
                         'results files and the report. The run exits non-zero.')
        if any(v == FAILED for v in collected.values()):
            notes.append('"failed": the task producing this result failed; see status.json and logs/.')
        if any(v == MISSING for v in collected.values()):
            notes.append('"-": not run (yet).')
        return notes

    def _plot(self, cfg, collected, groups, run_dir):
        if self.layout_for(groups) == 'long':
            return self._plot_long(cfg, collected, groups, run_dir)
        models = [m['abbr'] for m in cfg['models']]
        series = []   # (label, [value per model])
        for label, members in groups:
            for side, side_name in self.SIDES:
                abbr = members[side]
                if not abbr:
                    continue
                for metric, metric_name in self.METRICS:
                    rate, ci = KEYS[metric][:2]
                    values, intervals = [], []
                    for m in models:
                        res = collected.get((m, abbr))
                        value = res[rate] if isinstance(res, dict) else 0.0
                        values.append(value)
                        intervals.append((res.get(ci) or [value, value]) if isinstance(res, dict)
                                         else [value, value])
                    series.append((f'{label} {metric_name}, {side_name}', values, intervals))
        if not series or not any(isinstance(v, dict) for v in collected.values()):
            return None
        return _save(bar_chart(models, series), run_dir)

    def _plot_long(self, cfg, collected, groups, run_dir):
        """One bar group per row of the long table, top to bottom in the table's order."""
        if not any(isinstance(v, dict) for v in collected.values()):
            return None
        labels = [label for label, _ in groups]
        shared, shortened = _shared_prefix(labels)
        short = dict(zip(labels, shortened))
        rows, series, breaks = [], {}, []
        for model in cfg['models']:
            m = model['abbr']
            if rows:
                breaks.append(len(rows))
            for label, members in groups:
                rows.append(f'{m} | {short[label]}')
                for metric, metric_name in self.METRICS:
                    rate, ci = KEYS[metric][:2]
                    for side, side_name in self.SIDES:
                        res = self._side(collected, m, members, side)
                        value = res[rate] if isinstance(res, dict) else 0.0
                        interval = (res.get(ci) or [value, value]) if isinstance(res, dict) else [value, value]
                        values, intervals = series.setdefault(f'{metric_name}, {side_name}', ([], []))
                        values.append(value)
                        intervals.append(interval)
        axis = f'model | dataset ({shared}...)' if shared else 'model | dataset'
        return _save(row_chart(rows, [(name, *v) for name, v in series.items()], axis, breaks), run_dir)


def _save(fig, run_dir):
    import matplotlib.pyplot as plt
    path = run_dir.summary_path('png')
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _shared_prefix(labels):
    """(prefix, labels without it): the part all dataset group labels share up to an underscore
    (scicode_validation_chat -> chat), for the plot's row labels; ('', labels) if that empties one."""
    if len(labels) < 2:
        return '', list(labels)
    prefix = labels[0]
    for label in labels[1:]:
        while not label.startswith(prefix):
            prefix = prefix[:-1]
    prefix = prefix[:prefix.rfind('_') + 1]
    short = [label[len(prefix):] for label in labels]
    return (prefix, short) if prefix and all(short) else ('', list(labels))


def _import_pyplot():
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot  # noqa: F401


PLOT_TITLE = 'SciCode: main problems and sub-steps, without / with background'


def bar_chart(models, series):
    """Grouped bars, one group per model, with error bars; `series` is
    [(label, [% per model], [[low, high] per model])]."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(max(7, 1.5 + len(models) * len(series) * 0.45), 4.8),
                           layout='constrained')
    for i, (label, values, intervals) in enumerate(series):
        xs = [m + i * width for m in range(len(models))]
        errors = [[v - low for v, (low, _) in zip(values, intervals)],
                  [high - v for v, (_, high) in zip(values, intervals)]]
        bars = ax.bar(xs, values, width, label=label, yerr=errors, capsize=2,
                      error_kw={'elinewidth': 0.8, 'alpha': 0.7})
        ax.bar_label(bars, fmt='%.0f', fontsize=7)
    ax.set_xticks([m + width * (len(series) - 1) / 2 for m in range(len(models))], models)
    ax.set_ylabel('% correct (95% interval over problems)')
    ax.set_ylim(0, 110)
    # A figure title (not the axes'): the layout engine keeps it, the legend and the labels on the canvas.
    fig.suptitle(PLOT_TITLE, fontsize=11)
    fig.legend(*ax.get_legend_handles_labels(), fontsize=7, loc='outside lower center', ncol=2)
    return fig


ROW_PLOT_TITLE = 'SciCode: one bar group per model and dataset (main problems and sub-steps, w/o / w/ background)'


def row_chart(rows, series, axis_label='model | dataset', breaks=()):
    """Horizontal grouped bars, one group per row label, top to bottom, with error bars; the
    figure grows with the rows. `series` is [(label, [% per row], [[low, high] per row])];
    `breaks`: indices of rows that start a new model (a thin line above them)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    height = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(9, 1.8 + len(rows) * (0.2 + 0.14 * len(series))), layout='constrained')
    for i, (label, values, intervals) in enumerate(series):
        ys = [r + i * height for r in range(len(rows))]
        errors = [[v - low for v, (low, _) in zip(values, intervals)],
                  [high - v for v, (_, high) in zip(values, intervals)]]
        ax.barh(ys, values, height, label=label, xerr=errors, capsize=2,
                error_kw={'elinewidth': 0.8, 'alpha': 0.7})
        for y, value, (_, high) in zip(ys, values, intervals):      # the value past its error bar
            ax.text(max(value, high) + 1, y, f'{value:.0f}', va='center', fontsize=7)
    for r in breaks:
        ax.axhline(r - height / 2 - 0.1, color='0.75', linewidth=0.8)     # mid-gap between row groups
    ax.set_yticks([r + height * (len(series) - 1) / 2 for r in range(len(rows))], rows, fontsize=8)
    ax.set_ylim(len(rows) - 0.1, -0.3)           # the first row on top, as in the table
    ax.set_xlabel('% correct (95% interval over problems)')
    ax.set_ylabel(axis_label)
    ax.set_xlim(0, 112)
    ax.grid(axis='x', alpha=0.3)
    fig.suptitle(ROW_PLOT_TITLE, fontsize=10)
    fig.legend(*ax.get_legend_handles_labels(), fontsize=8, loc='outside lower center', ncol=len(series))
    return fig
