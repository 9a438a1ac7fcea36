"""The Reference pages of the documentation site, generated from the code at every build.

`pages()` gives {path under docs/: Markdown}; hooks.py hands them to mkdocs, and
`python -m tools.docs_reference DIR` writes them to DIR to read them without a build.
"""
from . import commands, config_keys, exit_codes, results_file

GENERATORS = {
    'reference/config.md': config_keys.page,
    'reference/commands.md': commands.page,
    'reference/exit-codes.md': exit_codes.page,
    'reference/results-file.md': results_file.page,
}


def pages():
    return {path: generate() for path, generate in GENERATORS.items()}
