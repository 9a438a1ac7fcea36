"""Regenerated validation targets: run the gold code on each test and keep what it compares.

The official targets file cannot be downloaded from our machines. For the
validation split (which ships gold code) the targets can be rebuilt: every
dev test compares some expression against `target`; running the gold code
and recording that expression gives the value the official file holds, up to
non-determinism in the gold code itself. Results using them say so.
"""
import fcntl
import json
import os
import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from ..datasets.chain import code_chain, gold_code
from ..datasets.files import H5_NAME
from ..sandbox.scripts import ScriptRunner
from ..targets.locate import Targets, load_targets, plan_targets, read_report, report_path, untried_steps
from .capture import RECORDER, CaptureError, capture_test
from .evaluator import STEP_TIMEOUT_S
from .program import code_prefix, with_simps_shim
from ..pool.timings import StepDurations, durations_path


def regeneration_program(problem, step, prefilled_text, out_path) -> str:
    """The program that runs `step`'s gold code and its tests and records the values they compare
    against into `out_path`."""
    gold = {s.step_id: gold_code(s) or '' for s in problem.steps}
    prior = code_chain(problem, step.index, gold, prefilled_text, 'official')
    parts = [code_prefix(problem.dependencies, [c or '' for c in prior], gold[step.step_id]),
             '\n\nfrom opencompass_scicode.targets.recorder import TargetRecorder\n',
             f'__recorder = TargetRecorder({str(out_path)!r}, {step.step_id!r}, {len(step.test_cases)})\n',
             f'{RECORDER} = __recorder.record\n']
    for index, test in enumerate(step.test_cases):
        source, _ = capture_test(test)
        parts.append(f'__recorder.begin({index})\n{source}\n')
    parts.append('__recorder.finish()\n')
    program = ''.join(parts)
    return with_simps_shim(program)


def regenerate(dataset, out_path, parallel=None, timeout=STEP_TIMEOUT_S, progress=None) -> dict[str, str]:
    """Add to `out_path` the targets of every gold-code step of `dataset` it lacks, `parallel`
    gold-code programs at once (default: one per CPU), each `timeout` seconds at most.

    Returns the report {step_id: 'ok' | why it failed} for all steps tried so
    far (kept next to the file). Failed steps are left out of the file, so
    evaluating them gives `eval_error`, never a pass.
    """
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    report = read_report(out_path)
    steps = [(p, s) for p in dataset.problems for s in p.scored_steps
             if s.ground_truth_code and s.step_id not in report]
    if not steps:
        return report
    executor = ScriptRunner(timeout=timeout, max_output_bytes=8 * 1024)
    new, seconds = {}, []
    with tempfile.TemporaryDirectory(prefix='scicode-regen-') as tmp:
        def run_one(problem, step):
            part = Path(tmp) / f'{step.step_id}.h5'
            try:
                program = regeneration_program(problem, step, dataset.prefilled_file, part)
            except CaptureError as exc:
                return f'cannot capture targets: {exc}'
            result = executor.run(program)
            if result.returncode != 0 or not part.is_file():
                why = 'timed out' if result.timed_out else result.stderr.strip()[-2000:]
                return f'gold code failed: {why}'
            seconds.append((step.step_id, 'gold code', result.duration_s))
            return 'ok'

        # Longest-running problems first would be better; gold steps are few, keep file order.
        with ThreadPoolExecutor(max_workers=parallel or os.cpu_count() or 1) as pool:
            futures = {pool.submit(run_one, p, s): s.step_id for p, s in steps}
            for future in as_completed(futures):
                new[futures[future]] = future.result()
                if progress:
                    progress(len(new), len(steps))
        import h5py        # here: an eval task that only reads targets does not load it
        partial = out_path.with_suffix('.partial')
        if out_path.is_file():
            shutil.copyfile(out_path, partial)
        with h5py.File(partial, 'a') as out:
            for step_id in sorted(new):
                if new[step_id] == 'ok':
                    with h5py.File(Path(tmp) / f'{step_id}.h5', 'r') as src:
                        src.copy(src[step_id], out, name=step_id)
            out.attrs['kind'] = 'regenerated'
        os.replace(partial, out_path)
    report.update(new)
    report_path(out_path).write_text(json.dumps(report, indent=1, sort_keys=True))
    # How long the gold code takes is a fair first guess for any model's code.
    StepDurations(durations_path(dataset.data_dir)).save(seconds)
    return report


def ensure_targets(dataset, progress=None) -> Targets:
    """The targets `dataset` is scored against, regenerating the steps still missing first."""
    kind, path = plan_targets(dataset)
    if kind == 'regenerated':
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path.with_suffix('.lock'), 'w') as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)   # one regeneration at a time across tasks
            if untried_steps(dataset, path):
                print(f'[targets] no official {H5_NAME}: regenerating validation targets from the gold '
                      f'code into {path} (cached)', file=sys.stderr, flush=True)
                regenerate(dataset, path, progress=progress)
    return load_targets(dataset)
