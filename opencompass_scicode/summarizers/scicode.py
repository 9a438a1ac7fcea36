"""SciCodeSummarizer: a run's summary from its files, the config entry `summarizer=` names.

It puts the parts together, each in a module of its own:
- results_files.py: what it reads (results files, status.json, usage figures);
- layouts.py: the main table, datasets paired w/o and w/ background, wide or long;
- extra_tables.py: the tables beside it (paired differences, pass@k, categories,
  without known defects, usage) and the notes;
- protocol_tables.py: what made each number (protocol, fingerprint, library versions, targets
  sha256) and the steps whose verdicts differ between scoring environments;
- opencompass_table.py: OpenCompass's table, when the config asks for it;
- table_files.py: text, Markdown and CSV files;
- plot.py: the bar chart;
- report.py: the HTML report.

It reads files only: the results files, the run's status.json and the usage
figures inference tasks write; never the predictions or anything that ran.
The config it is given has every model's and dataset's `abbr` filled in.
"""
import threading
from typing import Any, Optional

from ..errors import ConfigError
from ..utils.collector import collector_paused
from ..registry import register
from . import extra_tables
from .layouts import LAYOUTS, LONG_HEADER, Layout, METRICS, SIDES, choose_layout, group_datasets, long_table, title, \
    wide_table
from .opencompass_table import check_shape, opencompass_table
from .plot import bar_chart, draw, import_pyplot, row_chart
from .protocol_tables import environment_differences, protocol_note, protocols
from .report import Records, build_report
from .results_files import FAILED, MISSING, collect, is_results
from .table_files import write_tables

# Importable from here as before the split (configs, tests and users' scripts do).
__all__ = ['SciCodeSummarizer', 'LAYOUTS', 'LONG_HEADER', 'MISSING', 'FAILED', 'group_datasets', 'bar_chart',
           'row_chart']


@register
class SciCodeSummarizer:
    """plot: also save a bar chart next to the tables; known_defects: also a table of the rates
    without the steps SciCode-Verified lists as defective (beside the official ones); report:
    also write summary/report_<timestamp>.html (report.py); layout: 'wide' (one row per model,
    a column group per dataset group), 'long' (one row per model and dataset group) or 'auto'
    (wide for one dataset group, long for more); dataset_abbrs, summary_groups: OpenCompass's
    summarizer settings, for its table beside these (opencompass_table.py)."""

    SIDES = SIDES
    METRICS = METRICS

    def __init__(self, plot: bool = True, known_defects: bool = True, report: bool = True,
                 layout: Layout = 'auto', dataset_abbrs: Optional[list] = None,
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

    def layout_for(self, groups) -> str:
        """'wide' or 'long' for these dataset groups."""
        return choose_layout(self.layout, groups)

    def prepare(self) -> None:
        """Called while the tasks run: import the plotting library meanwhile (about half a
        second that the summary would otherwise add at the end)."""
        if self.plot:
            threading.Thread(target=import_pyplot, name='import-matplotlib', daemon=True).start()

    @staticmethod
    def collect(cfg, run_dir) -> dict:
        """The results of every model x dataset of `cfg` in `run_dir` (or their markers)."""
        return collect(cfg, run_dir)

    def rows(self, cfg, run_dir) -> tuple[list[str], list[list[Any]], dict, list]:
        """(header, rows, collected results, dataset groups) of the main table."""
        groups = group_datasets(cfg['datasets'])
        collected = collect(cfg, run_dir)
        table = long_table if self.layout_for(groups) == 'long' else wide_table
        return (*table(cfg, collected, groups), collected, groups)

    def summarize(self, cfg, run_dir, echo=True, compare=()) -> dict[str, Any]:
        """Tables, plot and report of `run_dir`; `compare`: other RunDirs the report shows beside it."""
        with collector_paused():
            return self._summarize(cfg, run_dir, echo, compare)

    def _summarize(self, cfg, run_dir, echo, compare):
        groups = group_datasets(cfg['datasets'])
        layout = self.layout_for(groups)
        # The report's step records are taken as each file is read; the tables need only numbers.
        records = Records(cfg) if self.report else None
        collected = collect(cfg, run_dir, steps=False, each=records and records.reader(run_dir.timestamp))
        header, body = (long_table if layout == 'long' else wide_table)(cfg, collected, groups)
        sections = [('results', title(cfg, groups, layout), header, body)]
        if self.dataset_abbrs is not None or self.summary_groups:
            sections.append(('opencompass', 'OpenCompass-style table (%; accuracy = main problems, sub_accuracy '
                                            '= sub-steps)',
                             *opencompass_table(cfg['models'], cfg['datasets'], collected, self.dataset_abbrs,
                                                self.summary_groups)))
        usage = self.usage(cfg, run_dir)
        for name, heading, (extra_header, extra_rows) in (
                ('comparisons', 'Paired differences (percentage points, 95% interval over shared problems)',
                 self.comparisons(cfg, collected, groups)),
                ('protocols', 'Protocols (how each number was made: docs/protocols.md)', protocols(cfg, collected)),
                ('environments', 'Steps whose verdicts differ between scoring environments',
                 environment_differences(cfg, collected)),
                ('pass_at_k', 'pass@k over samples (%; unbiased estimator)', self.pass_at(cfg, collected)),
                ('categories', 'Why steps failed (scored steps per category)', self.categories(cfg, collected)),
                ('defect_free', 'Without the steps SciCode-Verified lists as defective (beside the official '
                                'numbers, not instead)', self.defect_free(cfg, collected)),
                ('usage', 'Inference usage', usage)):
            if extra_rows:
                sections.append((name, heading, extra_header, extra_rows))
        note = protocol_note(cfg, collected)
        txt, written = write_tables(run_dir, sections, ([note] if note else []) + extra_tables.notes(collected))
        png = draw(cfg, collected, groups, layout, run_dir) if self.plot else None
        if png:
            written.append(png)
        report = None
        if self.report:
            tables = {name: (head, rows) for name, _, head, rows in sections}
            report = build_report(cfg, run_dir, collected, usage[1],
                                  plots=[png] if png else [], tables=tables,
                                  known_defects=self.known_defects,
                                  compare=[(other.timestamp, collect(cfg, other, steps=False,
                                                                     each=records.reader(other.timestamp)))
                                           for other in compare], records=records)
            written.append(report)
        if echo:
            print(txt)
            print('summary written to:\n  ' + '\n  '.join(map(str, written)))
            if report:
                print(f'open the report in a browser: {report}')
        return {'header': header, 'rows': body, 'files': [str(p) for p in written],
                'not_scored': {f'{m} / {d}': v.subproblem_not_scored for (m, d), v in collected.items()
                               if is_results(v) and v.subproblem_not_scored}}

    comparisons = staticmethod(extra_tables.comparisons)
    pass_at = staticmethod(extra_tables.pass_at)
    categories = staticmethod(extra_tables.categories)
    usage = staticmethod(extra_tables.usage)

    def defect_free(self, cfg, collected) -> tuple[list[str], list[list[Any]]]:
        """Per model and dataset: the rates over the steps and problems no known defect touches."""
        return extra_tables.defect_free(cfg, collected, self.known_defects)
