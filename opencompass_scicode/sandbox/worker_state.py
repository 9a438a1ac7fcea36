"""What a worker keeps from one step to the next, and what its start-up found out.

Module globals on purpose, read and set as `worker_state.NAME`: a worker sets
them before it forks, so each step's child inherits them as they are then; a
copy of the worker (worker_clone.py) resets those that are the original's alone.
"""
from typing import TYPE_CHECKING

if TYPE_CHECKING:            # imported where used: a worker imports what it needs, when it needs it
    from .lockdown import WorkerCgroups

NO_LANDLOCK = (None, {'landlock': False, 'landlock_why': 'not prepared'})

DROP_OK = False      # set at start: may steps run under their own uid?
CGROUPS = {}         # limits -> this worker's step cgroups, reused from step to step
LANDLOCK = NO_LANDLOCK   # (ruleset fd, facts)
# As root the worker leaves the network itself, once: a namespace per step costs
# about a millisecond to make and more to tear down. Steps run one at a time.
WORKER_NETNS = False
PRELOADED = frozenset()   # modules loaded at start-up


def cgroups_for(limits) -> 'WorkerCgroups':
    """This worker's cgroups for steps with these limits (made anew when the limits change)."""
    from . import leftovers
    from .lockdown import WorkerCgroups
    key = (limits.get('max_processes'), limits.get('memory_bytes'))
    if key not in CGROUPS:
        for other in CGROUPS.values():       # limits changed: leave the old cgroups
            other.remove()
        CGROUPS.clear()
        CGROUPS[key] = WorkerCgroups(leftovers.cgroup_name(), *key)
    return CGROUPS[key]


def remove_cgroups() -> None:
    """At the worker's end: kill what is left in its cgroups and remove them."""
    for cgroups in CGROUPS.values():
        cgroups.remove()
