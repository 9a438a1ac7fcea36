"""Planning a run: where it goes, what is checked before any work, and each stage's
partitioner and runner.

`plan_run` turns a checked config (config/) and the command line's choices (`LaunchOptions`)
into a `RunPlan` and writes nothing: a --dry-run shows the plan's tasks and stops there;
execute.py runs it. The checks themselves live with their data: datasets and targets in
targets/preflight.py, models against datasets and stale predictions in inference/preflight.py.
"""
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ..config.records import ConfigFile
from ..datasets.files import DEFAULT_DATA_DIR, prepare_data
from ..errors import ConfigError
from ..inference.preflight import (built_models, check_endpoints, check_stale_predictions, installed_launchers,
                                   ready_models, token_limits, torn_records)
from ..registry import build, build_evaluator, resolve_type
from ..runners import SlurmRunner
from ..runners.base import BaseRunner
from ..targets.fetch import Fetching
from ..targets.preflight import ready_datasets, to_regenerate
from ..tasks.contract import TaskSpec
from ..utils.workdir import RunDir, latest_timestamp, new_timestamp

RUN_MODES = ('all', 'infer', 'eval', 'viz')
STAGES = {'all': ('targets', 'infer', 'eval'), 'infer': ('infer',), 'eval': ('targets', 'eval'), 'viz': ()}
SECTION = {'targets': 'eval', 'infer': 'infer', 'eval': 'eval'}   # the config section planning each stage


@dataclass
class LaunchOptions:
    """What the command line chooses for a run (cli.py fills it in from its flags)."""
    work_dir: Optional[str] = None      # -w; else the config's work_dir, else outputs/default
    reuse: Optional[str] = None         # -r: a timestamp, or 'latest'
    run_mode: str = 'all'               # -m: one of RUN_MODES
    debug: bool = False                 # tasks in this process, one by one
    max_num_workers: Optional[int] = None
    slurm: bool = False
    partition: Optional[str] = None     # for --slurm, or a config's SlurmRunner
    qos: Optional[str] = None
    retry: Optional[int] = None
    discard_stale: bool = False
    compare: tuple = ()                 # runs shown beside this one
    download: bool = True               # fetch missing targets (--no-download: no)
    dry_run: bool = False               # plan only: say what would be fetched, fetch nothing
    probe: bool = True                  # ask each API model's endpoint once first (--no-probe: no)


@dataclass
class RunPlan:
    """A run decided but not started."""
    cfg: dict
    run_dir: RunDir
    reuse: bool                     # goes on with an earlier run's outputs
    stages: dict                    # stage -> (partitioner, runner), in the order they run
    partition_options: dict         # for every partitioner: eager_eval, discard_stale, regenerate
    datasets: list = field(default_factory=list)    # built and checked (none for -m viz)
    models: list = field(default_factory=list)      # built and checked (only where inference runs)
    compare: list = field(default_factory=list)     # RunDirs of the runs shown beside this one
    discard_stale: bool = False
    fetches: list = field(default_factory=list)     # dry run: (abbr, data dir, lines) of targets to fetch

    def dry_run(self) -> dict[str, list[TaskSpec]]:
        """{stage: task specs} as the run would start them; writes no task file."""
        built = {dataset.abbr: dataset for dataset in self.datasets}     # they may read a copy of the data
        return {stage: partitioner.partition(self.cfg, self.run_dir, stage, dry_run=True, datasets=built,
                                             **self.partition_options)
                for stage, (partitioner, _) in self.stages.items()}

    def token_limits(self) -> list[str]:
        """Lines saying the token limit each model's requests carry for each dataset."""
        read = {d.abbr for d in self.datasets}
        return token_limits(self.models, self.datasets, [d for d in self.cfg['datasets'] if d['abbr'] in read])


