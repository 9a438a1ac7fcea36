"""Whether a model server's launcher is installed here.

A `server=dict(command=[...])` names a program found on PATH (`vllm serve ...`,
`lmdeploy serve api_server ...`) or a module this interpreter runs (`python -m
sglang.launch_server`, `python -m llama_cpp.server`). Without it the inference
task would only find out after the targets were fetched and regenerated; planning
asks here first (inference/preflight.py), in a moment, importing nothing. The
task's processes run with this interpreter and this environment (a Slurm job
inherits both), so what is missing here is missing there too.
"""
import importlib.util
import os
import shutil
import sys
from pathlib import Path
from typing import Optional

# How each engine OpenCompass's local model types use is installed, by the name its command starts with.
INSTALL = {
    'vllm': 'pip install vllm',
    'lmdeploy': 'pip install lmdeploy',
    'sglang': 'pip install "sglang[all]"',
    'llama_cpp': "pip install 'llama-cpp-python[server]'",
}


def _this_python(program):
    try:
        return Path(program).resolve() == Path(sys.executable).resolve()
    except OSError:
        return False


def missing_launcher(command: list) -> Optional[str]:
    """The program or module that `command` (a server's argv) starts and that is not installed
    here, or None when it is."""
    program = str(command[0])
    if len(command) > 2 and command[1] == '-m' and _this_python(program):
        top = str(command[2]).split('.')[0]
        return None if importlib.util.find_spec(top) is not None else top
    if os.sep in program:
        return None if os.access(program, os.X_OK) else program
    return None if shutil.which(program) else program


def install_hint(name: str) -> str:
    """How to install `name`, what missing_launcher named, as a line to show the user."""
    return INSTALL.get(name) or f'install {name} (it must be on PATH, or importable by {sys.executable})'
