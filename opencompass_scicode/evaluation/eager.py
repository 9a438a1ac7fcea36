"""Scores a problem as soon as its inference is done, while other problems still generate.

Runs inside the inference task, on a background thread, and puts verdicts in
the run's shared verdict cache; the eval task later finds them there (same
program, tests, targets and limits -> same key) instead of running them again.
"""
import queue
import threading

from ..targets.locate import load_targets
from .sharing import SharedVerdicts, StepDurations, durations_path


class EagerEvaluator:
    def __init__(self, run_dir, parts_and_evaluators, log=print):
        self.shared = SharedVerdicts(run_dir.root / 'cache' / 'verdicts')
        self.log = log
        self.items = queue.Queue()
        self.by_abbr = {}
        self.executors = {}
        for part, evaluator in parts_and_evaluators:
            try:
                # Targets not ready (regeneration pending) raise: that dataset is left to eval.
                targets = load_targets(part.dataset)
                self.by_abbr[part.dataset.abbr] = (part, evaluator, targets,
                                                   StepDurations(durations_path(part.dataset.data_dir)))
            except Exception as exc:      # never let early scoring break inference
                log(f'{part.dataset.abbr}: no early evaluation ({type(exc).__name__}: {exc})')
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def submit(self, part, problem):
        if part.dataset.abbr in self.by_abbr:
            self.items.put((part.dataset.abbr, problem))

    def _loop(self):
        while True:
            item = self.items.get()
            if item is None:
                return
            abbr, problem = item
            part, evaluator, targets, durations = self.by_abbr[abbr]
            try:
                predictions = part.store.load()
                jobs, _ = evaluator.jobs(_OneProblem(part.dataset, problem), predictions, targets)
                steps = {s.step_id: s for s in problem.steps}
                if id(evaluator) not in self.executors:
                    self.executors[id(evaluator)] = evaluator.make_executor()
                    self.executors[id(evaluator)].start()
                evaluator.run_jobs(steps, jobs, targets.path, shared=self.shared, durations=durations,
                                   executor=self.executors[id(evaluator)])
                if evaluator.protections:
                    self.shared.put_meta('protections', evaluator.protections)
            except Exception as exc:   # the eval task will score it anyway
                self.log(f'early evaluation of problem {problem.problem_id} skipped: {exc}')

    def finish(self):
        self.items.put(None)
        self.thread.join()
        for executor in self.executors.values():
            executor.close()


class _OneProblem:
    """A view of a dataset restricted to one problem, for building its jobs."""

    def __init__(self, dataset, problem):
        self._dataset = dataset
        self.problems = [problem]

    def __getattr__(self, name):
        return getattr(self._dataset, name)
