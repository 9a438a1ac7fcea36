"""`python run.py CONFIG` (or `opencompass-scicode CONFIG`): check, plan, infer, evaluate, summarize."""
import argparse
import sys
from pathlib import Path

from rich.console import Console
from tabulate import tabulate

from .config import build, load_config, validate_config
from .config.builder import build_dataset, build_model, dump_config
from .inference.modes import requires_chat
from .models.secrets import redact_config
from .datasets.files import DEFAULT_DATA_DIR, prepare_data
from .errors import ConfigError, UserFacingError
from .partitioners import NaivePartitioner
from .runners import LocalRunner, TaskStatus
from .summarizers import SciCodeSummarizer
from .tasks import load_task
from .utils.workdir import RunDir, latest_timestamp, new_timestamp

MODES = ('all', 'infer', 'eval', 'viz')
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
    p.add_argument('-m', '--mode', choices=MODES, default='all',
                   help='all: infer+eval+summary; infer; eval: score existing predictions; '
                        'viz: summary only')
    p.add_argument('--debug', action='store_true', help='run tasks in this process, one by one, '
                                                        'with tracebacks')
    p.add_argument('--dry-run', action='store_true', help='print the task plan and exit')
    p.add_argument('--max-num-workers', type=int, help='tasks running at once (overrides the config)')
    p.add_argument('--prepare-data', action='store_true',
                   help='fetch and verify the SciCode data files, then exit')
    p.add_argument('--discard-stale', action='store_true',
                   help='with -r: set aside predictions made with other settings and generate again')
    args = p.parse_args(argv)
    args.command = f'python {p.prog}' if p.prog.endswith('.py') else p.prog
    return args


def _resolve_run_dir(args, cfg):
    work_dir = args.work_dir or cfg.get('work_dir') or 'outputs/default'
    if args.reuse:
        stamp = latest_timestamp(work_dir) if args.reuse == 'latest' else args.reuse
        if stamp is None:
            if args.mode in ('eval', 'viz'):
                raise ConfigError(f'-r: no previous run in {work_dir}/ to reuse',
                                  fix='run without -r first, or pass -w to the right work dir')
            console.print(f'[yellow]-r: no previous run in {work_dir}/; starting a new one')
            return RunDir(work_dir, new_timestamp()), False
        run_dir = RunDir(work_dir, stamp)
        if not run_dir.root.is_dir():
            raise ConfigError(f'-r {stamp}: {run_dir.root} does not exist',
                              fix=f'pick one of the runs in {work_dir}/ or use -r alone for the latest')
        return run_dir, True
    if args.mode in ('eval', 'viz'):
        raise ConfigError(f'-m {args.mode} works on an earlier run\'s outputs',
                          fix='add -r (latest run) or -r TIMESTAMP')
    return RunDir(work_dir, new_timestamp()), False


def preflight(cfg, mode):
    """Everything that can be checked before spending time or money: data, models, targets."""
    from .targets.resolve import plan_targets
    datasets = []
    for i, ds_cfg in enumerate(cfg['datasets']):
        key = f'datasets[{i}]'
        dataset = build_dataset(ds_cfg, key=key)
        try:
            dataset.problems  # loads (and fetches) the data, checks sample_ids
        except ConfigError as exc:
            raise exc.within(key=key) from None
        if mode in ('all', 'eval'):
            plan_targets(dataset)
        datasets.append(dataset)
    models = []
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
            mode = (cfg['datasets'][j].get('infer_cfg') or {}).get('mode', 'naive')
            if requires_chat(mode) and not model.supports_chat:
                raise ConfigError(f'mode {mode!r} needs a chat model; {type(model).__name__} '
                                  f'({model.abbr!r}) only answers single prompts',
                                  key=f'datasets[{j}].infer_cfg.mode',
                                  fix="use mode='naive' with this model, or an OpenAIChatModel")
    return datasets, models


def check_stale_predictions(cfg, run_dir, datasets, models):
    """-r with changed settings: stop before any request, naming what changed.

    With --discard-stale the inference task sets the old predictions aside instead.
    """
    from .config.builder import prefilled_mode
    from .inference.engine import check_stale, infer_settings
    from .predictions import PredictionStore
    for model in models:
        for ds_cfg, dataset in zip(cfg['datasets'], datasets):
            store = PredictionStore(run_dir.predictions_path(model.abbr, dataset.abbr))
            check_stale(store, infer_settings(model, dataset, ds_cfg.get('infer_cfg') or {},
                                              prefilled_mode(ds_cfg)))


def print_plan(tasks, datasets_by_abbr):
    rows = []
    for stage, items in tasks.items():
        for t in items:
            task = load_task(t)
            for d_abbr in t.get('dataset_abbrs') or [t['dataset_abbr']]:
                ds = datasets_by_abbr[d_abbr]
                ids = [p.problem_id for p in ds.problems]
                out = task.store(d_abbr).path if stage == 'infer' else task.results_path
                rows.append([stage, t['model_abbr'], d_abbr, ds.split, ds.with_bg,
                             f'{len(ids)} ({", ".join(ids[:8])}{", ..." if len(ids) > 8 else ""})',
                             ds.scored_step_count, str(out)])
    print(tabulate(rows, headers=['stage', 'model', 'dataset', 'split', 'with_bg', 'problems',
                                  'steps', 'output'], disable_numparse=True))


