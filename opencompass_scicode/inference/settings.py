"""A dataset's `infer_cfg`: how its steps are generated, with the defaults in one place."""
from dataclasses import asdict, dataclass
from typing import Optional

from ..errors import ConfigError
from ..utils.checks import check_number
from .extract import EXTRACTIONS

# The generation modes (modes.py holds how each works); named here so that reading a dataset's
# settings (an eval task does) loads no model code.
MODES = ('naive', 'chat', 'tool_use')


@dataclass(frozen=True)
class InferConfig:
    """mode: 'naive' (official), 'chat' or 'tool_use' (inference/modes.py).
    max_out_len: the model's token limit per answer (None: the model's own).
    tool_use_max_loops, code_timeout_seconds: tool calls per step, and seconds per
    snippet the code_interpreter tool runs (AgentCompass's values).
    n: independent samples of every problem (each a chain of its own answers; pass@k).
    temperature: for models whose entry sets none (None: none is sent; official 0).
    extraction: how code is taken from an answer (inference/extract.py; official by default).
    A dataset's protocol (protocols/) fills in those the entry leaves out."""
    mode: str = 'naive'
    max_out_len: Optional[int] = None
    tool_use_max_loops: int = 15
    code_timeout_seconds: float = 180
    n: int = 1
    temperature: Optional[float] = 0.0
    extraction: str = 'official'

    def __post_init__(self):
        if self.mode not in MODES:
            raise ConfigError(f'unknown generation mode {self.mode!r}', key='mode',
                              fix=f'use one of {", ".join(map(repr, MODES))}')
        check_number('max_out_len', self.max_out_len, whole=True, at_least=1, optional=True, example=4096)
        check_number('tool_use_max_loops', self.tool_use_max_loops, whole=True, at_least=1, example=15)
        check_number('code_timeout_seconds', self.code_timeout_seconds, above=0, example=180)
        check_number('n', self.n, whole=True, at_least=1, example=1)
        check_number('temperature', self.temperature, at_least=0, optional=True, example=0.0)
        if self.extraction not in EXTRACTIONS:
            raise ConfigError(f'unknown extraction rule {self.extraction!r}', key='extraction',
                              fix=f'use one of {", ".join(map(repr, EXTRACTIONS))}')

    @classmethod
    def of(cls, infer_cfg):
        return infer_cfg if isinstance(infer_cfg, cls) else cls(**dict(infer_cfg or {}))

    def settings(self):
        """What of it changes the answers (part of the predictions' settings fingerprint)."""
        out = {'mode': self.mode, 'max_out_len': self.max_out_len}
        if self.mode == 'tool_use':
            out.update(tool_use_max_loops=self.tool_use_max_loops,
                       code_timeout_seconds=self.code_timeout_seconds)
        if self.n > 1:          # one sample: the fingerprint of earlier runs stays valid
            out['n'] = self.n
        if self.extraction != 'official':       # likewise
            out['extraction'] = self.extraction
        return out

    def to_dict(self):
        return asdict(self)
