"""A task is one (stage, model, dataset) unit of work, described by a dumped config file.

Runners start `python -m opencompass_scicode.tasks <task config>`; the exit
code says how it went.
"""
import sys

from ..utils.workdir import RunDir

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_STEP_ERRORS = 3   # finished, but some steps could not be generated


class BaseTask:
    stage = None

    def __init__(self, cfg):
        self.cfg = cfg
        self.run_dir = RunDir(cfg['work_dir'], cfg['timestamp'])
        self.model_cfg = dict(cfg['model'])
        self.model_abbr = cfg['model_abbr']

    @property
    def name(self):
        raise NotImplementedError

    @property
    def log_path(self):
        raise NotImplementedError

    @property
    def progress_path(self):
        return self.log_path.with_suffix('.progress.json')

    def is_complete(self):
        raise NotImplementedError

    def run(self):
        """Do the work in this process; return an exit code."""
        raise NotImplementedError

    def log(self, msg):
        print(f'[{self.name}] {msg}', file=sys.stderr, flush=True)
