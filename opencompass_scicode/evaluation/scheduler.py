"""One pool of workers scoring steps as they arrive.

Both evaluation paths use it. The evaluation task submits all of a dataset's
steps at once. Early evaluation, inside the inference task, submits each
problem's steps when its last step is answered: steps of different problems
then run side by side while the model still answers others.

Which free worker runs which pending step is planned in schedule.py. A step
whose program another submission (or another task of the run, through the
shared verdicts) has already run or is running is not run again: it gets that
verdict. A step that runs while the other workers are idle and nothing waits
may use their cores for its numerical libraries. A step runs while holding one
of the machine's CPU slots (utils/cpuslots.py), so that the pools of several
tasks on one machine never run more steps at once than it has CPUs.
"""
import dataclasses
import threading
from dataclasses import dataclass
from typing import Callable, Optional

from ..results import StepRecord
from .schedule import Planner
from ..results.timings import StepDurations
from ..utils.cpuslots import CpuSlots
from .sharing import LocalVerdicts
from .forensics import phrase, step_facts
from .verdict import decide


# A step expected to run this long may use idle workers' cores (short ones would not gain).
LONE_STEP_S = 2.0


@dataclass
class Submission:
    """One step to score; `key` names its program (same key, same verdict)."""
    key: str
    job: object                       # sandbox StepJob
    expected_s: float
    done: Callable[[StepRecord], None]
    sample: Optional[int] = None      # which sample of its problem, when there are several


def _record(step_id, verdict, run, n_tests):
    facts = step_facts(run, n_tests, verdict.status)
    told = phrase(facts.get('comparison'))
    return StepRecord(step_id, verdict.status, run.returncode, run.duration_s, run.stdout, run.stderr,
                      verdict.message + (f'; compared {told}' if told else ''), verdict.violation,
                      category=verdict.category, error_type=verdict.error_type, **facts)


class StepScheduler:
    """`make_executor()` gives a started-on-demand executor; `shared`: verdicts shared with the
    run's other tasks; `durations`: remembered step durations and import costs (saved at close);
    `cpus`: the machine's CPU slots."""

    def __init__(self, make_executor, shared=None, durations=None, cpus=None):
        self._make_executor = make_executor
        self.cpus = cpus or CpuSlots()
        self.shared = shared or LocalVerdicts()
        self.durations = durations or StepDurations(None)
        self.protections = {}
        self._executor = None
        self._planner = None
        self._threads = []
        self._waiting = {}            # key -> submissions for it not answered yet
        self._jobs = {}               # key -> the job run for it
        self._closed = False
        self._observed, self._imported = [], {}
        self._changed = threading.Condition(threading.RLock())
        self._reporting = threading.Lock()      # one `done` call at a time: callers count in them

    # ------------------------------------------------------------ the caller's side
    def submit(self, submissions):
        """Queue steps; returns at once. Their `done` is called from a worker thread."""
        fresh = {}
        with self._changed:
            if self._closed:
                raise RuntimeError('submit after close')
            for item in submissions:
                if item.key in self._waiting:          # the same program is queued or running
                    self._waiting[item.key].append(item)
                    continue
                cached = self.shared.get(item.key)
                if cached is not None:                 # run by another task (or earlier here)
                    with self._reporting:
                        item.done(StepRecord.from_dict(cached, step_id=item.job.step_id, shared=True,
                                                       sample=item.sample))
                    continue
                self._waiting[item.key] = [item]
                self._jobs[item.key] = item.job
                fresh[item.key] = item
            if not fresh:
                return
            self.start()
            self._planner.add({k: s.expected_s for k, s in fresh.items()},
                              {k: s.job.modules for k, s in fresh.items()})
            if self._executor.loaded is not None:
                self._executor.watch |= set().union(*(s.job.modules for s in fresh.values()))
            self._changed.notify_all()
        self._executor.prefetch([s.job for s in fresh.values()])

    def close(self):
        """No more submissions: wait until every step has its verdict, then stop the workers."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()
        for thread in self._threads:
            thread.join()
        if self._executor is not None:
            self._executor.close()
        self.durations.save(self._observed, self._imported)

    def start(self):
        """Start the workers now (they start with the first submission otherwise): their imports
        then overlap whatever the caller does before it submits."""
        with self._changed:
            self._start()

    # ------------------------------------------------------------ the workers' side
    def _start(self):
        if self._executor is not None:
            return
        self._executor = self._make_executor()
        self._executor.start()
        executor = self._executor
        self._planner = Planner({}, {}, executor.workers, self.durations.imports, executor.loaded,
                                copy_s=executor.copy_s)
        self._threads = [threading.Thread(target=self._work, args=(slot,), daemon=True,
                                          name=f'step-worker-{slot}')
                         for slot in range(executor.workers)]
        for thread in self._threads:
            thread.start()

    def _answer(self, key, record):
        """Hand `record` to everyone waiting for `key` (the first one ran it)."""
        with self._changed:
            waiting = self._waiting.pop(key, [])
            self._jobs.pop(key, None)
        with self._reporting:
            for i, item in enumerate(waiting):
                item.done(dataclasses.replace(record, step_id=item.job.step_id, sample=item.sample,
                                              shared=record.shared or i > 0))

    def _next(self, slot):
        """(key, worker to copy first or None), or None once closed and all is done."""
        planner = self._planner
        with self._changed:
            while True:
                for key in planner.order(slot):
                    cached = self.shared.get(key)
                    if cached is not None:         # another task (or early evaluation) ran it
                        planner.drop(key)
                        self._answer(key, StepRecord.from_dict(cached, shared=True))
                    elif self.shared.try_claim(key):
                        return key, planner.take(slot, key)
                if not planner.pending and self._closed:
                    return None
                # The rest is better run by a busy worker, another task runs it, or nothing is
                # queued yet: look again when something changes (or soon, for other tasks).
                self._changed.wait(0.1 if planner.pending else None)

    def _lone(self, slot, key):
        """A long step while nothing waits and every other worker is idle: it may use their cores."""
        planner = self._planner
        return (planner.expected[key] >= LONE_STEP_S and not planner.pending
                and all(r is None for w, r in enumerate(planner.running) if w != slot))

    def _work(self, slot):
        executor = self._executor
        while True:
            chosen = self._next(slot)
            if chosen is None:
                return
            key, source = chosen
            job = self._jobs[key]
            run = None
            try:
                if source is not None:
                    executor.copy_worker(source, slot)   # else: the worker imports them itself
                if executor.workers > 1 and self._lone(slot, key):
                    job = dataclasses.replace(job, threads=executor.threads * executor.workers)
                with self.cpus.hold():
                    run = executor.run(job, slot)
                record = _record(job.step_id, decide(run, len(job.tests)), run, len(job.tests))
                protections = next((e.get('protections') for e in run.events
                                    if e.get('event') == 'sandbox'), None)
                if protections and not self.protections:
                    self.protections = protections
            except Exception as exc:  # the harness failed, not the model
                record = StepRecord(job.step_id, 'eval_error', message=f'{type(exc).__name__}: {exc}',
                                    category='eval_error', error_type=type(exc).__name__)
            if record.status == 'eval_error':
                self.shared.release(key)      # do not share a harness failure
            else:
                self.shared.put(key, record.to_dict())
            with self._changed:
                if run is not None and record.status != 'eval_error':
                    # the worker's whole time on it (later tests for information included): what it costs
                    busy = run.busy_s or run.duration_s
                    self._observed.append((job.step_id, key, max(0.0, busy - run.import_s)))
                    self._imported.update(run.imported)
                self._planner.finished(slot)
                self._changed.notify_all()
            self._answer(key, record)
