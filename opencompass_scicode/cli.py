"""`python run.py CONFIG` (or `opencompass-scicode CONFIG`): check, plan, prepare targets, infer,
evaluate, summarize. `opencompass-scicode compare A [B]` compares two results (launch/compare.py).

The face: it parses the command line, loads and checks the config, plans the run and runs it
(launch/), and prints what comes back. What is checked before any work lives with its data
(targets/preflight.py, inference/preflight.py).
"""
import argparse
import signal
from pprint import pformat
import sys
import threading
from pathlib import Path

from rich.console import Console
from tabulate import tabulate

from .config import fill_abbrs, fill_protocols, validate_config
from .adapters.agentcompass.command_line import add_arguments as add_agentcompass_arguments
from .adapters.agentcompass.command_line import config_from_run_args, in_their_words
from .adapters.opencompass.command_line import add_arguments, config_from_args, server_lines
from .errors import (EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USER_ERROR, ConfigError, NoSpaceError,
                     UserFacingError, out_of_space)
from .launch import RUN_MODES, LaunchOptions, plan_run, prepare_data_dirs, regrade, run_plan
from .utils.plain import to_plain
from .utils.secrets import redact_config

console = Console(stderr=True)


def _add_run_flags(p):
    """The flags of every run, whichever command line builds its config."""
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
    p.add_argument('-p', '--partition', help='the Slurm partition (with --slurm, or for the config\'s SlurmRunner)')
    p.add_argument('--qos', help='the Slurm QOS (with --slurm, or for the config\'s SlurmRunner)')
    p.add_argument('--retry', type=int, help='Slurm: submit a job that ended without its outputs '
                                             '(cancelled, node failure, time limit, ...) again, up to N '
                                             'times (default 2)')
    p.add_argument('--no-download', action='store_true',
                   help='never fetch missing test targets (as SCICODE_OFFLINE=1); stop with the manual steps')
    p.add_argument('--no-probe', action='store_true',
                   help='do not ask API models\' endpoints once before any work (for endpoints that bill '
                        'even the model list); a wrong URL or key then shows at the first request')
    p.add_argument('--discard-stale', action='store_true',
                   help='with -r: set aside predictions made with other settings and generate again')
    p.add_argument('--compare', nargs='+', metavar='RUN',
                   help='show these runs beside this one in the report (timestamps in the work dir, '
                        'or paths of run directories), e.g. -m viz -r --compare 20260101_120000')


def _compare(argv, prog):
    """`compare A [B] ...` (launch/compare.py)."""
    from .launch.compare import run_compare
    return run_compare(argv, prog or argparse.ArgumentParser().prog)


def regrade_parser(prog) -> argparse.ArgumentParser:
    """`regrade RUN_DIR [--protocol NAME] [scoring knobs]`: score a finished run's answers again."""
    from .config.regrade import PROTOCOL_NAMES
    p = argparse.ArgumentParser(prog=f'{prog} regrade',
                                description='Score a finished run\'s predictions again, under another protocol or '
                                            'with other scoring knobs, into RUN_DIR/regrades/<label>/; no model is '
                                            'asked anything (docs/protocols.md).')
    p.add_argument('run_dir', help='the run directory (<work_dir>/<timestamp>)')
    p.add_argument('--protocol', help=f'score under this protocol: {", ".join(PROTOCOL_NAMES)}')
    p.add_argument('--scoring-only', action='store_true',
                   help='a protocol whose answers differ (prompt form, background, generation settings): score '
                        'these answers with its scoring knobs anyway; the record names the difference')
    p.add_argument('--timeout', type=float, help='seconds per step program')
    p.add_argument('--memory-limit-mb', type=int, dest='memory_limit_mb', help='address space per step program')
    p.add_argument('--environments', help='scoring environments, comma-separated, e.g. 2024,current')
    p.add_argument('--environment-rule', dest='environment_rule', help="any, all, or one environment's name")
    p.add_argument('--extraction', help='code extraction rule: official, opencompass, inspect_evals')
    p.add_argument('--prefilled-steps', dest='prefilled_steps', help='skipped, failed or scored')
    p.add_argument('--simps-shim', dest='simps_shim', choices=('on', 'off'), help='the scipy.integrate.simps shim')
    p.add_argument('--debug', action='store_true', help='run tasks in this process, one by one')
    p.add_argument('--max-num-workers', type=int, help='tasks in flight at once')
    p.add_argument('--no-download', action='store_true',
                   help='never fetch or build what is missing (targets, a scoring environment)')
    return p


