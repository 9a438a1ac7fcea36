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
    slots: how many workers (the executor's slots 0..slots-1); loaded: per slot, the set of
    modules its worker holds (None: nothing carries over from one step to the next); imports:
    ImportCosts; copy_s: seconds to copy a worker (None: workers cannot be copied)."""

    def __init__(self, expected, modules, slots, imports, loaded=None, clock=time.monotonic,
                 copy_s=None):
        self.expected = dict(expected)
        self.modules = {sid: frozenset(mods) for sid, mods in modules.items()}
        self.imports = imports
        self.loaded = loaded
        self.clock = clock
        self.copy_s = copy_s
        self.pending = sorted(expected, key=lambda sid: -expected[sid])
        self.running = [None] * slots          # (started, expected seconds) per slot
        self.taking = [set() for _ in range(slots)]   # modules of steps handed to the slot's worker

    def add(self, expected, modules) -> None:
        """More steps to plan (they arrive while others run)."""
        self.expected.update(expected)
        self.modules.update({sid: frozenset(mods) for sid, mods in modules.items()})
        self.pending = sorted(self.pending + list(expected), key=lambda sid: -self.expected[sid])

    def _held(self, slot):
        return self.imports.closure(set(self.loaded[slot]) | self.taking[slot])

    def _remaining(self, slot, now):
        if self.running[slot] is None:
            return 0.0
        started, seconds = self.running[slot]
        elapsed = now - started
        # Past its estimate: a quarter of its time so far remains (grows, so nothing waits forever).
        return max(seconds - elapsed, elapsed / 4)

    def _setup(self, sid, slot, held, remaining):
        """(seconds, slot whose worker to copy, or None) to get `sid`'s modules on `slot`'s worker."""
        missing = self.modules[sid] - held[slot]
        if not missing:
            return 0.0, None
        best = (self.imports.cost(missing), None)
        if self.copy_s is not None:
            for source in range(len(held)):
                if source != slot and self.modules[sid] <= held[source]:
                    best = min(best, (remaining[source] + self.copy_s, source), key=lambda c: c[0])
        return best

    def _view(self, slot):
        now = self.clock()
        slots = range(len(self.running))
        held = [self._held(w) for w in slots] if self.loaded is not None else None
        remaining = [0.0 if w == slot else self._remaining(w, now) for w in slots]
        return slots, held, remaining

    def order(self, slot) -> list[str]:
        """Pending steps for `slot`'s worker to try, best first; empty if all are better run elsewhere."""
        slots, held, remaining = self._view(slot)
        queue = [0.0 for _ in slots]
        own, others = [], []
        for sid in self.pending:
            costs = [self.expected[sid] + (self._setup(sid, w, held, remaining)[0] if held else 0.0)
                     for w in slots]
            home = min(slots, key=lambda w: (costs[w], w != slot))
            if home == slot:
                own.append((costs[slot], sid))
            else:
                queue[home] += costs[home]
                others.append((costs[slot] - costs[home], costs[slot], sid, home))
        # Python's sorts are stable: equal costs keep the pending order (longest expected first).
        own.sort(key=lambda item: -item[0])
        # Another worker's step, if done here sooner than there; the least extra work first.
        steal = sorted((item for item in others if item[1] < remaining[item[3]] + queue[item[3]]),
                       key=lambda item: (item[0], -item[1]))
        return [sid for _, sid in own] + [item[2] for item in steal]

    def take(self, slot, sid) -> int | None:
        """`slot`'s worker starts `sid`; returns the slot whose worker to copy first, or None."""
        cost, source = self.expected[sid], None
        if self.loaded is not None:
            slots, held, remaining = self._view(slot)
            setup, source = self._setup(sid, slot, held, remaining)
            cost += setup
            if source is not None:
                self.taking[slot] = set(self.taking[source])
            self.taking[slot] |= self.modules[sid]
        self.pending.remove(sid)
        self.running[slot] = (self.clock(), cost)
        return source

    def drop(self, sid) -> None:
        """`sid` needs no run here (another task has its verdict)."""
        self.pending.remove(sid)

    def finished(self, slot) -> None:
        """`slot`'s worker has finished its step."""
        self.running[slot] = None
