"""What every partitioner shares: turning one unit of work into a task file and its spec.

The task file holds the spec (tasks/contract.py) under `task` and the work
itself (model and dataset entries, types as import paths) beside it, as JSON:
a task process reads it without loading mmengine (about half a second each).
Secrets never reach it: literal API keys are moved into the environment the
run's processes inherit.
"""
import os
import sys

from ..registry import to_plain
from ..tasks.contract import TaskSpec
from ..utils.workdir import write_json_atomic
from ..utils.pythonpath import with_package
from ..utils.secrets import move_secrets_to_env

TASK_MODULE = 'opencompass_scicode.tasks'


class BasePartitioner:
    """`partition` returns the TaskSpecs of one stage and writes their task files (unless
    `dry_run`). Subclasses split inference and evaluation; targets are prepared once per
    dataset that needs them, whatever the partitioner."""

    def partition(self, cfg, run_dir, stage, dry_run=False, **options):
        if stage == 'targets':
            return self.targets_tasks(cfg, run_dir, dry_run, options.get('regenerate', ()))
        if stage == 'infer':
            return self.infer_tasks(cfg, run_dir, dry_run, eager_eval=options.get('eager_eval', False),
                                    discard_stale=options.get('discard_stale', False))
        if stage == 'eval':
            return self.eval_tasks(cfg, run_dir, dry_run)
        raise ValueError(f'unknown stage {stage!r}')

    def infer_tasks(self, cfg, run_dir, dry_run, eager_eval, discard_stale):
        raise NotImplementedError

    def eval_tasks(self, cfg, run_dir, dry_run):
        raise NotImplementedError

    def targets_tasks(self, cfg, run_dir, dry_run, regenerate):
        """One task per dataset named in `regenerate` (abbrs)."""
        return [self.task(run_dir, 'targets', [ds['abbr']], {'dataset': ds}, labels={'dataset': ds['abbr']},
                          dry_run=dry_run)
                for ds in cfg['datasets'] if ds['abbr'] in regenerate]

    @staticmethod
    def model_entry(model_cfg):
        return move_secrets_to_env(to_plain(dict(model_cfg)), model_cfg['abbr'])

    @staticmethod
    def task(run_dir, stage, parts, work, outputs=(), depends_on=(), labels=None, dry_run=False):
        name = run_dir.task_name(stage, *parts)
        config_path = run_dir.task_config_path(name)
        log_path = run_dir.log_path(name)
        spec = TaskSpec(
            name=name, stage=stage,
            command=[sys.executable, '-m', TASK_MODULE, str(config_path)],
            config_path=str(config_path), log_path=str(log_path),
            progress_path=str(log_path.with_suffix('.progress.json')),
            outputs=[str(p) for p in outputs], depends_on=list(depends_on), labels=dict(labels or {}),
            env={'PYTHONPATH': with_package(os.environ.get('PYTHONPATH'))})
        if not dry_run:
            write_json_atomic(config_path, dict(task=spec.to_dict(), work_dir=str(run_dir.work_dir),
                                                timestamp=run_dir.timestamp, **to_plain(work)))
        return spec