def make_parser(agentcompass=False, prog=None) -> argparse.ArgumentParser:
    """The parser of AgentCompass's command line (`run scicode ...`, after `run`), or of the
    others: a config file and/or OpenCompass's flags."""
    prog = prog or argparse.ArgumentParser().prog          # argparse's own name for this program
    if agentcompass:
        p = argparse.ArgumentParser(prog=f'{prog} run',
                                    description='Evaluate a model on SciCode with AgentCompass\'s command line.')
        add_agentcompass_arguments(p)
    else:
        p = argparse.ArgumentParser(prog=prog, description='Evaluate models on SciCode.')
        p.add_argument('config', nargs='?', help='Python config file, e.g. configs/eval_scicode.py')
        p.add_argument('--prepare-data', action='store_true',
                       help='fetch and verify the SciCode data files, then exit')
    _add_run_flags(p)
    if not agentcompass:
        add_arguments(p)        # OpenCompass's --datasets/--models/--hf-path ... (adapters/opencompass/)
    return p


def parse_args(argv, prog=None) -> argparse.Namespace:
    """`prog` None: the name this was started by (`run.py`, `opencompass-scicode`). A command line
    starting with `run` is AgentCompass's (`run scicode scicode_tool_use MODEL ...`), one starting
    with `regrade` scores a finished run again."""
    agentcompass = bool(argv) and argv[0] == 'run'
    prog = prog or argparse.ArgumentParser().prog
    if argv and argv[0] == 'regrade':
        args = regrade_parser(prog).parse_args(argv[1:])
        args.regrade, args.agentcompass = True, False
        return args
    p = make_parser(agentcompass, prog)
    if agentcompass:
        argv = argv[1:]
    args = p.parse_args(argv)
    args.agentcompass, args.regrade = agentcompass, False
    if agentcompass:
        args.config, args.prepare_data = None, False
    args.command = f'python {prog}' if prog.endswith('.py') else prog
    return args


def _relative(path, root):
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return str(path)


def print_plan(plan, datasets_by_abbr, runners, root) -> None:
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


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv=None, prog=None) -> int:
    """The command line `argv` (without the program's name) run to its end; the exit code
    (errors.py's EXIT_*). `prog`: the name this was started by, for messages."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == 'compare':     # two results side by side: no config, nothing runs
        try:
            return _compare(argv[1:], prog)
        except UserFacingError as exc:
            console.print(f'[bold red]error:[/] {exc}', highlight=False)
            return EXIT_USER_ERROR
    args = parse_args(argv, prog=prog)
    # SIGTERM (a scheduler, `kill`) stops a run as Ctrl-C does: tasks and jobs are stopped, and
    # what they finished is kept for -r.
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        return _main(args)
    except NoSpaceError as exc:         # not the user's input: the run stopped midway
        console.print(f'[bold red]error:[/] {exc}', highlight=False, soft_wrap=True)
        return EXIT_FAILED
    except UserFacingError as exc:
        if args.agentcompass and isinstance(exc, ConfigError):     # the flags' words, not the config's
            exc = in_their_words(exc)
        console.print(f'[bold red]error:[/] {exc}', highlight=False)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        console.print('[yellow]interrupted. Finished steps are saved; continue with -r.')
        return EXIT_INTERRUPTED
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def launch_options(args) -> LaunchOptions:
    """The command line's choices for planning and running the run."""
    return LaunchOptions(work_dir=args.work_dir, reuse=args.reuse, run_mode=args.run_mode, debug=args.debug,
                         max_num_workers=args.max_num_workers, slurm=args.slurm, partition=args.partition,
                         qos=args.qos, retry=args.retry, discard_stale=args.discard_stale,
                         compare=tuple(args.compare or ()), download=not args.no_download,
                         dry_run=args.dry_run, probe=not args.no_probe)


