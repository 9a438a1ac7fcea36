"""The results file of one model on one dataset, as a typed, versioned record.

    results/<model>/<dataset>.json

    results/<model>/<dataset>.texts.json.gz     its texts (texts.py)

Written by the evaluation task (tasks/evaluate.py) through `write_results` and
read by every reader (the summary's tables, the report, results/agentcompass.py,
the eval task's -r check) through `load_results`, never as plain JSON: a file is
checked against these records when it is read, and a file an older version
wrote is upgraded on the way in (`UPGRADES`), so readers see one shape whatever
wrote the file.

`schema_version` says which shape a file has: files written before it existed
have none and are version 1; version 2 added the version and the numbers
derived from the steps; version 3 keeps the long texts of its steps (prompts,
responses, test cases, gold code) once each, by content hash, in a text pack
beside the file (texts.py), which `load_results` puts back in place. The JSON
Schema of the current version is printed by
`python -m opencompass_scicode.results.schema` (`results_schema()`).

Every record keeps fields it does not name (`extra='allow'`): a file written by
a newer version, or with facts another part adds, loses nothing when read.
"""
import json
import re
from pathlib import Path
from typing import Any, Optional, Union

from pydantic import BaseModel, Field, ValidationError

from ..errors import UserFacingError
from ..utils.workdir import write_json_atomic
from .record import Record, StepRecord
from .texts import MissingTexts, pack_name, pack_of, put_back, read_pack, split_texts, write_pack

SCHEMA_VERSION = 3


class ResultsFileError(UserFacingError):
    """A results file that cannot be read: not JSON, or not the shape its version says."""

    def __init__(self, path: Union[str, Path, None], why: str) -> None:
        self.path = path
        where = f'{path}: ' if path else ''
        super().__init__(f'{where}not a results file this version can read: {why}\n'
                         f'  fix: score the predictions again (-m eval -r) to write it anew')


class Answer(Record):
    """What the model gave for a step, as the predictions file holds it (the texts as asked and
    answered, the code as extracted or given whole, usage and any error)."""
    prompt: Optional[str] = Field(None, description='what the model was asked for this step (in a file: '
                                                    'prompt_sha256; put in place when read)')
    prompt_sha256: Optional[str] = Field(None, description="the prompt's sha256: its key in the texts file")
    response: Optional[str] = Field(None, description='what it answered, whole (in a file: response_sha256; put '
                                                      'in place when read)')
    response_sha256: Optional[str] = Field(None, description="the response's sha256: its key in the texts file")
    code: Optional[str] = Field(None, description='the code taken from the response (what ran)')
    program: Optional[str] = Field(None, description='a whole step program given as it is (no chain is built)')
    reasoning: Optional[str] = Field(None, description="the model's reasoning, where it gives it apart")
    finish_reason: Optional[str] = Field(None, description="why generation stopped ('length': the token limit)")
    usage: Optional[dict] = Field(None, description='tokens and time of the requests for this step')
    error: Optional[str] = Field(None, description='why there is no answer (the request failed)')

    OPTIONAL = ('prompt', 'prompt_sha256', 'response', 'response_sha256', 'code', 'program', 'reasoning',
                'finish_reason', 'usage', 'error')


class StepResult(StepRecord):
    """A step's verdict with what explains it: the answer it judged, the step's tests and, where the
    split has it, the gold code."""
    answer: Answer = Field(default_factory=Answer, description='what the model gave for the step')
    tests: Optional[list[str]] = Field(None, description="the step's test cases (in a file: tests_sha256; put in "
                                                          "place when read)")
    tests_sha256: Optional[list[str]] = Field(None, description="each test case's sha256: its key in the texts file")
    gold_code: Optional[str] = Field(None, description='the gold code, where the split has it (in a file: '
                                                       'gold_code_sha256; put in place when read)')
    gold_code_sha256: Optional[str] = Field(None, description="the gold code's sha256: its key in the texts file")

    OPTIONAL = StepRecord.OPTIONAL + ('tests', 'tests_sha256', 'gold_code', 'gold_code_sha256')
    # Built by keyword only: pydantic then builds the steps of a file it reads without calling
    # Python per step (StepRecord's own __init__ takes positions too).
    __init__ = BaseModel.__init__

    def verdict(self) -> StepRecord:
        """The verdict alone (what a shard hands its merge)."""
        return StepRecord.from_dict(self.model_dump())


class DefectFreeRates(Record):
    """The rates without the steps SciCode-Verified lists as defective (results/defects.py), beside
    the official ones."""
    steps_excluded: int = Field(description='scored steps left out as listed')
    main_problem_resolved: int = Field(description='of those, the problems solved')
    main_problem_total: int = Field(description='the problems with no listed step')
    main_problem_resolve_rate: float = Field(description='%')
    subproblem_correct: int = Field(description='of those, the steps that pass')
    subproblem_total: int = Field(description='the scored steps not listed')
    subproblem: float = Field(description='%')
    source: dict[str, Any] = Field(default_factory=dict, description='where the list comes from')


