"""The step pool: a queue of step programs, run by the sandbox's workers as they arrive.

Both evaluation paths use it. The evaluation task submits all of a dataset's
steps at once. Early evaluation, inside the inference task, submits each
problem's steps when its last step is answered: steps of different problems
then run side by side while the model still answers others.

The pool runs programs; it never judges them. Each submission names its
program by a key (same key, same program); a program is run once however many
submissions name it, and every one of them is handed the run (scoring turns it
into a verdict). One slot thread per worker of the executor (the sandbox's processes that
run programs) takes the next program for its worker, as planned in planner.py. A step that runs while the other workers are idle and nothing
waits may use their cores for its numerical libraries. A step runs while
holding one of the machine's CPU slots (cpuslots.py), so that the pools of
several tasks on one machine never run more steps at once than it has CPUs.

A slot thread that raises (a `done` that cannot keep its verdict on a full
disk) stops the pool: the other slot threads stop taking programs, and whoever
waits on the pool (close, the next submit) raises that error.
"""
import signal
import threading
from dataclasses import dataclass
from typing import Any, Callable, Optional

from ..errors import ThreadFailed
from ..sandbox.executor import StepRun
from .cpuslots import CpuSlots
from .planner import Planner
from .timings import StepDurations


# A step expected to run this long may use idle workers' cores (short ones would not gain).
LONE_STEP_S = 2.0
POLL_S = 0.5            # an idle worker looks again this often, whatever woke it or did not


@dataclass
class Submission:
    """One program to run; `key` names it (same key, same program, same outcome).

    `done(run, copy)` is called once with the StepRun (`copy`: another submission's run of the
    same program), or with None when the program was settled elsewhere (`claims.settled`); it
    returns True if the run measured the program (its time is then remembered). `started()`, if
    given, is called when a worker starts the program (a progress line names long steps)."""
    key: str
    job: object                       # sandbox StepJob
    expected_s: float
    done: Callable[[Optional[StepRun], bool], bool]
    owner: object = None              # who asked (a client of the machine's pool), for withdraw()
    started: Optional[Callable[[], None]] = None


class NoClaims:
    """Programs are claimed by one pool only: nobody else runs or settles them."""

    def settled(self, key) -> bool:
        """Always False: no other task runs programs for this pool."""
        return False

    def try_claim(self, key) -> bool:
        """Always True: this pool runs every program it is given."""
        return True


def take_in(waiting, claims, submissions) -> list['Submission']:
    """Queue each submission behind one for the same program (`waiting`: key -> submissions not
    answered yet) and answer those whose program is settled elsewhere; returns the submissions
    whose programs are new (to be run)."""
    fresh = []
    for item in submissions:
        if item.key in waiting:              # the same program is queued or running
            waiting[item.key].append(item)
        elif claims.settled(item.key):       # run by another task (or earlier here)
            item.done(None, True)
        else:
            waiting[item.key] = [item]
            fresh.append(item)
    return fresh


def protections_of(run) -> dict[str, Any]:
    """The sandbox layers a run's step process reported ({} if it reported none)."""
    return next((e.get('protections') for e in run.events if e.get('event') == 'sandbox'), None) or {}


def cost_of(run) -> float:
    """What a program costs a worker: its whole time on it (later tests for information included),
    less importing the modules it needed."""
    return max(0.0, (run.busy_s or run.duration_s) - run.import_s)


def cut_short_from_outside(run) -> bool:
    """Whether a run says nothing of its program: its worker died under it, or its step was
    killed by a SIGKILL, before its verdict was decided, that none of our limits sent (the
    time-out and the process cap are told apart; the memory cap's OOM kill is not, and costs a
    second run). Such a program is run once more (the second run's verdict stands): a process
    killed from outside (an operator, the machine's OOM killer) costs no verdict."""
    if run.worker_died:
        return True
    return (run.error is None and run.returncode == -signal.SIGKILL and not run.timed_out
            and not run.process_limit_hit and not any(e.get('event') == 'decided' for e in run.events))


