"""The step pool: runs step programs on this machine's CPUs, fast.

It knows how to run programs, never what their outcome means: scoring
(evaluation/) builds the jobs and decides the verdicts.

- step_pool.py: the pool (a queue of programs, and one slot thread per sandbox worker that feeds it);
- planner.py: which slot's worker runs which program next;
- timings.py: how long steps took and what imports cost, remembered per data directory;
- cpuslots.py: at most one running step per CPU of the machine, across processes.
"""


def __getattr__(name):
    # Loaded on first use: planning reads remembered timings without loading the sandbox.
    if name in ('StepPool', 'Submission'):
        from . import step_pool
        return getattr(step_pool, name)
    raise AttributeError(name)


__all__ = ['StepPool', 'Submission']
