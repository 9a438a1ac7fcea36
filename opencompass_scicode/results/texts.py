"""The long texts of a results file, each stored once, by its content hash, in a pack beside it.

Most of a results file used to be text: the prompt each step was asked with (which holds the
problem and the sample's earlier code), the model's response, the step's test cases (the same for
every sample and model) and its gold code. Since schema_version 3 a step names each of them by the
sha256 of its UTF-8 bytes, and the texts are in the file's text pack:

    results/<model>/<dataset>.json            the numbers and the step records, with
                                              "texts_file": "<dataset>.texts.json.gz"
    results/<model>/<dataset>.texts.json.gz   {sha256: text}: gzip-compressed JSON

In a step record: `answer.prompt_sha256`, `answer.response_sha256`, `tests_sha256` (one per test
case, in order) and `gold_code_sha256`. The code that ran (`answer.code`) stays in place, beside
its verdict. A text that several steps share (a test case, the first step's prompt of every
sample) is stored once, and the pack is compressed: the prompts of one problem repeat each other
almost whole. `load_results` puts every text back in its place, so readers see `answer.prompt`
as before; `python -m opencompass_scicode.results.texts FILE` prints a results file with its texts
in place, and `--text SHA256` prints one text.

One pack per results file (rather than one per run): a file and its pack are written, read,
copied and replaced together by the one task that scores that model on that dataset, with no
lock between tasks; the texts two results files share (the first steps' prompts of the same
dataset) are too few to pay for one (measured on benchmarks/scale.py: 4 MB of 265 MB of prompts).
"""
import gzip
import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Optional, Union

from pydantic_core import from_json

from ..utils.workdir import replace_whole

PACK_SUFFIX = '.texts.json.gz'
# (record's field holding the text, field naming it by hash) in the `answer` of a step record, and on
# the step record itself; `tests` is a list of texts, named by a list of hashes.
ANSWER_TEXTS = (('prompt', 'prompt_sha256'), ('response', 'response_sha256'))
STEP_TEXTS = (('tests', 'tests_sha256'), ('gold_code', 'gold_code_sha256'))


class MissingTexts(ValueError):
    """A step names a text that its results file's pack does not hold (or there is no pack)."""


def text_hash(text: str) -> str:
    """The sha256 of the text's UTF-8 bytes, in hex: what a step record names the text by."""
    return hashlib.sha256(text.encode('utf-8')).hexdigest()


def pack_name(results_path: Union[str, Path]) -> str:
    """The file name of the pack of the results file at `results_path` (it goes beside it)."""
    name = Path(results_path).name
    return (name[:-len('.json')] if name.endswith('.json') else name) + PACK_SUFFIX


class _Packer:
    """Moves texts out of step records into {hash: text}."""

    def __init__(self) -> None:
        self.texts = {}

    def ref(self, text: str) -> str:
        """The reference to `text` (its hash); the text itself is kept once."""
        digest = text_hash(text)
        self.texts.setdefault(digest, text)
        return digest

    def take(self, record: dict, pairs: tuple, where: str) -> dict:
        """`record` with each text of `pairs` replaced, where it was, by its hash."""
        refs = {}
        for field, ref_field in pairs:
            value = record.get(field)
            if value is None:
                if record.get(ref_field) is not None:
                    raise MissingTexts(f'{where}: {ref_field} without its text (read with texts=False); read '
                                       f'the file with its texts to write it')
                continue
            refs[field] = (ref_field, [self.ref(v) for v in value] if isinstance(value, list) else self.ref(value))
        if not refs:
            return record
        named = {ref_field for ref_field, _ in refs.values()}
        out = {}
        for key, value in record.items():
            if key in refs:
                out[refs[key][0]] = refs[key][1]
            elif key not in named:
                out[key] = value
        return out


def split_texts(content: dict) -> tuple:
    """(the results file's content with every step's texts named by hash, {hash: text})."""
    packer = _Packer()
    for p, problem in enumerate(content.get('problems') or ()):
        steps = problem.get('steps') or []
        for s, step in enumerate(steps):
            where = f'problems.{p}.steps.{s}'
            if isinstance(step.get('answer'), dict):
                step['answer'] = packer.take(step['answer'], ANSWER_TEXTS, f'{where}.answer')
            steps[s] = packer.take(step, STEP_TEXTS, where)
    return content, packer.texts


def write_pack(path: Union[str, Path], texts: dict) -> None:
    """Write the pack whole (readers see the old one or the new one); the same texts give the same bytes."""
    blob = json.dumps(texts, ensure_ascii=False, separators=(',', ':')).encode('utf-8')
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f'.{path.name}.{os.getpid()}.{threading.get_ident()}.tmp')
    replace_whole(tmp, path, gzip.compress(blob, compresslevel=6, mtime=0))


def read_pack(path: Union[str, Path]) -> dict:
    """{hash: text} of the pack at `path`; MissingTexts if it cannot be read."""
    try:
        # pydantic's JSON reader: four times as fast as json's on a pack's long strings
        texts = from_json(gzip.decompress(Path(path).read_bytes()))
    except (OSError, EOFError, ValueError) as exc:
        raise MissingTexts(f'its texts file {path} cannot be read ({exc})') from None
    if not isinstance(texts, dict):
        raise MissingTexts(f'its texts file {path} is not a {{sha256: text}} object')
    return texts


def _lookup(texts: dict, digest: str, where: str) -> str:
    try:
        return texts[digest]
    except KeyError:
        raise MissingTexts(f'{where} names the text {digest}, which its texts file does not hold') from None


def put_back(results, texts: dict) -> None:
    """Put each text a step of `results` (a ResultsFile) names by hash in its place."""
    for p, problem in enumerate(results.problems):
        for s, step in enumerate(problem.steps):
            where = f'problems.{p}.steps.{s}'
            answer = step.answer
            for field, ref_field in ANSWER_TEXTS:
                digest = getattr(answer, ref_field)
                if digest is not None:
                    setattr(answer, field, _lookup(texts, digest, f'{where}.answer.{ref_field}'))
            if step.tests_sha256 is not None:
                step.tests = [_lookup(texts, d, f'{where}.tests_sha256') for d in step.tests_sha256]
            if step.gold_code_sha256 is not None:
                step.gold_code = _lookup(texts, step.gold_code_sha256, f'{where}.gold_code_sha256')


def pack_of(results_path: Union[str, Path], texts_file: Optional[str]) -> Path:
    """Where the pack a results file names is: beside it."""
    return Path(results_path).parent / (texts_file or pack_name(results_path))


def main(argv: Optional[list] = None) -> int:
    """python -m opencompass_scicode.results.texts RESULTS_FILE [--text SHA256]"""
    import argparse

    from .schema import load_results
    parser = argparse.ArgumentParser(
        prog='python -m opencompass_scicode.results.texts',
        description='Print a results file with every text (prompt, response, tests, gold code) in its place, '
                    'or one text of its pack by its sha256.')
    parser.add_argument('results_file', help='results/<model>/<dataset>.json')
    parser.add_argument('--text', metavar='SHA256', help='print this text alone')
    args = parser.parse_args(argv)
    results = load_results(args.results_file)
    if args.text:
        texts = read_pack(pack_of(args.results_file, results.texts_file)) if results.texts_file else {}
        if args.text not in texts:
            parser.exit(1, f'{args.results_file}: no text {args.text} in its texts file\n')
        print(texts[args.text])
        return 0
    print(json.dumps(results.to_json(), indent=1, ensure_ascii=False))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
