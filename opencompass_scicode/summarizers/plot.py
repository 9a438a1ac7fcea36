"""The summary's bar chart: summary_<ts>.png, with 95% intervals as error bars.

Two shapes, one per table layout: `bar_chart` (wide: a bar group per model,
a bar per dataset group, setting and metric) and `row_chart` (long: a
horizontal bar group per row of the long table, so that it grows down as the
table does). matplotlib is imported only here and only when a plot is drawn,
so planning a run never loads it (tests/unit/test_layers.py).
"""
import io
from typing import Any
from pathlib import Path

from ..utils.writes import write_whole
from .cells import KEYS
from .layouts import METRICS, SIDES, side_value
from .results_files import is_results

PLOT_TITLE = 'SciCode: main problems and sub-steps, without / with background'
ROW_PLOT_TITLE = 'SciCode: one bar group per model and dataset (main problems and sub-steps, w/o / w/ background)'


def draw(cfg, collected, groups, layout, run_dir) -> Path | None:
    """Draw and save the chart of this layout; its path, or None when there is nothing to show."""
    if layout == 'long':
        return _plot_long(cfg, collected, groups, run_dir)
    models = [m['abbr'] for m in cfg['models']]
    series = []   # (label, [value per model])
    for label, members in groups:
        for side, side_name in SIDES:
            abbr = members[side]
            if not abbr:
                continue
            for metric, metric_name in METRICS:
                rate, ci = KEYS[metric][:2]
                values, intervals = [], []
                for m in models:
                    res = collected.get((m, abbr))
                    value = getattr(res, rate) if is_results(res) else 0.0
                    values.append(value)
                    intervals.append((getattr(res, ci) or [value, value]) if is_results(res) else [value, value])
                series.append((f'{label} {metric_name}, {side_name}', values, intervals))
    if not series or not any(is_results(v) for v in collected.values()):
        return None
    return _save(bar_chart(models, series), run_dir)


def _plot_long(cfg, collected, groups, run_dir):
    """One bar group per row of the long table, top to bottom in the table's order."""
    if not any(is_results(v) for v in collected.values()):
        return None
    labels = [label for label, _ in groups]
    shared, shortened = shared_prefix(labels)
    short = dict(zip(labels, shortened))
    rows, series, breaks = [], {}, []
    for model in cfg['models']:
        m = model['abbr']
        if rows:
            breaks.append(len(rows))
        for label, members in groups:
            rows.append(f'{m} | {short[label]}')
            for metric, metric_name in METRICS:
                rate, ci = KEYS[metric][:2]
                for side, side_name in SIDES:
                    res = side_value(collected, m, members, side)
                    value = getattr(res, rate) if is_results(res) else 0.0
                    interval = (getattr(res, ci) or [value, value]) if is_results(res) else [value, value]
                    values, intervals = series.setdefault(f'{metric_name}, {side_name}', ([], []))
                    values.append(value)
                    intervals.append(interval)
    axis = f'model | dataset ({shared}...)' if shared else 'model | dataset'
    return _save(row_chart(rows, [(name, *v) for name, v in series.items()], axis, breaks), run_dir)


def _save(fig, run_dir):
    import matplotlib.pyplot as plt
    path = run_dir.summary_path('png')
    image = io.BytesIO()
    fig.savefig(image, format='png', dpi=120)
    plt.close(fig)
    write_whole(path, image.getvalue())
    return path


def shared_prefix(labels) -> tuple[str, list[str]]:
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


def import_pyplot() -> None:
    """Import pyplot with the Agg backend (no display), ahead of drawing: in a thread of its own it
    overlaps the tables."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot  # noqa: F401


def bar_chart(models, series) -> Any:
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


def row_chart(rows, series, axis_label='model | dataset', breaks=()) -> Any:
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
