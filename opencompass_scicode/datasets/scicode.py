"""SciCode problems and steps, read from the official JSONL files."""
import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, Optional, Union

from ..errors import ConfigError, DataError
from ..protocols import DEFAULT as DEFAULT_PROTOCOL
from ..protocols import PROTOCOLS
from ..protocols import check_name as check_protocol
from ..registry import register
from . import verified
from .chain import PREFILLED_MODES, PrefilledMode
from .files import DEFAULT_DATA_DIR, prepare_data, sha256_of

SPLITS = {
    'validation': ('problems_dev.jsonl',),
    'test': ('problems_all.jsonl',),
    # Same order as the official harness when it adds the dev problems.
    'all': ('problems_all.jsonl', 'problems_dev.jsonl'),
}
Split = Literal[tuple(SPLITS)]
# Steps whose code is given by the benchmark: never generated, never scored,
# but part of the code that later steps build on.
PREFILLED_STEPS = frozenset({'13.6', '62.1', '76.3'})
# A problem's category where its record names none (every official record): AgentCompass's word.
UNCLASSIFIED = 'unclassified'
ALL_CATEGORIES = 'all'

# Which targets a dataset is scored against: 'official' (the official file, or what the search
# order of targets/locate.py finds), or 'verified' (SciCode-Verified's corrected test_data_cleaned.h5,
# with its corrected test problems, verified.py, in place of the official ones).
TARGETS_MODES = ('official', 'verified')
TargetsMode = Literal[TARGETS_MODES]
URL_SCHEMES = ('http://', 'https://', 'file://')

TEMPLATE_WITH_BACKGROUND = 'multistep_template.txt'
TEMPLATE_WITHOUT_BACKGROUND = 'background_comment_template.txt'


@dataclass(frozen=True)
class Step:
    step_id: str            # official step_number, e.g. "10.3"
    index: int              # 1-based position within its problem
    description: str
    background: str
    function_header: str
    return_line: str
    test_cases: tuple
    ground_truth_code: Optional[str] = None

    @property
    def prefilled(self) -> bool:
        """Whether the benchmark gives this step's code (13.6, 62.1, 76.3): never asked, never
        scored."""
        return self.step_id in PREFILLED_STEPS


@dataclass(frozen=True)
class Problem:
    problem_id: str
    name: str
    dependencies: str
    steps: tuple
    source: str = ''        # which JSONL file it came from
    category: str = UNCLASSIFIED    # the record's `category`; the official records carry none

    @property
    def scored_steps(self) -> list[Step]:
        """The steps of this problem that are asked and judged (the prefilled ones left out)."""
        return [s for s in self.steps if not s.prefilled]


def _parse_problem(record, source):
    # The prefilled steps have nulls where the others have text: `return_line` of 13.6 and 62.1 is
    # null, their `test_cases` empty. No prompt shows a prefilled step's return line and no test
    # runs for it, so the empty values are what every reader (prompts, costs, scoring) should see.
    steps = []
    for index, raw in enumerate(record['sub_steps'], start=1):
        steps.append(Step(
            step_id=str(raw['step_number']),
            index=index,
            description=raw['step_description_prompt'],
            background=raw.get('step_background') or '',
            function_header=raw['function_header'],
            return_line=raw.get('return_line') or '',
            test_cases=tuple(raw.get('test_cases') or ()),
            ground_truth_code=raw.get('ground_truth_code'),
        ))
    return Problem(
        problem_id=str(record['problem_id']),
        name=record.get('problem_name', ''),
        dependencies=record['required_dependencies'],
        steps=tuple(steps),
        source=source,
        category=str(record.get('category') or UNCLASSIFIED),
    )


def read_jsonl(path) -> list[dict[str, Any]]:
    """The records of a JSON Lines file, blank lines skipped."""
    with open(path, encoding='utf-8') as fh:
        return [json.loads(line) for line in fh if line.strip()]


