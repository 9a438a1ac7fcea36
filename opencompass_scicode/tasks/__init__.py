"""Tasks: one (stage, model, dataset) unit of work each, described by a dumped config."""
from pathlib import Path

from mmengine.config import Config

from .base import EXIT_FAILED, EXIT_OK, EXIT_STEP_ERRORS  # noqa: F401
from .evaluate import EvalTask
from .infer import InferTask

TASK_TYPES = {'infer': InferTask, 'eval': EvalTask}


def load_task(path_or_cfg):
    """A task object from its config dict or dumped config file."""
    cfg = path_or_cfg
    if isinstance(path_or_cfg, (str, Path)):
        cfg = Config.fromfile(str(path_or_cfg), format_python_code=False).to_dict()
    return TASK_TYPES[cfg['stage']](cfg)
