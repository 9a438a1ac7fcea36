"""Running a re-grade (config/regrade.py says what it is): a run directory beside the run,
`RUN_DIR/regrades/<label>/`, whose predictions are the run's (a link), scored as `-m eval -r`
scores a run: targets, evaluation tasks, the summary and report. No model is built or asked:
only the targets and evaluation stages run."""
from pathlib import Path

from ..config import fill_abbrs, validate_config
from ..config.regrade import REGRADES, regrade_config
from .execute import Outcome, run_plan
from .plan import LaunchOptions, RunPlan, plan_run


def regrade_dir(run_root, label) -> Path:
    """RUN_DIR/regrades/<label>/, made ready: its predictions are the run's (a relative link)."""
    root = Path(run_root) / REGRADES / label
    root.mkdir(parents=True, exist_ok=True)
    link = root / 'predictions'
    if not link.exists() and not link.is_symlink():
        link.symlink_to(Path('..') / '..' / 'predictions', target_is_directory=True)
    return root


def plan_regrade(run_root, protocol=None, flags=None, scoring_only=False, options=None, warn=print, note=print) -> RunPlan:
    """The plan of a re-grade of `run_root` (refused before any work where it needs new answers)."""
    cfg, label = regrade_config(run_root, protocol, flags, scoring_only)
    for text in validate_config(cfg, file=f'{run_root} (re-graded as {label})'):
        note(text)
    fill_abbrs(cfg)
    root = regrade_dir(run_root, label)
    base = options or LaunchOptions()
    options = LaunchOptions(work_dir=str(root.parent), reuse=label, run_mode='eval', debug=base.debug,
                            max_num_workers=base.max_num_workers, download=base.download, dry_run=base.dry_run)
    return plan_run(cfg, options, warn=warn, note=note)


def regrade(run_root, protocol=None, flags=None, scoring_only=False, options=None, say=print, warn=print,
            note=print) -> Outcome:
    """Plan and run a re-grade; the Outcome (execute.py)."""
    plan = plan_regrade(run_root, protocol, flags, scoring_only, options, warn, note)
    return run_plan(plan, say=say)
