"""`python run.py CONFIG` (or `opencompass-scicode CONFIG`): check, plan, prepare targets, infer,
evaluate, summarize."""
import argparse
import signal
import sys
import threading
from pathlib import Path

from rich.console import Console
from tabulate import tabulate

from .config import dump_config, fill_abbrs, validate_config
from .config.from_opencompass.command_line import add_arguments, config_from_args, server_lines
from .datasets.files import DEFAULT_DATA_DIR, prepare_data
from .errors import ConfigError, UserFacingError
from .partitioners import NaivePartitioner
from .registry import build, build_dataset, build_model, resolve_type
from .runners import LocalRunner, SlurmRunner
from .summarizers import SciCodeSummarizer
from .tasks.contract import TaskStatus
from .utils.runlock import RunLock
from .utils.secrets import redact_config
from .utils.workdir import RunDir, latest_timestamp, new_timestamp

RUN_MODES = ('all', 'infer', 'eval', 'viz')
STAGES = {'all': ('targets', 'infer', 'eval'), 'infer': ('infer',), 'eval': ('targets', 'eval'), 'viz': ()}
SECTION = {'targets': 'eval', 'infer': 'infer', 'eval': 'eval'}   # the config section planning each stage
EXIT_TASK_FAILED, EXIT_USER_ERROR, EXIT_INTERRUPTED = 1, 2, 130

console = Console(stderr=True)


def parse_args(argv, prog=None):
    """`prog` None: the name this was started by (`run.py`, `opencompass-scicode`)."""
    p = argparse.ArgumentParser(prog=prog, description='Evaluate models on SciCode.')
    p.add_argument('config', nargs='?', help='Python config file, e.g. configs/eval_scicode.py')
    p.add_argument('-w', '--work-dir', help='where runs go (default: the config\'s work_dir, '
                                            'else outputs/default)')
    p.add_argument('-r', '--reuse', nargs='?', const='latest', metavar='TIMESTAMP',
                   help='continue a previous run (the latest one without TIMESTAMP); '
                        'tasks whose outputs are complete are skipped')
    p.add_argument('-m', '--mode', dest='run_mode', choices=RUN_MODES, default='all',
                   help='all: infer+eval+summary; infer; eval: score existing predictions; '
                        'viz: summary only')
    p.add_argument('--debug', action='store_true', help='run tasks in this process, one by one, '
                                                        'with tracebacks')
    p.add_argument('--dry-run', action='store_true', help='print the task plan and exit; writes nothing')
    p.add_argument('--max-num-workers', type=int, help='tasks in flight at once, for either runner '
                                                        '(overrides the config)')
    p.add_argument('--slurm', action='store_true', help='run every task as a Slurm job (SlurmRunner)')
    p.add_argument('-p', '--partition', help='with --slurm: the Slurm partition')
    p.add_argument('-q', '--qos', help='with --slurm: the Slurm QOS')
    p.add_argument('--retry', type=int, help='with --slurm: submit a job that ended without its outputs '
                                             '(cancelled, node failure, time limit, ...) again, up to N '
                                             'times (default 2)')
    p.add_argument('--prepare-data', action='store_true',
                   help='fetch and verify the SciCode data files, then exit')
    p.add_argument('--discard-stale', action='store_true',
                   help='with -r: set aside predictions made with other settings and generate again')
    p.add_argument('--compare', nargs='+', metavar='RUN',
                   help='show these runs beside this one in the report (timestamps in the work dir, '
                        'or paths of run directories), e.g. -m viz -r --compare 20260101_120000')
    add_arguments(p)            # OpenCompass's --datasets/--models/--hf-path ... (config/from_opencompass/)
    args = p.parse_args(argv)
    if not args.slurm and (args.partition or args.qos or args.retry is not None):
        p.error('-p/--partition, -q/--qos and --retry go with --slurm')
    if args.slurm and not args.partition:
        p.error('--slurm needs -p PARTITION (sinfo lists them)')
    args.command = f'python {p.prog}' if p.prog.endswith('.py') else p.prog
    return args


