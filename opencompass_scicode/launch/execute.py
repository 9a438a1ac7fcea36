"""Running a planned run (plan.py): its stages' tasks in turn, then the summary.

One run at a time holds the run directory (utils/runlock.py). Each stage's tasks are
partitioned just before the stage starts and launched by its runner; a task that depends on
one that stopped early is not run. The table of tasks closes the launch, as the runners'
progress bars go with it; the summarizer then prints its tables.
"""
from dataclasses import dataclass
from pathlib import Path

from rich.markup import escape
from tabulate import tabulate

from ..config import dump_config
from ..config.records import ConfigFile
from ..errors import NoSpaceError
from ..inference.preflight import check_stale_predictions
from ..registry import build, build_dataset
from ..results.agentcompass import write_agentcompass_files
from ..runners.warm import shared_launchers
from ..tasks.contract import EXIT_NO_SPACE, TaskStatus, failure_cause
from ..utils.runlock import RunLock
from ..utils.secrets import redact_config


@dataclass
class Outcome:
    statuses: list          # TaskStatus of every task, in launch order
    summary: dict           # what the summarizer returned ({} for none)

    @property
    def interrupted(self) -> bool:
        """Whether a task was interrupted (Ctrl-C, SIGTERM)."""
        return any(s.state == 'interrupted' for s in self.statuses)

    @property
    def ok(self) -> bool:
        """Whether every task ended done or skipped."""
        return all(s.ok for s in self.statuses)


def run_plan(plan, say=print) -> 'Outcome':
    """Run every stage of `plan`; `say(text)` tells the user where the run is."""
    for _, runner in plan.stages.values():
        runner.check()          # e.g. Slurm's commands and partition: before any work is done
    cfg, run_dir = plan.cfg, plan.run_dir
    summarizer = build(dict(cfg.get('summarizer') or ConfigFile.default('summarizer')), key='summarizer')
    lock = RunLock(run_dir.root).acquire()
    try:
        if plan.reuse and 'infer' in plan.stages and plan.discard_stale:
            check_stale_predictions(run_dir, plan.models, plan.datasets, cfg['datasets'], discard=True)
        run_dir.create()
        dump_config(redact_config({k: cfg[k] for k in cfg.keys()}), run_dir.config_path)
        say(f'run directory: {run_dir.root}')
        statuses = []
        # A later stage's local tasks fork from the launcher of an earlier one (runners/warm.py).
        with shared_launchers():
            for k, (stage, (partitioner, runner)) in enumerate(plan.stages.items()):
                specs = partitioner.partition(cfg, run_dir, stage, **plan.partition_options)
                if k == 0 and hasattr(summarizer, 'prepare'):
                    # Work for the waits ahead; started sooner, it would hold back the first tasks.
                    summarizer.prepare()
                statuses += run_stage(runner, run_dir, specs, stage, statuses)
        print_statuses(statuses)
        for line in failure_lines(statuses):
            say(line)
        compare = {'compare': plan.compare} if plan.compare else {}
        summary = summarizer.summarize(cfg, run_dir, **compare) or {}
        if cfg.get('agentcompass_outputs'):
            for where in write_agentcompass(cfg, run_dir):
                say(f'AgentCompass files: {where}')
    finally:
        lock.release()
    return Outcome(statuses, summary)


def write_agentcompass(cfg, run_dir) -> list[Path]:
    """AgentCompass's files (results/agentcompass.py) of every model and dataset with results;
    their directories."""
    datasets = cfg['datasets']
    written = []
    for model in cfg['models']:
        for ds_cfg in datasets:
            dataset = build_dataset(ds_cfg)
            categories = {p.problem_id: p.category for p in dataset.problems}
            where = write_agentcompass_files(run_dir.work_dir, run_dir.timestamp,
                                             run_dir.results_path(model['abbr'], dataset.abbr),
                                             run_dir.predictions_path(model['abbr'], dataset.abbr), categories,
                                             dataset=dataset.abbr if len(datasets) > 1 else None)
            if where:
                written.append(where)
    return written


def run_stage(runner, run_dir, specs, stage, earlier) -> list[TaskStatus]:
    """Launch the stage's tasks, except those depending on a task that stopped early."""
    stopped = {s.name for s in earlier if s.stopped_others}
    statuses, to_run = [], []
    for spec in specs:
        blocked = [name for name in spec.depends_on if name in stopped]
        if blocked:
            statuses.append(TaskStatus.not_run(spec, blocked))
        else:
            to_run.append(spec)
    statuses.extend(runner.launch(to_run, title=stage))
    full = [s for s in statuses if s.returncode == EXIT_NO_SPACE]
    if full:        # the next stage, the summary and status.json would be refused too
        raise NoSpaceError(_unwritten(full[0]) or run_dir.root)
    run_dir.save_status({s.name: s.record() for s in statuses})
    return statuses


def _unwritten(status):
    """The file a task stopped on for lack of space, as its log names it (if the log got it)."""
    try:
        return NoSpaceError.path_in(Path(status.log_path).read_text(encoding='utf-8', errors='replace'))
    except OSError:
        return None


def print_statuses(statuses) -> None:
    """Print one line per task: its state, time and log."""
    if not statuses:
        return
    rows = [[s.name, s.state + (f' ({s.note})' if s.note else ''), f'{s.duration_s:.1f}s', s.log_path]
            for s in statuses]
    print(tabulate(rows, headers=['task', 'state', 'duration', 'log'], disable_numparse=True))


def failure_lines(statuses) -> list[str]:
    """For each task that failed or ended with steps in error: its cause from its log (the
    server's words, the step) and the log's path, so that the terminal says why."""
    out = []
    for status in statuses:
        if status.state not in ('failed', 'errors') or not Path(status.log_path).is_file():
            continue
        cause = failure_cause(status.log_path) or ['(no cause in its log)']
        out.append(f'[red]{status.name} {status.state}:[/] ' + escape(cause[0]))
        out += [f'  {escape(line)}' for line in cause[1:]]
        out.append(f'  log: {status.log_path}')
    return out
