from pathlib import Path
from typing import Any, Optional

from ..errors import ConfigError
from ..registry import register
from .base import BaseModel, Generation, GenerationRequest


@register
class GeneratedCodeModel(BaseModel):
    """Scores code produced elsewhere, in the official generator's layout.

    `path` holds `<problem_id>.<step_index>.py` (or `..._0.py`), each the
    complete program for that step: dependencies, earlier steps, this step.
    The evaluator runs each file verbatim with the tests appended.
    """

    needs_prior_code = False

    def __init__(self, path, abbr=None):
        super().__init__(abbr or self.default_abbr(path=path))
        self.path = Path(path)

    @classmethod
    def default_abbr(cls, path=None, **options) -> str:
        """The name of the directory `path`, else 'generated'."""
        return (Path(path).name if path else '') or 'generated'

    def settings(self) -> dict:
        """The directory read, which is all that decides this model's answers."""
        return {'type': 'GeneratedCodeModel', 'path': str(self.path)}

    def check_dataset(self, dataset: Any) -> None:
        """Raise ConfigError when the directory of generated files does not exist."""
        if not self.path.is_dir():
            raise ConfigError(f'GeneratedCodeModel directory {self.path} does not exist',
                              key='path', fix='point `path` at the directory of generated .py files')

    def file_for(self, problem_id: str, step_index: int) -> Optional[Path]:
        """The generated file of step `step_index` of `problem_id` in either official name, or None."""
        for name in (f'{problem_id}.{step_index}.py', f'{problem_id}.{step_index}_0.py'):
            candidate = self.path / name
            if candidate.is_file():
                return candidate
        return None

    def generate(self, request: GenerationRequest) -> Generation:
        """The step's file as a program to run verbatim; an error Generation when there is none."""
        found = self.file_for(request.problem.problem_id, request.step.index)
        if found is None:
            return Generation(error=f'no file {request.problem.problem_id}.{request.step.index}.py '
                                    f'in {self.path}')
        program = found.read_text(encoding='utf-8')
        return Generation(text=program, program=program)
