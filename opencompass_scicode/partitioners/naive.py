"""Turns models x datasets into task configs, one per (stage, model, dataset)."""
from ..config.builder import dump_config
from ..config.registry import to_plain
from ..config.naming import dataset_abbr, model_abbr


class NaivePartitioner:
    def partition(self, cfg, run_dir, stages=('infer', 'eval')):
        """Dump one task config per stage, model and dataset; return their dicts by stage."""
        tasks = {stage: [] for stage in stages}
        for model in cfg['models']:
            for dataset in cfg['datasets']:
                for stage in stages:
                    task = {
                        'stage': stage,
                        'work_dir': str(run_dir.work_dir),
                        'timestamp': run_dir.timestamp,
                        'model_abbr': model_abbr(model),
                        'dataset_abbr': dataset_abbr(dataset),
                        'model': to_plain(dict(model)),
                        'dataset': to_plain(dict(dataset)),
                    }
                    path = run_dir.task_config_path(stage, task['model_abbr'], task['dataset_abbr'])
                    path.parent.mkdir(parents=True, exist_ok=True)
                    dump_config(task, path)
                    task['config_path'] = str(path)
                    tasks[stage].append(task)
        return tasks
