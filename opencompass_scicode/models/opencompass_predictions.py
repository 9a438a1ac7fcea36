"""Answers read from an OpenCompass predictions file, to score them here.

OpenCompass's ChatInferencer(infer_mode='every') writes `predictions/<model>/<abbr>.json`:
`{"<index>": {"prediction": [one response per generated step], "origin_prompt": [...],
"gold": [...]}}`, where the index is the problem's position in OpenCompass's data pack
(`SciCode_datasets.json`, the 65 problems of the test split) and the responses are those of
the problem's generated steps in order; the prefilled steps 13.6, 62.1 and 76.3 have none, so
OpenCompass's step k of problems 13 (k >= 5), 62 and 76 (k >= 2) is step k+1 of the official
numbering. OpenCompass's own score pairs its test scripts with results in completion order,
which scrambles its per-problem numbers; here each response is tied to its step and scored
with the official semantics (extraction, the prefilled code in the chain, 1800 s).
"""
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..registry import register
from .base import BaseModel, Generation, GenerationRequest

FILE_NAMES = {False: 'SciCode.json', True: 'SciCode_with_background.json'}
PACK_NAME = 'SciCode_datasets.json'
NOTE = ('note: re-scoring OpenCompass predictions with the official SciCode semantics (official code '
        'extraction, the prefilled steps\' code in the chain, 1800 s per step, denominators 65/288), '
        'each response attributed to its own step; OpenCompass\'s own accuracy for the same file may differ.')


@register
class OpenCompassPredictions(BaseModel):
    """path: OpenCompass's predictions file (`.../predictions/<model>/SciCode.json`), or the
    folder holding `SciCode.json` and `SciCode_with_background.json` (picked by each dataset's
    with_bg). data_pack: OpenCompass's `SciCode_datasets.json`, whose order the indices follow
    (default: that file in the dataset's data dir if it is there, else the order of the official
    problems_all.jsonl)."""

    needs_prior_code = False        # every answer given is scored, as OpenCompass does

    def __init__(self, path, abbr=None, data_pack=None):
        super().__init__(abbr or self.default_abbr(path=path))
        self.path = Path(path)
        self.data_pack = Path(data_pack) if data_pack else None
        self._answers = {}          # with_bg -> {problem_id: [responses]}
        self._noted = False

    @classmethod
    def default_abbr(cls, path=None, **options) -> str:
        """The name of the model's folder: the parent of a `.json` file, else `path` itself."""
        path = Path(path or '')
        return (path.parent.name if path.suffix == '.json' else path.name) or 'opencompass'

    def settings(self) -> dict:
        """The file (or folder) and data pack read: what decides this model's answers."""
        return {'type': 'OpenCompassPredictions', 'path': str(self.path),
                'data_pack': str(self.data_pack) if self.data_pack else None}

    def file_for(self, with_bg: bool) -> Path:
        """The predictions file of one setting (`with_bg`): `path` itself when it is a file."""
        return self.path if self.path.suffix == '.json' else self.path / FILE_NAMES[bool(with_bg)]

    def check_dataset(self, dataset: Any) -> None:
        """Read and check the predictions for `dataset`'s setting; raise ConfigError when the
        dataset is not the test split or the file does not fit it."""
        if dataset.split != 'test':
            raise ConfigError(f'OpenCompass predictions cover the test split (65 problems); dataset '
                              f'{dataset.abbr!r} uses split {dataset.split!r}', key='split',
                              fix="use split='test' with this model")
        self._load(dataset)
        if not self._noted:
            print(NOTE, file=sys.stderr)
            self._noted = True

    def _order(self, dataset):
        """Problem ids in the order of OpenCompass's indices."""
        pack = self.data_pack or dataset.data_dir / PACK_NAME
        if pack.is_file():
            return [str(entry['id']) for entry in json.loads(pack.read_text(encoding='utf-8'))]
        if self.data_pack:
            raise ConfigError(f'data_pack {pack} does not exist', key='data_pack',
                              fix='point it at OpenCompass\'s data/scicode/SciCode_datasets.json, or leave it out')
        from ..datasets.scicode import read_jsonl
        return [str(r['problem_id']) for r in read_jsonl(dataset.data_dir / 'problems_all.jsonl')]

    def _load(self, dataset):
        """{problem_id: [responses]} of the file for `dataset`'s setting, checked against the split."""
        if dataset.with_bg in self._answers:
            return self._answers[dataset.with_bg]
        path = self.file_for(dataset.with_bg)
        try:
            raw = json.loads(path.read_text(encoding='utf-8'))
        except (OSError, ValueError) as exc:
            raise ConfigError(f'cannot read OpenCompass predictions {path}: {exc}', key='path',
                              fix='point `path` at predictions/<model>/SciCode.json or at its folder') from None
        from ..datasets.scicode import SciCodeDataset
        split = SciCodeDataset(path=str(dataset.data_dir), split='test', verify_sha256=dataset.verify_sha256)
        steps = {p.problem_id: len(p.scored_steps) for p in split.problems}
        order = self._order(dataset)
        if not isinstance(raw, dict) or len(raw) != len(order):
            count = len(raw) if isinstance(raw, (dict, list)) else 0
            raise ConfigError(f'{path} holds {count} problems; OpenCompass\'s SciCode test split has '
                              f'{len(order)}', key='path',
                              fix='use the predictions of OpenCompass\'s SciCode dataset (test split, all problems)')
        answers = {}
        for index, problem_id in enumerate(order):
            entry = raw.get(str(index))
            responses = entry.get('prediction') if isinstance(entry, dict) else None
            if not isinstance(responses, list):
                raise ConfigError(f'{path}: entry "{index}" (problem {problem_id}) has no prediction list',
                                  key='path', fix='use a file written by ChatInferencer(infer_mode=\'every\')')
            if len(responses) != steps.get(problem_id, -1):
                raise ConfigError(f'{path}: entry "{index}" (problem {problem_id}) has {len(responses)} '
                                  f'responses; problem {problem_id} has {steps.get(problem_id, 0)} generated '
                                  f'steps', key='path',
                                  fix='the file belongs to another split or data pack; give data_pack= if '
                                      'your SciCode_datasets.json orders the problems otherwise')
            answers[problem_id] = responses
        self._answers[dataset.with_bg] = answers
        return answers

    def generate(self, request: GenerationRequest) -> Generation:
        """The response OpenCompass gave to `request`'s step; an error Generation when it is not text.
        Raises RuntimeError when check_dataset has not read the file first."""
        answers = self._answers.get(request.with_bg)
        if answers is None:
            raise RuntimeError('check_dataset was not called')
        scored = [s.step_id for s in request.problem.steps if not s.prefilled]
        response = answers[request.problem.problem_id][scored.index(request.step.step_id)]
        if not isinstance(response, str):
            return Generation(error=f'the response for step {request.step.step_id} is not text')
        return Generation(text=response)