@register
@dataclass
class SciCodeDataset:
    """One split of SciCode, optionally restricted to some problems.

    `with_bg` only changes prompts; it is kept here so one object describes
    one dataset entry of a config. `prefilled_mode` ('official' or 'full', see
    chain.py) is what the chain holds for the prefilled steps: prompts and test
    programs both read it from here, so they cannot disagree.
    """
    path: str = DEFAULT_DATA_DIR
    split: Split = 'validation'
    with_bg: bool = False
    sample_ids: Optional[Union[list, tuple]] = None
    h5py_file: Optional[str] = None
    verify_sha256: bool = True
    prepare: bool = True
    abbr: Optional[str] = None
    prefilled_mode: PrefilledMode = 'official'
    category: Optional[Union[str, list, tuple]] = None
    targets: TargetsMode = 'official'
    targets_url: Optional[Union[str, list, tuple]] = None    # where missing targets are fetched from, in order
    targets_sha256: Optional[str] = None                     # what they must hash to (default: the mode's file)
    problems_url: Optional[Union[str, list, tuple]] = None   # targets='verified': where corrected problems come from
    problems_sha256: Optional[str] = None                    # what they must hash to (default: the published file)
    protocol: Literal[tuple(PROTOCOLS)] = DEFAULT_PROTOCOL     # how its numbers are made (protocols/); its knobs are filled in by config/
    _problems: list = field(default=None, init=False, repr=False)
    _checked: bool = field(default=False, init=False, repr=False)
    _files_dir: Optional[Path] = field(default=None, init=False, repr=False)
    _prefilled: dict = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def entry_options(cls, entry: dict, key: str = 'dataset') -> dict:
        """The constructor options of a `datasets` entry: its keys, with `reader_cfg`'s spread
        out, and `infer_cfg`/`eval_cfg` left to inference and scoring. `prefilled_mode` may
        still be set at `eval_cfg.evaluator`, its old place: taken from there when the dataset
        sets none, refused when the two differ (prompts and test programs read one setting)."""
        options = {k: v for k, v in entry.items() if k not in ('type', 'reader_cfg', 'infer_cfg', 'eval_cfg')}
        options.update(entry.get('reader_cfg') or {})
        old = cls.evaluator_entry(entry).get('prefilled_mode')
        own = entry.get('prefilled_mode')
        if old is not None and own is not None and old != own:
            raise ConfigError(f'prefilled_mode {own!r} here and {old!r} at {key}.eval_cfg.evaluator.prefilled_mode '
                              f'differ; prompts and test programs read one setting, the dataset\'s',
                              key=f'{key}.prefilled_mode',
                              fix='keep prefilled_mode on the dataset and remove it from eval_cfg.evaluator '
                                  '(its old place)')
        if old is not None:
            options['prefilled_mode'] = old
        return options

    @staticmethod
    def evaluator_entry(entry: dict) -> dict:
        """The evaluator entry of a `datasets` entry (`eval_cfg.evaluator`; {} where it gives none)."""
        return dict((entry.get('eval_cfg') or {}).get('evaluator') or {})

    def evaluator_options(self) -> dict:
        """What this dataset tells its evaluator: the prefilled_mode it scores with (the dataset's,
        which prompts read too; results files keep it, and `-r` compares it)."""
        return {'prefilled_mode': self.prefilled_mode}

    def __post_init__(self):
        check_protocol(self.protocol)
        if self.split not in SPLITS:
            raise ConfigError(f'unknown split {self.split!r}', key='split',
                              fix=f'use one of {", ".join(map(repr, SPLITS))}')
        for pid in self.sample_ids or ():
            if not isinstance(pid, (str, int)) or isinstance(pid, bool):
                raise ConfigError(f'problem ids must be strings like "10", got {pid!r}', key='sample_ids')
        if self.prefilled_mode not in PREFILLED_MODES:
            raise ConfigError(f'unknown prefilled_mode {self.prefilled_mode!r}', key='prefilled_mode',
                              fix=f'use one of {", ".join(map(repr, PREFILLED_MODES))}')
        if self.category is not None and not (
                isinstance(self.category, str) or (isinstance(self.category, (list, tuple)) and self.category
                                                   and all(isinstance(c, str) for c in self.category))):
            raise ConfigError(f'must be {ALL_CATEGORIES!r}, a category or a non-empty list of them, '
                              f'got {self.category!r}', key='category', fix=f"e.g. category={UNCLASSIFIED!r}")
        if self.targets not in TARGETS_MODES:
            raise ConfigError(f'unknown targets mode {self.targets!r}', key='targets',
                              fix=f'use one of {", ".join(map(repr, TARGETS_MODES))}')
        _check_sources(self.targets_urls, self.targets_sha256, 'targets')
        _check_sources(self.problems_urls, self.problems_sha256, 'problems')
        if (self.problems_url is not None or self.problems_sha256 is not None) and self.targets != 'verified':
            key = 'problems_url' if self.problems_url is not None else 'problems_sha256'
            raise ConfigError('only SciCode-Verified\'s corrected problems are fetched (the official ones '
                              'come with the data files)', key=key,
                              fix=f"set targets='verified', or remove {key}")
        if self.abbr is None:
            self.abbr = default_dataset_abbr(self.split, self.with_bg, self.targets)

    @property
    def targets_urls(self) -> list[str]:
        """targets_url as a list (empty: the mode's default sources)."""
        return [self.targets_url] if isinstance(self.targets_url, str) else list(self.targets_url or ())

    @property
    def problems_urls(self) -> list[str]:
        """problems_url as a list (empty: the published file)."""
        return [self.problems_url] if isinstance(self.problems_url, str) else list(self.problems_url or ())

    @property
    def data_dir(self) -> Path:
        """The dataset's data directory (`path`)."""
        return Path(self.path)

    @property
    def files_dir(self) -> Path:
        """Where the official data files (problems, templates, prefilled steps) are read from:
        the data directory, unless read_files_from() named a copy."""
        return self._files_dir or self.data_dir

    def read_files_from(self, folder) -> None:
        """Read the official data files from `folder`, a checked copy made elsewhere (a dry run
        reads the problems without writing the files into the data directory); targets and
        SciCode-Verified's problems are still looked for in the data directory."""
        self._files_dir = Path(folder)
        self._checked = True

    @property
    def verified_problems_path(self) -> Path | None:
        """Where SciCode-Verified's corrected test problems are read from in place of the official
        ones; None when this dataset reads official problems only (official targets, or a
        validation split, which SciCode-Verified did not republish)."""
        if self.targets != 'verified' or verified.REPLACES not in SPLITS[self.split]:
            return None
        return self.data_dir / verified.PROBLEMS_NAME

    def ensure_files(self, allow_download=True) -> None:
        """Put the official data files in place (fetched if `allow_download`); DataError otherwise."""
        if self._checked:
            return
        if self.prepare:
            prepare_data(self.data_dir, allow_download=allow_download,
                         verify=self.verify_sha256)
        else:
            from .files import missing_files, how_to_stage
            if missing_files(self.data_dir):
                raise DataError(f'{self.data_dir}/ is incomplete.\n  ' + how_to_stage(self.data_dir))
        self._checked = True     # once per object: checksums of every file are not free

    @property
    def problems(self) -> list[Problem]:
        """The chosen problems (split, sample_ids), read on first use."""
        if self._problems is None:
            self._problems = self._load()
        return self._problems

    def _load(self):
        self.ensure_files()
        problems = []
        for name in SPLITS[self.split]:
            path = self.files_dir / name
            if name == verified.REPLACES and self.verified_problems_path:
                path = self._checked_verified_problems()
            for record in read_jsonl(path):
                problems.append(_parse_problem(record, path.name))
        problems = self._of_category(problems)
        if self.sample_ids is None:
            return problems
        wanted = [str(pid) for pid in self.sample_ids]
        known = {p.problem_id for p in problems}
        unknown = [pid for pid in wanted if pid not in known]
        if unknown:
            raise ConfigError(
                f'problem id(s) {", ".join(unknown)} are not in split {self.split!r}',
                key='sample_ids',
                fix=f'pick ids from: {", ".join(sorted(known, key=_id_key))}')
        keep = set(wanted)
        return [p for p in problems if p.problem_id in keep]

    def _checked_verified_problems(self):
        """The corrected problems file, present and (with verify_sha256) the one pinned."""
        path = self.verified_problems_path
        if not path.is_file():
            raise DataError(f'dataset {self.abbr!r} (targets=\'verified\') reads SciCode-Verified\'s corrected '
                            f'problems from {path}, which does not exist.\n  fix: '
                            f'{verified.manual_steps(self.data_dir)}')
        expected = self.problems_sha256 or verified.PROBLEMS_SHA256
        if self.verify_sha256 and (digest := sha256_of(path)) != expected.lower():
            pinned = 'the digest problems_sha256= pins' if self.problems_sha256 else 'the published file\'s'
            raise DataError(f'dataset {self.abbr!r}: {path} has sha256 {digest}, not {expected} '
                            f'({pinned}).\n  fix: delete it and fetch it again '
                            f'({verified.manual_steps(self.data_dir)}), pin another release with '
                            f'problems_sha256=, or set reader_cfg=dict(verify_sha256=False) to use '
                            f'modified problems on purpose')
        return path

    def _of_category(self, problems):
        """The problems of the chosen categories (an exact match; a list is their union)."""
        chosen = [self.category] if isinstance(self.category, str) else list(self.category or ())
        if not chosen or ALL_CATEGORIES in chosen:
            return problems
        kept = [p for p in problems if p.category in chosen]
        if not kept:
            present = sorted({p.category for p in problems})
            raise ConfigError(f'no problem of split {self.split!r} is in category '
                              f'{", ".join(map(repr, chosen))}', key='category',
                              fix=f'use {ALL_CATEGORIES!r} or one of the categories present: '
                                  f'{", ".join(map(repr, present))} (the official records carry none: '
                                  f'all are {UNCLASSIFIED!r})')
        return kept

    @cached_property
    def template(self) -> str:
        """The prompt template of this dataset's background setting, as the official files give it."""
        name = TEMPLATE_WITH_BACKGROUND if self.with_bg else TEMPLATE_WITHOUT_BACKGROUND
        self.ensure_files()
        return (self.files_dir / name).read_text(encoding='utf-8')

    def prefilled_file(self, step_id) -> str:
        """The text of prefilled step `step_id`'s file, read once."""
        if step_id not in self._prefilled:
            self.ensure_files()
            self._prefilled[step_id] = (self.files_dir / f'{step_id}.txt').read_text(encoding='utf-8')
        return self._prefilled[step_id]

    def problem(self, problem_id) -> Problem:
        """The problem `problem_id` among the chosen ones; KeyError if it is not chosen."""
        for p in self.problems:
            if p.problem_id == problem_id:
                return p
        raise KeyError(problem_id)

    @property
    def validation_only(self) -> bool:
        """Every chosen problem is a validation problem (split 'validation', or 'all' with
        sample_ids of validation problems alone): all have gold code, so their targets can be
        regenerated and the test targets are not needed."""
        if self.split != 'all':
            return self.split == 'validation'
        validation = SPLITS['validation'][0]
        return bool(self.problems) and all(p.source == validation for p in self.problems)

    @property
    def scored_step_count(self) -> int:
        """How many steps of the chosen problems are scored."""
        return sum(len(p.scored_steps) for p in self.problems)


def _check_sources(urls, sha256, what):
    """`<what>_url` and `<what>_sha256` of a dataset: URLs, and a digest."""
    for url in urls:
        if not (isinstance(url, str) and url.startswith(URL_SCHEMES)):
            raise ConfigError(f'{url!r} is not a URL', key=f'{what}_url',
                              fix='give an http(s):// or file:// URL, or a list of them (tried in order)')
    if sha256 is not None and not _is_sha256(sha256):
        raise ConfigError(f'{sha256!r} is not a sha256 digest', key=f'{what}_sha256',
                          fix='give the 64 hex digits `sha256sum FILE` prints')


def _is_sha256(text):
    return isinstance(text, str) and len(text) == 64 and all(c in '0123456789abcdefABCDEF' for c in text)


def _id_key(pid):
    return (0, int(pid)) if pid.isdigit() else (1, pid)


def default_dataset_abbr(split, with_bg, targets='official') -> str:
    """The abbr a dataset entry gets unless it names one: `scicode_<split>`, `_verified`,
    `_with_background` as they apply."""
    # A verified dataset's name says so: its scores are never read as official ones.
    return (f'scicode_{split}' + ('_verified' if targets == 'verified' else '')
            + ('_with_background' if with_bg else ''))
