"""Everything is declared in setup.cfg; this only puts the checkout's configs/ into the wheel.

`opencompass-scicode --datasets scicode_validation --models reference` finds its configs in the
installed package (`opencompass_scicode/configs/`) when the current directory has none.
configs/ is no package (its files are read by the config loader, never imported), so it is
copied in as data at build time rather than listed in setup.cfg.
"""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

CONFIGS = Path(__file__).resolve().parent / 'configs'


class BuildWithConfigs(build_py):
    def run(self):
        super().run()
        if CONFIGS.is_dir():
            target = Path(self.build_lib) / 'opencompass_scicode' / 'configs'
            shutil.copytree(CONFIGS, target, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns('__pycache__', '*.pyc'))


setup(cmdclass={'build_py': BuildWithConfigs})
