"""Which step a free worker runs next.

A fast worker keeps what it imported, so on a given worker a step costs its
expected run time plus getting the modules that worker still lacks: importing
them, or (where the executor can) replacing the worker by a copy of one that
holds them, once that one's current step is done. A step's home is the worker
where it costs least (a tie goes to the worker asking). A free worker runs its
own steps, costliest first, so long steps and heavy imports start early. With
none of its own left, it takes another worker's step only if it would finish
it before that worker gets through what it is running and its queue of home
steps: a heavy import happens once, and is copied rather than repeated.
"""
import time


class Planner:
    """expected: step id -> seconds without imports; modules: step id -> modules it imports;
    loaded: per worker, the set of modules it holds (None: nothing carries over
    from one step to the next); imports: ImportCosts; copy_s: seconds to copy a
    worker (None: workers cannot be copied)."""

    def __init__(self, expected, modules, workers, imports, loaded=None, clock=time.monotonic,
                 copy_s=None):
        self.expected = dict(expected)
        self.modules = {sid: frozenset(mods) for sid, mods in modules.items()}
        self.imports = imports
        self.loaded = loaded
        self.clock = clock
        self.copy_s = copy_s
        self.pending = sorted(expected, key=lambda sid: -expected[sid])
        self.running = [None] * workers          # (started, expected seconds) per worker
        self.taking = [set() for _ in range(workers)]   # modules of steps handed to the worker

    def add(self, expected, modules) -> None:
        """More steps to plan (they arrive while others run)."""
        self.expected.update(expected)
        self.modules.update({sid: frozenset(mods) for sid, mods in modules.items()})
        self.pending = sorted(self.pending + list(expected), key=lambda sid: -self.expected[sid])

    def _held(self, worker):
        return self.imports.closure(set(self.loaded[worker]) | self.taking[worker])

    def _remaining(self, worker, now):
        if self.running[worker] is None:
            return 0.0
        started, seconds = self.running[worker]
        elapsed = now - started
        # Past its estimate: a quarter of its time so far remains (grows, so nothing waits forever).
        return max(seconds - elapsed, elapsed / 4)

    def _setup(self, sid, worker, held, remaining):
        """(seconds, worker to copy or None) to get `sid`'s modules on `worker`."""
        missing = self.modules[sid] - held[worker]
        if not missing:
            return 0.0, None
        best = (self.imports.cost(missing), None)
        if self.copy_s is not None:
            for source in range(len(held)):
                if source != worker and self.modules[sid] <= held[source]:
                    best = min(best, (remaining[source] + self.copy_s, source), key=lambda c: c[0])
        return best

    def _view(self, worker):
        now = self.clock()
        workers = range(len(self.running))
        held = [self._held(w) for w in workers] if self.loaded is not None else None
        remaining = [0.0 if w == worker else self._remaining(w, now) for w in workers]
        return workers, held, remaining

    def order(self, worker) -> list[str]:
        """Pending steps for `worker` to try, best first; empty if all are better run elsewhere."""
        workers, held, remaining = self._view(worker)
        queue = [0.0 for _ in workers]
        own, others = [], []
        for sid in self.pending:
            costs = [self.expected[sid] + (self._setup(sid, w, held, remaining)[0] if held else 0.0)
                     for w in workers]
            home = min(workers, key=lambda w: (costs[w], w != worker))
            if home == worker:
                own.append((costs[worker], sid))
            else:
                queue[home] += costs[home]
                others.append((costs[worker] - costs[home], costs[worker], sid, home))
        # Python's sorts are stable: equal costs keep the pending order (longest expected first).
        own.sort(key=lambda item: -item[0])
        # Another worker's step, if done here sooner than there; the least extra work first.
        steal = sorted((item for item in others if item[1] < remaining[item[3]] + queue[item[3]]),
                       key=lambda item: (item[0], -item[1]))
        return [sid for _, sid in own] + [item[2] for item in steal]

    def take(self, worker, sid) -> int | None:
        """`worker` starts `sid`; returns the worker to copy first, or None."""
        cost, source = self.expected[sid], None
        if self.loaded is not None:
            workers, held, remaining = self._view(worker)
            setup, source = self._setup(sid, worker, held, remaining)
            cost += setup
            if source is not None:
                self.taking[worker] = set(self.taking[source])
            self.taking[worker] |= self.modules[sid]
        self.pending.remove(sid)
        self.running[worker] = (self.clock(), cost)
        return source

    def drop(self, sid) -> None:
        """`sid` needs no run here (another task has its verdict)."""
        self.pending.remove(sid)

    def finished(self, worker) -> None:
        self.running[worker] = None
