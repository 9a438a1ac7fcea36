"""The summary's tables as files: one text file and one Markdown file with every table and
the notes, and one CSV per table.

A section is `(name, heading, header, rows)`; its name names its CSV
(`summary_<ts>.csv` for the main table, `summary_<ts>.<name>.csv` for the
others). Apart from the tables themselves so that what a table holds and how it
is written out change separately.
"""
import csv
import io

from tabulate import tabulate
from pathlib import Path

from ..utils.writes import write_whole


def as_text(sections, notes) -> str:
    """Every table, plain text, the notes after them."""
    txt = '\n\n'.join(f'{heading}\n\n' + tabulate(rows, headers=head, tablefmt='simple', disable_numparse=True)
                      for _, heading, head, rows in sections)
    return txt + ('\n\n' + '\n'.join(notes) if notes else '') + '\n'


def as_markdown(sections, notes) -> str:
    """Every table, the first under `##`, the others under `###`, the notes as a list."""
    md = '\n\n'.join(f'{"##" if i == 0 else "###"} {heading}\n\n'
                     + tabulate(rows, headers=head, tablefmt='github', disable_numparse=True)
                     for i, (_, heading, head, rows) in enumerate(sections))
    return md + ('\n\n' + '\n'.join(f'- {n}' for n in notes) if notes else '') + '\n'


def as_csv(header, rows) -> str:
    """The table as CSV text."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


def write_tables(run_dir, sections, notes) -> tuple[str, list[Path]]:
    """(the text, [paths written]): summary_<ts>.txt, .md, then one CSV per section."""
    txt = as_text(sections, notes)
    write_whole(run_dir.summary_path('txt'), txt)
    write_whole(run_dir.summary_path('md'), as_markdown(sections, notes))
    written = [run_dir.summary_path(ext) for ext in ('txt', 'md')]
    for name, _, head, rows in sections:       # one CSV per table: summary_<ts>.csv, ...
        path = run_dir.summary_path('csv' if name == 'results' else f'{name}.csv')
        write_whole(path, as_csv(head, rows))
        written.append(path)
    return txt, written
