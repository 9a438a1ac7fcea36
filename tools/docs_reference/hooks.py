"""mkdocs hook (mkdocs.yml `hooks:`): adds the generated Reference pages to every build.

They are never files under docs/: a build (`mkdocs build --strict`, CI) generates them from the
code it runs with, so they cannot drift from it. A page under docs/ with the same path is an error
rather than silently replaced.
"""
import importlib
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

# The checkout: the package, tools/ and benchmarks/ (whose command lines the reference shows).
# mkdocs restores sys.path after loading a hook, so it is put there when the pages are made.
ROOT = str(Path(__file__).resolve().parents[2])


def on_files(files, config):
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    pages = importlib.import_module('tools.docs_reference').pages
    for path, text in pages().items():
        if files.get_file_from_path(path) is not None:
            raise PluginError(f'docs/{path} is generated at build time (tools/docs_reference/); remove the file')
        files.append(File.generated(config, path, content=text))
    return files
