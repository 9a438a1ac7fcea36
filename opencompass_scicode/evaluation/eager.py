"""Scores a problem as soon as its inference is done, while other problems still generate.

Runs inside the inference task. A background thread turns each finished
problem into step jobs and hands them to the step pool of its evaluator's
settings (one step pool for all datasets that share them), so steps of
different problems run side by side and inference never waits for scoring.
Verdicts go to the run's shared verdict cache; the eval task later finds them
there (same program, tests, targets and limits -> same key) instead of running
them again.

Early scoring never breaks inference, with one exception: a full disk (a verdict,
or the progress, that cannot be written). That stops the task as it would stop
inference: the next `submit` and `finish` raise it.
"""
import json
import queue
import threading

from ..environments import CURRENT
from ..errors import NoSpaceError
from ..pool.timings import StepDurations, durations_path
from ..targets.locate import load_targets
from .sharing import SharedVerdicts, verdicts_dir


class EagerEvaluator:
    def __init__(self, run_dir, parts_and_evaluators, log=print, progress=None):
        """progress: the inference task's ProgressFile (utils/progress.py), told of each step
        scored early (`scored`) and of the steps running (its line names one running long)."""
        self.shared = SharedVerdicts(verdicts_dir(run_dir.root))
        self.log = log
        self.progress = progress
        self.items = queue.Queue()
        self.failure = None         # a full disk met on the background thread
        self.by_abbr = {}
        self.pools = {}
        for part, evaluator in parts_and_evaluators:
            if CURRENT not in evaluator.environments:
                # early verdicts are this interpreter's; the eval task scores the other environments
                log(f'{part.dataset.abbr}: no early evaluation (scored in {", ".join(evaluator.environments)})')
                continue
            try:
                # Targets not ready (regeneration pending) raise: that dataset is left to eval.
                targets = load_targets(part.dataset)
            except Exception as exc:      # never let early scoring break inference
                log(f'{part.dataset.abbr}: no early evaluation ({type(exc).__name__}: {exc})')
                continue
            # One pool per data directory (its timings) and, outside the machine's pool, per settings.
            settings = None if evaluator.shares_machine_pool else json.dumps(evaluator.settings(), sort_keys=True)
            same = (settings, str(part.dataset.data_dir))
            if same not in self.pools:
                durations = StepDurations(durations_path(part.dataset.data_dir))
                self.pools[same] = (evaluator.pool(self.shared, durations, run_dir.root), durations)
            self.by_abbr[part.dataset.abbr] = (part, evaluator, targets, *self.pools[same])
        for pool, _ in self.pools.values():
            pool.start()      # workers import the scientific stack while inference begins
        self.thread = threading.Thread(target=self._loop, name='early-evaluation', daemon=True)
        self.thread.start()

    def submit(self, part, problem, sample=0) -> None:
        """Called by the inference loop: cheap, the work happens on the background thread."""
        if self.failure is not None:
            raise self.failure
        if part.dataset.abbr in self.by_abbr:
            self.items.put((part.dataset.abbr, problem, sample))

    def _loop(self):
        while True:
            item = self.items.get()     # finish() puts the None that ends this loop
            if item is None or self.failure is not None:
                return
            abbr, problem, sample = item
            part, evaluator, targets, pool, durations = self.by_abbr[abbr]
            try:
                jobs, _ = evaluator.jobs(_OneProblem(part.dataset, problem), part.store.load(), targets,
                                         samples=[sample])
                pool.submit(evaluator.submissions(jobs, targets.path, durations,
                                                  lambda record, abbr=abbr: self._scored(abbr, record),
                                                  verdicts=self.shared, on_start=self._starter(abbr)))
            except NoSpaceError as exc:
                self.failure = exc
            except Exception as exc:   # the eval task will score it anyway
                self.log(f'early evaluation of problem {problem.problem_id} skipped: {exc}')

    def _scored(self, abbr, record):
        """(From the step pool's thread, which must go on: a progress write refused by a full disk
        is left for inference's own next write to meet.) One step's early verdict."""
        if self.progress is not None:
            self.progress.finished(running_name(abbr, record.step_id, record.sample or 0))
            try:
                self.progress.add('scored')
            except (OSError, NoSpaceError):
                pass

    def _starter(self, abbr):
        if self.progress is None:
            return None
        return lambda step_id, sample: self.progress.started(running_name(abbr, step_id, sample))

    def finish(self) -> None:
        """Wait until every submitted step has its verdict (each pool is closed, whatever the
        others raise); raises the first error met (a full disk)."""
        self.items.put(None)
        self.thread.join()            # it ends at that None: each item before it is bounded work
        failures = [self.failure] if self.failure is not None else []
        for pool, _ in self.pools.values():
            try:
                pool.close()
                if pool.protections:
                    self.shared.put_meta('protections', pool.protections)
            except Exception as exc:
                failures.append(exc)
        if failures:
            raise failures[0]


def running_name(abbr, step_id, sample=0) -> str:
    """A step running in an inference task, which answers several datasets (and samples)."""
    return f'{step_id} ({abbr}' + (f', sample {sample})' if sample else ')')


class _OneProblem:
    """A view of a dataset restricted to one problem, for building its jobs."""

    def __init__(self, dataset, problem):
        self._dataset = dataset
        self.problems = [problem]

    def __getattr__(self, name):
        return getattr(self._dataset, name)