def _resolve_run_dir(args, cfg):
    work_dir = args.work_dir or cfg.get('work_dir') or 'outputs/default'
    if args.reuse:
        stamp = latest_timestamp(work_dir) if args.reuse == 'latest' else args.reuse
        if stamp is None:
            if args.run_mode in ('eval', 'viz'):
                raise ConfigError(f'-r: no previous run in {work_dir}/ to reuse',
                                  fix='run without -r first, or pass -w to the right work dir')
            console.print(f'[yellow]-r: no previous run in {work_dir}/; starting a new one')
            return RunDir(work_dir, new_timestamp()), False
        run_dir = RunDir(work_dir, stamp)
        if not run_dir.root.is_dir():
            raise ConfigError(f'-r {stamp}: {run_dir.root} does not exist',
                              fix=f'pick one of the runs in {work_dir}/ or use -r alone for the latest')
        return run_dir, True
    if args.run_mode in ('eval', 'viz'):
        raise ConfigError(f'-m {args.run_mode} works on an earlier run\'s outputs',
                          fix='add -r (latest run) or -r TIMESTAMP')
    return RunDir(work_dir, new_timestamp()), False


def preflight(cfg, stages):
    """Everything that can be checked before spending time or money: data, targets, models."""
    from .targets.locate import check_coverage
    datasets = []
    for i, ds_cfg in enumerate(cfg['datasets']):
        key = f'datasets[{i}]'
        dataset = build_dataset(ds_cfg, key=key)
        try:
            dataset.problems  # loads (and fetches) the data, checks sample_ids
        except ConfigError as exc:
            raise exc.within(key=key) from None
        if 'eval' in stages:
            check_coverage(dataset)
        datasets.append(dataset)
    models = []
    if 'infer' not in stages:
        return datasets, models      # scoring and summaries never ask a model anything
    for i, m_cfg in enumerate(cfg['models']):
        model = build_model(m_cfg, key=f'models[{i}]')
        models.append(model)
        for j, dataset in enumerate(datasets):
            try:
                model.check_dataset(dataset)
            except ConfigError as exc:
                raise ConfigError(f'model {model.abbr!r} cannot run dataset {dataset.abbr!r}: '
                                  f'{exc.message}', key=f'datasets[{j}].{exc.key or "split"}',
                                  fix=exc.fix) from None
            check_mode(model, cfg['datasets'][j], key=f'datasets[{j}].infer_cfg')
    return datasets, models


def check_mode(model, dataset_cfg, key):
    from .inference.modes import requires_chat
    from .inference.settings import InferConfig
    infer = InferConfig.of(dataset_cfg.get('infer_cfg'))
    if requires_chat(infer.mode) and not model.supports_chat:
        raise ConfigError(f'mode {infer.mode!r} needs a chat model; {type(model).__name__} '
                          f'({model.abbr!r}) only answers single prompts', key=f'{key}.mode',
                          fix="use mode='naive' with this model, or an OpenAIChatModel")
    if infer.n > 1 and getattr(model, 'temperature', None) == 0:
        raise ConfigError(f'n={infer.n} samples of model {model.abbr!r} at temperature 0 would be the '
                          f'same answer {infer.n} times', key=f'{key}.n',
                          fix='give the model a temperature above 0 (e.g. 0.8), or leave n at 1')


def check_stale_predictions(cfg, run_dir, datasets, models, discard=False):
    """-r with changed settings: stop before any request, naming what changed; with `discard`
    (--discard-stale), set the old predictions aside instead. Here, before any task starts: the
    shards of a sharded inference read the run's predictions file before their own part, and
    would otherwise go on from (and merge back) what was made with the old settings."""
    from .inference.engine import check_stale, infer_settings
    from .predictions import PredictionStore
    for model in models:
        for ds_cfg, dataset in zip(cfg['datasets'], datasets):
            store = PredictionStore(run_dir.predictions_path(model.abbr, dataset.abbr))
            check_stale(store, infer_settings(model, dataset, ds_cfg.get('infer_cfg') or {}), discard=discard)


def to_regenerate(datasets):
    """Abbrs of the datasets whose regenerated targets are incomplete, one per targets file."""
    from .targets.locate import missing_regenerated, plan_targets
    chosen = {}
    for ds in datasets:
        if missing_regenerated(ds):
            chosen.setdefault(plan_targets(ds)[1], ds.abbr)
    return sorted(chosen.values())


