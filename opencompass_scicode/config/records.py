"""The typed records of a config's sections that no class of their own takes.

A model entry is its class's options (utils/options.py) and `run_cfg`; a
dataset entry is its class's options, `reader_cfg` (more of them), `infer_cfg`
(inference/settings.py's InferConfig) and `eval_cfg`; `infer=` and `eval=`
name a partitioner and a runner. These records hold the shape of the parts
in between, so that they are checked, and documented, as the classes' options
are.
"""
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ConfigError

_STRICT = ConfigDict(extra='forbid', strict=True)


class RunCfg(BaseModel):
    """run_cfg=dict(num_gpus=..., num_procs=...): what a model's tasks ask of a cluster."""
    model_config = _STRICT

    num_gpus: Optional[int] = Field(None, ge=0)
    num_procs: Optional[int] = Field(None, ge=0)


class EvalCfg(BaseModel):
    """A dataset's eval_cfg: its evaluator entry, and pass@k for these k besides 1 and n."""
    model_config = _STRICT

    evaluator: Optional[dict[str, Any]] = Field(None, description="dict(type='SciCodeEvaluator', ...)")
    pass_at_k: list[int] = Field(default_factory=list, description='k above infer_cfg n is left out')

    def model_post_init(self, context: Any) -> None:
        """pass@k is for positive k; an evaluator entry names its type."""
        if not all(k > 0 for k in self.pass_at_k):
            raise ConfigError(f'must be a list of positive whole numbers, got {self.pass_at_k!r}', key='pass_at_k',
                              fix='e.g. pass_at_k=[1, 5, 10] (k above infer_cfg n is left out)')
        if self.evaluator is not None and 'type' not in self.evaluator:
            raise ConfigError('needs a `type`', key='evaluator', fix="add type='SciCodeEvaluator' (or a class of your own)")


class StageSection(BaseModel):
    """infer=dict(...) or eval=dict(...): the partitioner and the runner of that stage."""
    model_config = _STRICT

    partitioner: Optional[dict[str, Any]] = None
    runner: Optional[dict[str, Any]] = None
