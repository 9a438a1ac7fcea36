"""The typed records of a config's sections that no class of their own takes.

The config file's own keys are `ConfigFile` (with the one default of each). A
model entry is its class's options (utils/options.py) and `run_cfg`; a
dataset entry is its class's options, `reader_cfg` (more of them), `infer_cfg`
(inference/settings.py's InferConfig) and `eval_cfg`; `infer=` and `eval=`
name a partitioner and a runner; `endpoints` holds partitioners/limits.py's
`Endpoint`s. These records hold the shape of the parts in between, so that
they are checked, and documented, as the classes' options are.
"""
from typing import Any, Optional, Sequence

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


# Where run directories go when neither the config nor -w says.
WORK_DIR = 'outputs/default'


def _entry(name: str) -> Any:
    return lambda: {'type': name}


class ConfigFile(BaseModel):
    """A config file's own keys: the top-level names the run reads (other names, such as what the
    file imports, are the file's own business). An entry left out, or None, is its default."""
    model_config = ConfigDict(extra='allow', strict=True)

    models: Sequence[dict[str, Any]] = Field(description='the models to evaluate: dict(type=..., ...) each')
    datasets: Sequence[dict[str, Any]] = Field(description='the datasets to evaluate them on')
    summarizer: Optional[dict[str, Any]] = Field(default_factory=_entry('SciCodeSummarizer'),
                                                 description='tables, plot and report after the run')
    runner: Optional[dict[str, Any]] = Field(default_factory=_entry('LocalRunner'),
                                             description='launches the tasks of both stages, unless a stage '
                                                         'section names its own')
    partitioner: Optional[dict[str, Any]] = Field(default_factory=_entry('NaivePartitioner'),
                                                  description='turns models x datasets into tasks, for both '
                                                              'stages unless a stage section names its own')
    infer: Optional[dict[str, Any]] = Field(None, description="the inference stage's own partitioner and runner")
    eval: Optional[dict[str, Any]] = Field(None, description="the evaluation stage's own partitioner and runner")
    endpoints: Optional[Sequence[dict[str, Any]]] = Field(
        None, description='request limits of a server, shared by every model that asks its base_url')
    work_dir: str = Field(WORK_DIR, description='where run directories go (-w wins)')
    agentcompass_outputs: bool = Field(False, description="also write AgentCompass's details/ and summary.md, "
                                                          "beside this package's files")

    @classmethod
    def default(cls, key: str) -> Any:
        """The default of the top-level `key` (a fresh copy: callers may change it)."""
        return cls.model_fields[key].get_default(call_default_factory=True)