def plan_run(cfg, options, warn=print, note=print) -> 'RunPlan':
    """The plan for a validated, named config (config.validate_config, fill_abbrs). Everything that
    can be checked before spending time or money is checked here; `warn(text)` tells the user of
    a choice made for them, `note(text)` of what a resumed run found and deals with."""
    run_dir, reuse = resolve_run_dir(cfg, options, warn)
    compare = compared_runs(options.compare, run_dir)      # before any work: a wrong name stops here
    stages = STAGES[options.run_mode]
    check_slurm_options(cfg, options)
    # What the config alone says of its models is checked first: a missing engine is found in a
    # moment; then a wrong URL, key or model name stops the run in seconds, before targets are
    # fetched or regenerated (a dry run asks nothing of anyone).
    models = []
    if 'infer' in stages:
        installed_launchers(cfg['models'], dry_run=options.dry_run, note=note)
        models = built_models(cfg['models'], cfg['datasets'], missing_key=note if options.dry_run else None)
    if models and options.probe and not options.dry_run:
        check_endpoints(models, note=note)
    # Missing targets are fetched here, before any model is asked anything.
    fetching = Fetching(allowed=options.download, dry_run=options.dry_run, say=warn)
    datasets = ready_datasets(cfg['datasets'], scoring='eval' in stages, fetching=fetching) if stages else []
    if len(datasets) < len(cfg['datasets']) and stages:
        # A dry run that would fetch a dataset's problems first cannot read them yet, so it lists
        # what it would fetch and no task (fetches names the datasets).
        return RunPlan(cfg, run_dir, reuse, {}, {}, datasets, fetches=fetching.planned)
    if 'eval' in stages:
        prepare_environments(cfg['datasets'], datasets, options, warn)
    # scoring and summaries never ask a model anything
    models = ready_models(models, datasets)
    if reuse and 'infer' in stages and not options.discard_stale:
        check_stale_predictions(run_dir, models, datasets, cfg['datasets'])
    if reuse and 'infer' in stages:
        for text in torn_records(run_dir, models, datasets):
            note(text)
    plans = {stage: build_stage(cfg, stage, options) for stage in stages}
    partition_options = {
        'eager_eval': 'eval' in stages and 'infer' in stages and not options.debug
                      and plans['infer'][1].early_evaluation,
        'discard_stale': options.discard_stale,
        'regenerate': to_regenerate(datasets) if 'targets' in stages else ()}
    return RunPlan(cfg, run_dir, reuse, plans, partition_options, datasets, models, compare,
                   options.discard_stale, fetching.planned)


def prepare_environments(dataset_cfgs, datasets, options, say) -> None:
    """Every scoring environment a dataset is scored in, built now where it is not yet (once, into
    its data dir's cache: before any model is asked anything), or, offline, the run stops naming
    the command that prepares it. A dry run says what it would build."""
    from ..environments import CURRENT, ensure, is_built, prepare_command
    wanted = {}
    for ds_cfg, dataset in zip(dataset_cfgs, datasets):
        for name in build_evaluator(ds_cfg).environments:
            if name != CURRENT:
                wanted.setdefault((name, str(dataset.data_dir)), dataset.abbr)
    for (name, data_dir), abbr in wanted.items():
        if options.dry_run:
            if not is_built(name, data_dir):
                say(f'dataset {abbr!r}: scoring environment {name!r} is not built; a run builds it first '
                    f'({prepare_command(name, data_dir)})')
            continue
        ensure(name, data_dir, allow_build=options.download, say=say)