def compared_runs(args, run_dir):
    """The runs --compare names: a run directory's path, or a timestamp in this work dir."""
    runs = []
    for name in args.compare or ():
        path = Path(name)
        other = RunDir(path.parent, path.name) if path.is_dir() else RunDir(run_dir.work_dir, name)
        if not (other.root / 'results').is_dir():
            raise ConfigError(f'--compare {name}: {other.root} holds no results',
                              fix=f'give a timestamp of a run in {run_dir.work_dir}/ or the path of a run directory')
        runs.append(other)
    return runs


def section(cfg, name, key, default):
    """`cfg[name][key]` (OpenCompass's infer=/eval= sections), else the top-level `key`."""
    return (cfg.get(name) or {}).get(key) or cfg.get(key) or {'type': default}


def build_stage(cfg, stage, args):
    """(partitioner, runner) for a stage, as the config and the command line ask."""
    name = SECTION[stage]
    partitioner = build(dict(section(cfg, name, 'partitioner', NaivePartitioner)), key=f'{name}.partitioner')
    runner_cfg = dict(section(cfg, name, 'runner', LocalRunner))
    if args.slurm:
        # Keep what the config says of Slurm (time, memory, ...); the command line wins.
        runner_cfg = dict(runner_cfg if resolve_type(runner_cfg['type']) is SlurmRunner else {},
                          type=SlurmRunner, partition=args.partition)
        if args.qos:
            runner_cfg['qos'] = args.qos
        if args.retry is not None:
            runner_cfg['retry'] = args.retry
    if args.max_num_workers:
        runner_cfg['max_num_workers'] = args.max_num_workers
    runner = build(runner_cfg, key=f'{name}.runner', debug=args.debug)
    return partitioner, runner


def _relative(path, root):
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return str(path)


def print_plan(plan, datasets_by_abbr, runners, root):
    """Every task with its shard, its problems, what it asks of a cluster, and how it is started."""
    rows = []
    for stage, specs in plan.items():
        for spec in specs:
            abbrs = spec.labels.get('datasets') or [spec.labels['dataset']]
            chosen = spec.labels.get('problems') or {}
            problems, steps = [], []
            for abbr in abbrs:
                dataset = datasets_by_abbr[abbr]
                ids = chosen.get(abbr) or [p.problem_id for p in dataset.problems]
                problems.append(f'{len(ids)} ({", ".join(ids[:6])}{", ..." if len(ids) > 6 else ""})')
                steps.append(str(sum(len(p.scored_steps) for p in dataset.problems if p.problem_id in ids)))
            resources = ', '.join(f'{k}={v}' for k, v in spec.resources.items()) or '-'
            rows.append([spec.name, '\n'.join(abbrs), spec.labels.get('shard', '-'), '\n'.join(problems),
                         '\n'.join(steps), resources, '\n'.join(_relative(o, root) for o in spec.outputs) or '-'])
    print(tabulate(rows, headers=['task', 'dataset', 'shard', 'problems', 'steps', 'resources', 'output'],
                   disable_numparse=True))
    for stage, specs in plan.items():
        for spec in specs:
            print(f'{spec.name}: {runners[stage].describe(spec)}')


def run_stage(runner, run_dir, specs, stage, earlier):
    """Launch the stage's tasks, except those depending on a task that stopped early."""
    stopped = {s.name for s in earlier if s.stopped_others}
    statuses, to_run = [], []
    for spec in specs:
        blocked = [name for name in spec.depends_on if name in stopped]
        if blocked:
            statuses.append(TaskStatus(spec.name, 'not run', 0.0, spec.log_path,
                                       note=f'{", ".join(blocked)} did not finish',
                                       labels=dict(spec.labels, stage=spec.stage)))
        else:
            to_run.append(spec)
    statuses.extend(runner.launch(to_run, title=stage))
    run_dir.save_status({s.name: s.record() for s in statuses})
    return statuses