class NearMisses(Record):
    """Failed steps whose failing comparison was off by less than 10x its tolerance."""
    near_misses: int = Field(0, description='failed steps off by less than 10x the tolerance')
    failed: int = Field(0, description='failed steps')
    share: float = Field(0.0, description='percent of the failed steps')


class ProblemResult(Record):
    """One problem (one sample of it, when there are several) and its steps' results."""
    problem_id: str = Field(description="the problem, as SciCode numbers it: '13'")
    problem_correct: bool = Field(description='every scored step passes')
    total_correct: int = Field(description='scored steps that pass')
    total_steps: int = Field(description='scored steps (the prefilled ones are not)')
    sample: Optional[int] = Field(None, description='which sample, when there are several (0-based)')
    steps: list[StepResult] = Field(default_factory=list, description='every step, prefilled ones included')

    OPTIONAL = ('sample',)


class ResultsFile(Record):
    """One model on one dataset: the rates, their counts and intervals, how it was scored, and every
    problem's step results. Rates are percentages; the counts run over (problem, sample) pairs."""
    schema_version: int = Field(SCHEMA_VERSION, description='the shape of this file (a reader upgrades older ones)')
    texts_file: Optional[str] = Field(None, description="the file beside this one that holds its steps' texts "
                                                        "(prompts, responses, tests, gold code): gzip-compressed "
                                                        "JSON, {sha256: text}")
    model: str = Field(description="the model's abbr")
    dataset: str = Field(description="the dataset's abbr")
    split: Optional[str] = Field(None, description="'validation', 'test' or 'all'")
    with_bg: bool = Field(False, description="the prompts held the steps' scientific background")
    targets: Optional[str] = Field(None, description="the kind of targets scored against: 'official', 'verified', "
                                                     "'custom', 'opencompass-per-step' or 'regenerated'")
    main_problem_resolve_rate: float = Field(description='% of problems whose every scored step passes')
    subproblem: float = Field(description='% of scored steps that pass (micro average)')
    main_problem_resolved: int = Field(description='problems (times samples) whose every scored step passes')
    main_problem_total: int = Field(description='problems (times samples) scored')
    subproblem_correct: int = Field(description='scored steps (times samples) that pass')
    subproblem_total: int = Field(description='steps (times samples) scored')
    subproblem_not_scored: int = Field(0, description='scored steps the harness could not run (eval_error); '
                                                      'counted as failed')
    main_problem_resolve_rate_ci95: Optional[list[float]] = Field(None, description='95% interval [low, high], '
                                                                                    'problems resampled')
    subproblem_ci95: Optional[list[float]] = Field(None, description='95% interval [low, high], problems resampled')
    accuracy: Optional[float] = Field(None, description="OpenCompass's name for main_problem_resolve_rate")
    sub_accuracy: Optional[float] = Field(None, description="OpenCompass's name for subproblem")
    samples: Optional[int] = Field(None, description='samples per problem (infer_cfg n), when more than one')
    pass_at_k: Optional[dict[str, dict[str, float]]] = Field(None, description='{"main": {k: %}, "subproblem": '
                                                                               '{k: %}}, when more than one sample')
    categories: dict[str, int] = Field(default_factory=dict, description='scored steps in each category')
    near_misses: Optional[NearMisses] = Field(None, description='how many failed steps were near misses')
    excluding_known_defects: Optional[DefectFreeRates] = Field(None, description='the rates without the steps '
                                                                                 'SciCode-Verified lists as defective')
    targets_file: Optional[str] = Field(None, description='the targets file the steps were scored against')
    targets_sha256: Optional[str] = Field(None, description='the sha256 of that targets file (null where there is '
                                                            'no single file)')
    protocol: Optional[dict[str, Any]] = Field(None, description="how the numbers were made: name (as made, e.g. "
                                                                 "'official+timeout=300'), base, fingerprint (8 hex "
                                                                 "digits over every knob), knobs, overrides, "
                                                                 "reproduces (protocols/)")
    scored_with: Optional[dict[str, dict[str, str]]] = Field(None, description='per scoring environment, the '
                                                                                     'versions of python, numpy, '
                                                                                     'scipy, sympy and h5py that '
                                                                                     'scored the steps')
    environment_differences: Optional[list[dict[str, Any]]] = Field(None, description='the steps whose '
                                                          'scoring environments gave different verdicts')
    evaluator: dict[str, Any] = Field(default_factory=dict, description='the settings it was scored with')
    protections: dict[str, Any] = Field(default_factory=dict, description='the sandbox layers that were active')
    predictions_digest: Optional[str] = Field(None, description='the digest of the predictions scored (-r reuses '
                                                                'these results only for the same ones)')
    duration_s: Optional[float] = Field(None, description='how long scoring took')
    created_at: Optional[str] = Field(None, description='when the file was written (ISO 8601, UTC)')
    problems: list[ProblemResult] = Field(default_factory=list, description='every problem (and sample) scored')

    # the protocol's fields are left out of files written before protocols were recorded
    OPTIONAL = ('texts_file', 'samples', 'pass_at_k', 'targets_sha256', 'protocol', 'scored_with',
                'environment_differences')

    def steps(self) -> list[StepResult]:
        """Every step result of every problem (and sample), in file order."""
        return [step for problem in self.problems for step in problem.steps]

    def problem_counts(self) -> list[dict]:
        """Each problem entry's id and counts, as results/stats.py reads them."""
        return [{'problem_id': p.problem_id, 'problem_correct': p.problem_correct,
                 'total_correct': p.total_correct, 'total_steps': p.total_steps} for p in self.problems]

    def to_json(self) -> dict:
        """The file's content as plain JSON data."""
        return self.model_dump(mode='json')