def resolve_run_dir(cfg, options, warn) -> tuple[RunDir, bool]:
    """(RunDir, whether it is an earlier run going on)."""
    work_dir = options.work_dir or cfg.get('work_dir') or ConfigFile.default('work_dir')
    if options.reuse:
        stamp = latest_timestamp(work_dir) if options.reuse == 'latest' else options.reuse
        if stamp is None:
            if options.run_mode in ('eval', 'viz'):
                raise ConfigError(f'-r: no previous run in {work_dir}/ to reuse',
                                  fix='run without -r first, or pass -w to the right work dir')
            warn(f'-r: no previous run in {work_dir}/; starting a new one')
            return RunDir(work_dir, new_timestamp()), False
        run_dir = RunDir(work_dir, stamp)
        if not run_dir.root.is_dir():
            raise ConfigError(f'-r {stamp}: {run_dir.root} does not exist',
                              fix=f'pick one of the runs in {work_dir}/ or use -r alone for the latest')
        return run_dir, True
    if options.run_mode in ('eval', 'viz'):
        raise ConfigError(f'-m {options.run_mode} works on an earlier run\'s outputs',
                          fix='add -r (latest run) or -r TIMESTAMP')
    return RunDir(work_dir, new_timestamp()), False


def compared_runs(names, run_dir) -> list[RunDir]:
    """The runs --compare names: a run directory's path, or a timestamp in this work dir."""
    runs = []
    for name in names or ():
        path = Path(name)
        other = RunDir(path.parent, path.name) if path.is_dir() else RunDir(run_dir.work_dir, name)
        if not (other.root / 'results').is_dir():
            raise ConfigError(f'--compare {name}: {other.root} holds no results',
                              fix=f'give a timestamp of a run in {run_dir.work_dir}/ or the path of a run directory')
        runs.append(other)
    return runs


def section(cfg, name, key) -> Any:
    """`cfg[name][key]` (OpenCompass's infer=/eval= sections), else the top-level `key`, else its default."""
    return (cfg.get(name) or {}).get(key) or cfg.get(key) or ConfigFile.default(key)


def check_slurm_options(cfg, options) -> None:
    """--slurm needs -p; -p, --qos and --retry need Slurm: --slurm, or a SlurmRunner in the config."""
    if options.slurm and not options.partition:
        raise ConfigError('--slurm needs -p PARTITION (sinfo lists them)')
    given = [flag for flag, value in (('-p/--partition', options.partition), ('--qos', options.qos),
                                      ('--retry', options.retry)) if value is not None]
    stages = {SECTION[stage] for stage in STAGES[options.run_mode]}
    on_slurm = any(resolve_type(section(cfg, name, 'runner')['type']) is SlurmRunner for name in stages)
    if given and not (options.slurm or on_slurm):
        raise ConfigError(f'{" and ".join(given)}: no Slurm runner in this run; add --slurm (or use a '
                          f'SlurmRunner in the config)')


def build_stage(cfg, stage, options) -> tuple[Any, BaseRunner]:
    """(partitioner, runner) for a stage, as the config and the command line (`options`) ask."""
    name = SECTION[stage]
    partitioner = build(dict(section(cfg, name, 'partitioner')), key=f'{name}.partitioner')
    runner_cfg = dict(section(cfg, name, 'runner'))
    on_slurm = resolve_type(runner_cfg['type']) is SlurmRunner
    if options.slurm or on_slurm:
        # Keep what the config says of Slurm (time, memory, ...); the command line wins, as -p, --qos
        # and --retry do in OpenCompass for a config's SlurmRunner too.
        runner_cfg = dict(runner_cfg if on_slurm else {}, type=SlurmRunner)
        for option in ('partition', 'qos', 'retry'):
            if getattr(options, option) is not None:
                runner_cfg[option] = getattr(options, option)
    if options.max_num_workers:
        runner_cfg['max_num_workers'] = options.max_num_workers
    runner = build(runner_cfg, key=f'{name}.runner', debug=options.debug)
    return partitioner, runner


def prepare_data_dirs(cfg, say=print) -> None:
    """--prepare-data: fetch and verify the data files in every directory the config's datasets
    read (without a config, the default one)."""
    paths = sorted({ds.get('path', DEFAULT_DATA_DIR) for ds in cfg['datasets']}) if cfg else [DEFAULT_DATA_DIR]
    for path in paths:
        prepare_data(path)
        say(f'SciCode data ready in {path}/')
