"""Turns models x datasets into task configs.

Inference: one task per model, over all its datasets (so the model's
concurrency and rate limits hold for the whole run). Evaluation: one task
per (model, dataset).
"""
from ..config.builder import dump_config
from ..config.naming import dataset_abbr, model_abbr
from ..config.registry import to_plain
from ..models.secrets import move_secrets_to_env


class NaivePartitioner:
    def partition(self, cfg, run_dir, stages=('infer', 'eval'), options=None):
        """Dump one config file per task; return the task dicts by stage."""
        options = options or {}
        tasks = {stage: [] for stage in stages}
        common = {'work_dir': str(run_dir.work_dir), 'timestamp': run_dir.timestamp}
        datasets = [to_plain(dict(d)) for d in cfg['datasets']]
        abbrs = [dataset_abbr(d) for d in cfg['datasets']]
        for model in cfg['models']:
            m_abbr = model_abbr(model)
            model_cfg = move_secrets_to_env(to_plain(dict(model)), m_abbr)
            if 'infer' in stages:
                task = dict(common, stage='infer', model_abbr=m_abbr, model=model_cfg,
                            datasets=datasets, dataset_abbrs=abbrs,
                            eager_eval=options.get('eager_eval', False),
                            discard_stale=options.get('discard_stale', False))
                tasks['infer'].append(self._dump(task, run_dir.task_config_path('infer', m_abbr)))
            if 'eval' in stages:
                for dataset, d_abbr in zip(datasets, abbrs):
                    task = dict(common, stage='eval', model_abbr=m_abbr, model=model_cfg,
                                dataset=dataset, dataset_abbr=d_abbr)
                    tasks['eval'].append(self._dump(task, run_dir.task_config_path('eval', m_abbr, d_abbr)))
        return tasks

    @staticmethod
    def _dump(task, path):
        path.parent.mkdir(parents=True, exist_ok=True)
        dump_config(task, path)
        task['config_path'] = str(path)
        return task