def harness_failure(exc) -> StepRun:
    """The run of a program whose harness failed (not the program)."""
    return StepRun(None, False, 0.0, error=f'{type(exc).__name__}: {exc}')


class PassesOnFailure:
    """What the two pools (this one, and the machine's in pool/machine.py) share: a failure
    of one of their threads, kept in `_failure` under the condition `_changed`, is raised to
    whoever waits on the pool."""

    def _raise_failure(self):
        """(Caller holds _changed.)"""
        if self._failure is not None:
            raise self._failure

    def check(self) -> None:
        """Raise what stopped the pool's threads, if anything has: for a caller that waits on the
        pool's verdicts in a queue of its own, so that it never waits for ones that cannot come."""
        with self._changed:
            self._raise_failure()


class StepPool(PassesOnFailure):
    """`make_executor()` gives a started-on-demand executor; `claims`: who else may run or have
    run a program (another task of the run: `settled(key)`, `try_claim(key)`); `durations`:
    remembered step durations and import costs (saved at close); `cpus`: the machine's CPU slots."""

    def __init__(self, make_executor, claims=None, durations=None, cpus=None):
        self._make_executor = make_executor
        self.cpus = cpus or CpuSlots()
        self.claims = claims or NoClaims()
        self.durations = durations or StepDurations(None)
        self.protections = {}
        self._executor = None
        self._planner = None
        self._threads = []
        self._waiting = {}            # key -> submissions for it not answered yet
        self._jobs = {}               # key -> the job run for it
        self._running = {}            # key -> (slot, job) running it
        self._closed = False
        self._failure = None          # what stopped a slot thread, raised to whoever waits
        self._observed, self._imported = [], {}
        self._changed = threading.Condition(threading.RLock())
        self._reporting = threading.Lock()      # one `done` call at a time: callers count in them

    # ------------------------------------------------------------ the caller's side
    def submit(self, submissions) -> None:
        """Queue programs; returns at once. Their `done` is called from a slot thread (or here,
        for a program settled elsewhere)."""
        with self._changed:
            self._raise_failure()
            if self._closed:
                raise RuntimeError('submit after close')
            with self._reporting:
                fresh = {item.key: item for item in take_in(self._waiting, self.claims, submissions)}
            self._jobs.update({key: item.job for key, item in fresh.items()})
            if not fresh:
                return
            self.start()
            self._planner.add({k: s.expected_s for k, s in fresh.items()},
                              {k: s.job.modules for k, s in fresh.items()})
            if self._executor.loaded is not None:
                self._executor.watch |= set().union(*(s.job.modules for s in fresh.values()))
            self._changed.notify_all()
        self._executor.prefetch([s.job for s in fresh.values()])

    def withdraw(self, owner) -> None:
        """Forget `owner`'s submissions (it has gone): a program nobody else waits for is not run,
        or, if it runs already, is stopped (its worker is replaced), as it would have died with a
        pool of the owner's own."""
        with self._changed:
            for key in list(self._waiting):
                left = [item for item in self._waiting[key] if item.owner is not owner]
                self._waiting[key] = left
                if left or self._planner is None:
                    continue
                if key in self._planner.pending:
                    self._planner.drop(key)
                    del self._waiting[key], self._jobs[key]
                elif key in self._running:
                    self._executor.abandon(*self._running[key])
            self._changed.notify_all()

    def busy(self) -> bool:
        """Programs queued or running."""
        with self._changed:
            return bool(self._waiting)

    def close(self) -> None:
        """No more submissions: wait until every program has run, then stop the workers. Raises
        what stopped a slot thread, if one stopped on an error."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()
        for thread in self._threads:
            thread.join()       # each ends, however it ends: its waits and its steps are bounded
        if self._executor is not None:
            self._executor.close()
        with self._changed:
            self._raise_failure()
        self.durations.save(self._observed, self._imported)

    def start(self) -> None:
        """Start the workers now (they start with the first submission otherwise): their imports
        then overlap whatever the caller does before it submits."""
        with self._changed:
            self._start()

    # ------------------------------------------------------------ the slot threads' side
    def _start(self):
        if self._executor is not None:
            return
        self._executor = self._make_executor()
        self._executor.start()
        executor = self._executor
        self._planner = Planner({}, {}, executor.workers, self.durations.imports, executor.loaded,
                                copy_s=executor.copy_s)
        self._threads = [threading.Thread(target=self._slot_thread, args=(slot,), daemon=True,
                                          name=f'step-slot-{slot}')
                         for slot in range(executor.workers)]
        for thread in self._threads:
            thread.start()

    def _answer(self, key, run):
        """Hand `run` (None: settled elsewhere) to everyone waiting for `key`; True if the first
        of them says it measured the program."""
        with self._changed:
            waiting = self._waiting.pop(key, [])
            self._jobs.pop(key, None)
        measured = False
        with self._reporting:
            for i, item in enumerate(waiting):
                counts = item.done(run, run is None or i > 0)
                measured = measured or (i == 0 and bool(counts))
        return measured

    def _next(self, slot):
        """(key, slot whose worker to copy first or None), or None once closed and all is done."""
        planner = self._planner
        with self._changed:
            while True:
                for key in planner.order(slot):
                    if self.claims.settled(key):       # another task (or early evaluation) ran it
                        planner.drop(key)
                        self._answer(key, None)
                    elif self.claims.try_claim(key):
                        return key, planner.take(slot, key)
                if self._failure is not None or (not planner.pending and self._closed):
                    return None
                # The rest is better run by a busy worker, another task runs it, or nothing is
                # queued yet: look again when something changes (or soon, for other tasks).
                self._changed.wait(0.1 if planner.pending else POLL_S)

    def _wanted(self, key):
        """Someone still waits for `key` (it was not withdrawn while it ran)."""
        with self._changed:
            return bool(self._waiting.get(key))

    def _lone(self, slot, key):
        """A long step while nothing waits and every other worker is idle: it may use their cores."""
        planner = self._planner
        return (planner.expected[key] >= LONE_STEP_S and not planner.pending
                and all(r is None for w, r in enumerate(planner.running) if w != slot))

    def _slot_thread(self, slot):
        """The thread of `slot`: runs what the planner gives this slot's worker until the pool closes."""
        try:
            self._work(slot)
        except BaseException as exc:    # noqa: B036 - passed on to whoever waits on the pool
            with self._changed:
                self._failure = self._failure or ThreadFailed.passing_on(f'step slot {slot}', exc)
                self._changed.notify_all()

    def _work(self, slot):
        executor = self._executor
        while True:
            chosen = self._next(slot)
            if chosen is None:
                return
            key, source = chosen
            job = self._jobs[key]
            try:
                if source is not None:
                    executor.copy_worker(source, slot)   # else: the worker imports them itself
                if executor.workers > 1 and self._lone(slot, key):
                    job = job.replace(threads=executor.threads * executor.workers)
                with self._changed:
                    self._running[key] = (slot, job)
                    starting = [item.started for item in self._waiting.get(key, ()) if item.started]
                for started in starting:
                    started()
                with self.cpus.hold():
                    run = executor.run(job, slot)
                    if cut_short_from_outside(run) and self._wanted(key):
                        run = executor.run(job, slot)
                self.protections = self.protections or protections_of(run)
            except Exception as exc:  # the harness failed, not the program
                run = harness_failure(exc)
            measured = self._answer(key, run)
            with self._changed:
                self._running.pop(key, None)
                if measured:
                    self._observed.append((job.step_id, key, cost_of(run)))
                    self._imported.update(run.imported)
                self._planner.finished(slot)
                self._changed.notify_all()