def _note(text):
    console.print(f'[cyan]note:[/] {text}', highlight=False, soft_wrap=True)


def _regrade(args):
    from .config.regrade import flag_values
    options = LaunchOptions(debug=args.debug, max_num_workers=args.max_num_workers, download=not args.no_download)
    outcome = regrade(args.run_dir, args.protocol, flag_values(args), args.scoring_only, options,
                      say=console.print, warn=lambda text: console.print(f'[yellow]{text}'), note=_note)
    if outcome.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_OK if outcome.ok else EXIT_FAILED


def _main(args):
    if args.regrade:
        return _regrade(args)
    # AgentCompass's `run scicode ...`, else a config file and/or OpenCompass's --datasets/--models/--hf-path
    loaded = config_from_run_args(args) if args.agentcompass else config_from_args(args)
    if loaded is None:
        if args.prepare_data:
            prepare_data_dirs(None, say=console.print)
            return EXIT_OK
        raise ConfigError('no config file given', fix=f'{args.command} configs/eval_scicode.py, or '
                                                       f'{args.command} --datasets scicode_validation --models reference')
    cfg, source, notes = loaded
    for note in notes:
        _note(note)
    fill_protocols(cfg, file=source)
    for note in validate_config(cfg, file=source):
        _note(note)
    fill_abbrs(cfg)
    if getattr(args, 'config_verbose', False):     # OpenCompass's --config-verbose: the config as run
        print(pformat(redact_config(to_plain(dict(cfg.items()))), width=110, sort_dicts=False))
    if args.prepare_data:
        prepare_data_dirs(cfg, say=console.print)
        return EXIT_OK
    plan = plan_run(cfg, launch_options(args), warn=lambda text: console.print(f'[yellow]{text}'), note=_note)
    if args.dry_run:
        tasks = plan.dry_run()
        print(f'run directory: {plan.run_dir.root} (outputs below are relative to it)')
        for abbr, data_dir, lines, what in plan.fetches:
            print(f'dataset {abbr!r}: {what} missing in {data_dir}/; a run fetches them first, trying in order:')
            for line in lines:
                print(f'  {line}')
        read = {d.abbr for d in plan.datasets}
        waiting = [repr(d['abbr']) for d in cfg['datasets'] if d['abbr'] not in read] if plan.fetches else []
        if waiting:
            print(f'tasks: listed once the problems of {", ".join(waiting)} are in place (they decide the tasks)')
        print_plan({stage: specs for stage, specs in tasks.items() if specs}, {d.abbr: d for d in plan.datasets},
                   {stage: runner for stage, (_, runner) in plan.stages.items()}, plan.run_dir.root)
        for line in server_lines(cfg):
            print(line)
        for line in plan.token_limits():
            print(line)
        return EXIT_OK
    try:
        outcome = run_plan(plan, say=console.print)
    except OSError as exc:
        if out_of_space(exc):       # a writer that does not say which file: name the run's folder
            raise NoSpaceError(exc.filename or plan.run_dir.root) from None
        raise
    if outcome.interrupted:
        return EXIT_INTERRUPTED
    not_scored = outcome.summary.get('not_scored') or {}
    if not_scored:
        console.print('[bold red]error:[/] steps could not be scored (eval_error), counted as failed: '
                      + ', '.join(f'{where}: {n}' for where, n in not_scored.items()), highlight=False)
    return EXIT_OK if outcome.ok and not not_scored else EXIT_FAILED