def print_statuses(statuses):
    if not statuses:
        return
    rows = [[s.name, s.state + (f' ({s.note})' if s.note else ''), f'{s.duration_s:.1f}s', s.log_path]
            for s in statuses]
    print(tabulate(rows, headers=['task', 'state', 'duration', 'log'], disable_numparse=True))


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv=None, prog=None):
    args = parse_args(sys.argv[1:] if argv is None else argv, prog=prog)
    # SIGTERM (a scheduler, `kill`) stops a run as Ctrl-C does: tasks and jobs are stopped, and
    # what they finished is kept for -r.
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        return _main(args)
    except UserFacingError as exc:
        console.print(f'[bold red]error:[/] {exc}', highlight=False)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        console.print('[yellow]interrupted. Finished steps are saved; continue with -r.')
        return EXIT_INTERRUPTED
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main(args):
    loaded = config_from_args(args)      # a config file and/or OpenCompass's --datasets/--models/--hf-path
    if loaded is None:
        if args.prepare_data:
            prepare_data(DEFAULT_DATA_DIR)
            console.print(f'SciCode data ready in {DEFAULT_DATA_DIR}/')
            return 0
        raise ConfigError('no config file given', fix=f'{args.command} configs/eval_scicode.py, or '
                                                       f'{args.command} --datasets scicode_gen --models reference')
    cfg, source, notes = loaded
    for note in notes:
        console.print(f'[cyan]note:[/] {note}', highlight=False, soft_wrap=True)
    for note in validate_config(cfg, file=source):
        console.print(f'[cyan]note:[/] {note}', highlight=False, soft_wrap=True)
    fill_abbrs(cfg)
    if args.prepare_data:
        for path in sorted({ds.get('path', DEFAULT_DATA_DIR) for ds in cfg['datasets']}):
            prepare_data(path)
            console.print(f'SciCode data ready in {path}/')
        return 0
    run_dir, reuse = _resolve_run_dir(args, cfg)
    compare = compared_runs(args, run_dir)      # before any work: a wrong name stops here
    stages = STAGES[args.run_mode]
    datasets, models = preflight(cfg, stages) if stages else ([], [])
    if reuse and 'infer' in stages and not args.discard_stale:
        check_stale_predictions(cfg, run_dir, datasets, models)
    plans = {stage: build_stage(cfg, stage, args) for stage in stages}
    options = {'eager_eval': 'eval' in stages and 'infer' in stages and not args.debug
                             and plans['infer'][1].early_evaluation,
               'discard_stale': args.discard_stale,
               'regenerate': to_regenerate(datasets) if 'targets' in stages else ()}

    if args.dry_run:
        plan = {stage: partitioner.partition(cfg, run_dir, stage, dry_run=True, **options)
                for stage, (partitioner, _) in plans.items()}
        print(f'run directory: {run_dir.root} (outputs below are relative to it)')
        print_plan({stage: specs for stage, specs in plan.items() if specs}, {d.abbr: d for d in datasets},
                   {stage: runner for stage, (_, runner) in plans.items()}, run_dir.root)
        for line in server_lines(cfg):
            print(line)
        return 0
    for _, runner in plans.values():
        runner.check()          # e.g. Slurm's commands and partition: before any work is done

    summarizer = build(dict(cfg.get('summarizer') or {'type': SciCodeSummarizer}), key='summarizer')
    lock = RunLock(run_dir.root).acquire()
    try:
        if reuse and 'infer' in stages and args.discard_stale:
            check_stale_predictions(cfg, run_dir, datasets, models, discard=True)
        run_dir.create()
        dump_config(redact_config({k: cfg[k] for k in cfg.keys()}), run_dir.config_path)
        console.print(f'run directory: {run_dir.root}')
        statuses = []
        for k, (stage, (partitioner, runner)) in enumerate(plans.items()):
            specs = partitioner.partition(cfg, run_dir, stage, **options)
            if k == 0 and hasattr(summarizer, 'prepare'):
                # Work for the waits ahead; started sooner, it would hold back the first tasks.
                summarizer.prepare()
            statuses += run_stage(runner, run_dir, specs, stage, statuses)
        print_statuses(statuses)
        summary = summarizer.summarize(cfg, run_dir, **({'compare': compare} if compare else {})) or {}
    finally:
        lock.release()
    if any(s.state == 'interrupted' for s in statuses):
        return EXIT_INTERRUPTED
    not_scored = summary.get('not_scored') or {}
    if not_scored:
        console.print('[bold red]error:[/] steps could not be scored (eval_error), counted as failed: '
                      + ', '.join(f'{where}: {n}' for where, n in not_scored.items()), highlight=False)
    return 0 if all(s.ok for s in statuses) and not not_scored else EXIT_TASK_FAILED
