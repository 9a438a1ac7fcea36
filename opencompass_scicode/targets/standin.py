"""A stand-in targets file, for running the test split where the official test_data.h5 is absent.

It holds, in the official layout, the regenerated validation targets (rebuilt from the gold
code, see locate.py) and, for every scored step of the test split, one placeholder per test
case: NaN, which no comparison accepts. With it the whole `all` (or `test`) split runs offline,
inference, evaluation and summary, so the pipeline can be checked on the split users publish.
Its scores on test steps mean nothing: every test step fails. Its checksum is not the official
one, so results name its targets `custom`.

    python -m opencompass_scicode.targets.standin OUT.h5 [--data data/scicode]
"""
import argparse
import sys
from pathlib import Path

from ..datasets import SciCodeDataset
from ..datasets.files import DEFAULT_DATA_DIR
from ..errors import EXIT_OK, EXIT_USER_ERROR, DataError
from .locate import regenerated_path, untried_steps

PLACEHOLDER = float('nan')


def write_standin(out_path, data_dir=DEFAULT_DATA_DIR) -> dict[str, int]:
    """Write the stand-in file at `out_path`; returns {'validation': steps copied, 'test': steps
    with placeholders}. DataError when the regenerated validation targets are not all there."""
    import h5py
    validation = SciCodeDataset(path=str(data_dir), split='validation')
    test = SciCodeDataset(path=str(data_dir), split='test')
    source = regenerated_path(validation)
    missing = untried_steps(validation, source) if source.is_file() else ['all']
    if missing:
        raise DataError(f'the regenerated validation targets ({source}) are not complete yet '
                        f'(missing: {", ".join(missing[:5])}{", ..." if len(missing) > 5 else ""}).\n'
                        f'  fix: run the default job once (python run.py configs/eval_scicode.py), '
                        f'which regenerates them, then run this again')
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    partial = out_path.with_name(out_path.name + '.partial')
    counts = {'validation': 0, 'test': 0}
    with h5py.File(source, 'r') as src, h5py.File(partial, 'w') as dst:
        for problem in validation.problems:
            for step in problem.scored_steps:
                if step.step_id in src:
                    src.copy(src[step.step_id], dst, name=step.step_id)
                    counts['validation'] += 1
        for problem in test.problems:
            for step in problem.scored_steps:
                group = dst.create_group(step.step_id)
                for k in range(1, len(step.test_cases) + 1):
                    group.create_group(f'test{k}').create_dataset('var1', data=PLACEHOLDER)
                counts['test'] += 1
    partial.replace(out_path)      # never a half-written file under the final name
    return counts


def main(argv=None) -> int:
    """`python -m opencompass_scicode.targets.standin FILE`: write a stand-in targets file; the exit
    code."""
    parser = argparse.ArgumentParser(
        prog='python -m opencompass_scicode.targets.standin',
        description='Write a stand-in targets file (regenerated validation targets + NaN placeholders '
                    'for every test step) so that split "test" or "all" runs without test_data.h5.')
    parser.add_argument('out', help='the file to write, e.g. data/scicode/standin_targets.h5')
    parser.add_argument('--data', default=DEFAULT_DATA_DIR, help='the SciCode data directory')
    args = parser.parse_args(argv)
    try:
        counts = write_standin(args.out, args.data)
    except DataError as exc:
        print(f'error: {exc}', file=sys.stderr)
        return EXIT_USER_ERROR
    print(f'wrote {args.out}: {counts["validation"]} validation steps (regenerated targets), '
          f'{counts["test"]} test steps (placeholders). Use it with h5py_file={str(args.out)!r}; '
          f'results call it "custom", and every test step fails against it.')
    return EXIT_OK


if __name__ == '__main__':
    sys.exit(main())