def _from_1(data: dict) -> dict:
    """Files written before `schema_version` existed: the numbers a reader needs that early writers
    did not write (`categories`, `subproblem_not_scored`, `accuracy`, `sub_accuracy`) are derived
    from what they did."""
    data.setdefault('accuracy', data.get('main_problem_resolve_rate'))
    data.setdefault('sub_accuracy', data.get('subproblem'))
    steps = [s for p in data.get('problems') or () for s in p.get('steps') or () if s.get('status') != 'skipped']
    if 'categories' not in data:
        counts = {}
        for step in steps:
            category = step.get('category') or step.get('status')
            counts[category] = counts.get(category, 0) + 1
        data['categories'] = dict(sorted(counts.items(), key=lambda item: -item[1]))
    data.setdefault('subproblem_not_scored', sum(1 for s in steps if s.get('status') == 'eval_error'))
    data['schema_version'] = 2
    return data


def _from_2(data: dict) -> dict:
    """Files whose texts (prompts, responses, test cases, gold code) are in the step records
    themselves: read as they are (a record holds a text in place or names it by hash)."""
    data['schema_version'] = 3
    return data


# version -> how a file of that version becomes one of the next
UPGRADES = {1: _from_1, 2: _from_2}


def upgraded(data: dict) -> dict:
    """The content of a results file of any version this one knows, in the current version's shape."""
    version = data.get('schema_version', 1)
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise ValueError(f'schema_version {version!r}: written by a newer version (this one reads up to '
                         f'{SCHEMA_VERSION})')
    while version < SCHEMA_VERSION:
        data = UPGRADES[version](data)
        version = data['schema_version']
    return data


# The writer puts the version first: a file of the current version is read straight from its text.
_VERSION_FIRST = re.compile(rb'\s*\{\s*"schema_version"\s*:\s*(\d+)\s*,')


def _current(text: Union[bytes, str]) -> bool:
    head = text[:64].encode() if isinstance(text, str) else text[:64]
    found = _VERSION_FIRST.match(head)
    return found is not None and int(found.group(1)) == SCHEMA_VERSION


def read_results(data: Union[dict, bytes, str], path: Union[str, Path, None] = None,
                 texts: bool = True) -> ResultsFile:
    """A results file's content (parsed, or its JSON text), checked and upgraded, with its texts
    put in place from the texts file beside `path` (`texts=False`: left named by hash, for a
    reader of the numbers and verdicts alone). ResultsFileError names the file (`path`) and what
    is wrong."""
    try:
        if not isinstance(data, dict) and _current(data):
            results = ResultsFile.model_validate_json(data)
        else:
            if not isinstance(data, dict):
                data = json.loads(data)
            if not isinstance(data, dict):
                raise ValueError('not a JSON object')
            results = ResultsFile.model_validate(upgraded(data))
        if texts and results.texts_file is not None:
            if path is None:
                raise MissingTexts('its texts are in a texts file, and no path says where the results file is')
            put_back(results, read_pack(pack_of(path, results.texts_file)))
        return results
    except ValidationError as exc:
        first = exc.errors()[0]
        where = '.'.join(str(part) for part in first['loc'])
        raise ResultsFileError(path, f'{where}: {first["msg"]}') from None
    except ValueError as exc:            # MissingTexts too
        raise ResultsFileError(path, str(exc)) from None


def load_results(path: Union[str, Path], texts: bool = True) -> ResultsFile:
    """The results file at `path`, checked and upgraded, its texts in place unless `texts=False`
    (ResultsFileError if it cannot be read)."""
    path = Path(path)
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise ResultsFileError(path, str(exc)) from None
    return read_results(text, path, texts=texts)


def write_results(path: Union[str, Path], results: ResultsFile) -> None:
    """Write `results` whole: its texts in the texts file beside it (texts.py), first, then the file
    that names them (each is the old file or the new one to a reader)."""
    content, texts = split_texts(results.to_json())
    content.pop('texts_file', None)
    content = {'schema_version': content.pop('schema_version'), 'texts_file': pack_name(path), **content}
    write_pack(Path(path).parent / content['texts_file'], texts)
    write_json_atomic(path, content)


def results_paths(path: Union[str, Path]) -> list:
    """The files a results file at `path` is written as: itself and its texts file."""
    return [Path(path), Path(path).parent / pack_name(path)]


def results_schema() -> dict:
    """The JSON Schema of a results file of the current version."""
    schema = ResultsFile.model_json_schema()
    schema['title'] = f'SciCode results file, schema_version {SCHEMA_VERSION}'
    return schema


def main() -> int:
    """Print the results file's JSON Schema."""
    print(json.dumps(results_schema(), indent=2))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
