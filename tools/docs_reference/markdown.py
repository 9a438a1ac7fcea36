"""Markdown pieces for the generated pages."""
import re


def code(text):
    """`text` as a code span, fenced with more backticks than it holds in a row."""
    text = ' '.join(str(text).split('\n'))
    longest = max((len(run) for run in re.findall(r'`+', text)), default=0)
    fence = '`' * (longest + 1)
    pad = ' ' if text.startswith('`') or text.endswith('`') or not text.strip() else ''
    return f'{fence}{pad}{text}{pad}{fence}'


def cell(text):
    """Plain text for a table cell: one line, its pipes escaped."""
    return ' '.join(str(text).split()).replace('|', '\\|')


def table(headers, rows):
    lines = ['| ' + ' | '.join(headers) + ' |', '|' + '---|' * len(headers)]
    lines += ['| ' + ' | '.join(row) + ' |' for row in rows]
    return '\n'.join(lines)


def shorten(text, width=60):
    text = str(text)
    return text if len(text) <= width else text[:width - 1] + '…'


def generated_note(*sources):
    """The banner of a generated page: what it is read from, so a reader knows where to change it."""
    listed = ', '.join(code(s) for s in sources)
    return (f'!!! note "Generated from the code"\n    This page is written at every build of the site '
            f'from {listed}; edit those, not this page.\n')
