"""Today's plan: one inference task per model, one evaluation task per model and dataset.

Inference runs a model over all its datasets in one task, so that the model's
concurrency and rate limits hold for the whole run.
"""
from .base import BasePartitioner


class NaivePartitioner(BasePartitioner):
    def infer_tasks(self, cfg, run_dir, dry_run, eager_eval, discard_stale):
        datasets = cfg['datasets']
        return [self.task(run_dir, 'infer', [m['abbr']],
                          {'model': self.model_entry(m), 'datasets': datasets,
                           'eager_eval': eager_eval, 'discard_stale': discard_stale},
                          outputs=[run_dir.predictions_path(m['abbr'], ds['abbr']) for ds in datasets],
                          labels={'model': m['abbr'], 'datasets': [ds['abbr'] for ds in datasets]},
                          dry_run=dry_run)
                for m in cfg['models']]

    def eval_tasks(self, cfg, run_dir, dry_run):
        return [self.task(run_dir, 'eval', [m['abbr'], ds['abbr']], {'model_abbr': m['abbr'], 'dataset': ds},
                          outputs=[run_dir.results_path(m['abbr'], ds['abbr'])],
                          depends_on=[run_dir.task_name('infer', m['abbr'])],
                          labels={'model': m['abbr'], 'dataset': ds['abbr']}, dry_run=dry_run)
                for m in cfg['models'] for ds in cfg['datasets']]