def prepare_targets(datasets):
    """Regenerate validation targets here, with a progress bar, before eval tasks start."""
    from rich.progress import Progress
    from .targets.resolve import needs_regeneration, resolve_targets
    for ds in datasets:
        if not needs_regeneration(ds):
            continue
        with Progress(console=console) as bar:
            row = bar.add_task(f'regenerating targets for {ds.abbr} (gold code)', total=None)
            targets = resolve_targets(ds, progress=lambda d, n: bar.update(row, completed=d, total=n))
        wanted = {s.step_id for p in ds.problems for s in p.scored_steps}
        bad = {k: v for k, v in (targets.report or {}).items() if v != 'ok' and k in wanted}
        for step_id, why in sorted(bad.items()):
            console.print(f'[yellow]step {step_id}: no regenerated target ({why.splitlines()[0]})')


def run_stage(runner, run_dir, tasks, reuse, blocked=()):
    statuses = []
    to_run = []
    for t in tasks:
        task = load_task(t)
        if t['model_abbr'] in blocked:
            statuses.append(TaskStatus(task.name, 'not run', 0.0, str(task.log_path),
                                       note='inference failed'))
        elif reuse and task.is_complete():
            statuses.append(TaskStatus(task.name, 'skipped', 0.0, str(task.log_path),
                                       note='outputs complete'))
        else:
            to_run.append(t)
    statuses.extend(runner.launch(to_run, title=tasks[0]['stage'] if tasks else ''))
    run_dir.save_status({s.name: {'state': s.state, 'duration_s': s.duration_s, 'log': s.log_path,
                                  'note': s.note} for s in statuses})
    return statuses


def print_statuses(statuses):
    if not statuses:
        return
    rows = [[s.name, s.state + (f' ({s.note})' if s.note else ''), f'{s.duration_s:.1f}s', s.log_path]
            for s in statuses]
    print(tabulate(rows, headers=['task', 'state', 'duration', 'log'], disable_numparse=True))


def main(argv=None, prog=None):
    args = parse_args(sys.argv[1:] if argv is None else argv, prog=prog)
    try:
        return _main(args)
    except UserFacingError as exc:
        console.print(f'[bold red]error:[/] {exc}', highlight=False)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        console.print('[yellow]interrupted. Finished steps are saved; continue with -r.')
        return EXIT_INTERRUPTED


def _main(args):
    if args.config is None:
        if args.prepare_data:
            prepare_data(DEFAULT_DATA_DIR)
            console.print(f'SciCode data ready in {DEFAULT_DATA_DIR}/')
            return 0
        raise ConfigError('no config file given', fix=f'{args.command} configs/eval_scicode.py')
    cfg = load_config(args.config)
    validate_config(cfg, file=args.config)
    if args.prepare_data:
        for path in sorted({ds.get('path', DEFAULT_DATA_DIR) for ds in cfg['datasets']}):
            prepare_data(path)
            console.print(f'SciCode data ready in {path}/')
        return 0
    run_dir, reuse = _resolve_run_dir(args, cfg)
    datasets, models = preflight(cfg, args.mode) if args.mode != 'viz' else ([], [])
    by_abbr = {d.abbr: d for d in datasets}
    if reuse and args.mode in ('all', 'infer') and not args.discard_stale:
        check_stale_predictions(cfg, run_dir, datasets, models)

    stages = {'all': ('infer', 'eval'), 'infer': ('infer',), 'eval': ('eval',), 'viz': ()}[args.mode]
    if args.dry_run:
        plan = NaivePartitioner().partition(cfg, _DryRunDir(run_dir), stages)
        print(f'run directory: {run_dir.root}')
        print_plan(plan, by_abbr)
        return 0

    run_dir.create()
    dump_config(redact_config({k: cfg[k] for k in cfg.keys()}), run_dir.config_path)
    console.print(f'run directory: {run_dir.root}')
    tasks = NaivePartitioner().partition(cfg, run_dir, stages, options={
        'eager_eval': args.mode == 'all' and not args.debug, 'discard_stale': args.discard_stale})

    runner_cfg = dict(cfg.get('runner') or {'type': LocalRunner})
    if args.max_num_workers:
        runner_cfg['max_num_workers'] = args.max_num_workers
    runner = build(runner_cfg, key='runner', debug=args.debug)

    statuses = []
    if 'eval' in stages:
        prepare_targets(datasets)     # before inference: problems can be scored as they finish
    if 'infer' in stages:
        statuses += run_stage(runner, run_dir, tasks['infer'], reuse)
    if 'eval' in stages:
        failed_models = {s.name.split('/')[1] for s in statuses if s.state in ('failed', 'interrupted')}
        statuses += run_stage(runner, run_dir, tasks['eval'], reuse, blocked=failed_models)
    print_statuses(statuses)

    summarizer = build(dict(cfg.get('summarizer') or {'type': SciCodeSummarizer}), key='summarizer')
    summarizer.summarize(cfg, run_dir)
    if any(s.state == 'interrupted' for s in statuses):
        return EXIT_INTERRUPTED
    return 0 if all(s.ok for s in statuses) else EXIT_TASK_FAILED


class _DryRunDir(RunDir):
    """Plans task files under a throwaway directory: a dry run writes nothing in the work dir."""

    def __init__(self, real):
        import tempfile
        super().__init__(real.work_dir, real.timestamp)
        self._tmp = Path(tempfile.mkdtemp(prefix='scicode-dryrun-'))

    def task_config_path(self, stage, model_abbr, dataset_abbr=None):
        return self._tmp / super().task_config_path(stage, model_abbr, dataset_abbr).name
