"""What every partitioner shares: turning units of work into task files and their specs.

The task file holds the spec (tasks/contract.py) under `task` and the work
itself (model and dataset entries, types as import paths) beside it, as JSON:
a task process reads it without loading mmengine (about half a second each).
Secrets never reach it: literal API keys are moved into the environment the
run's processes inherit.

A partitioner only decides how a dataset's problems are split into shards
(`split`). One shard gives one task per model (inference) and per model and
dataset (evaluation), written straight to the final files. Several shards
give one task per shard, each writing a part file, and a merge task that
depends on them and writes the final file, the same as an unsharded run's.
"""
import os
import sys

from ..registry import build_dataset, type_attribute
from ..tasks.contract import TASK_PACKAGE, TaskSpec, task_code, task_file
from ..utils.plain import to_plain
from ..utils.pythonpath import with_package
from ..utils.secrets import move_secrets_to_env
from ..utils.workdir import write_json_atomic
from .costs import eval_costs, infer_costs
from .limits import asks_endpoint, check_endpoints, endpoint_sharing, task_limits

EARLY_EVALUATION = ('opencompass_scicode.evaluation.eager', 'opencompass_scicode.evaluation.evaluator')


class BasePartitioner:
    """`partition` returns the TaskSpecs of one stage and writes their task files (unless
    `dry_run`). Targets are prepared once per dataset that needs them, whatever the partitioner."""

    def split(self, costs: list[tuple], stage: str) -> list[list[str]]:
        """[[problem id, ...], ...]: the shards of one dataset, given [(problem id, cost)] in
        dataset order. `stage`: 'infer' or 'eval'."""
        raise NotImplementedError

    def partition(self, cfg, run_dir, stage, dry_run=False, **options) -> list[TaskSpec]:
        """The TaskSpecs of `stage` ('targets', 'infer' or 'eval') for the config `cfg`, in
        `run_dir` (a RunDir); their task files written unless `dry_run`.
        `options`: eager_eval, discard_stale, regenerate (abbrs), and datasets ({abbr: dataset}
        built and read by planning, used as they are: a dry run's may read a copy of the data
        files; the others are built from the config)."""
        built = options.get('datasets') or {}
        if stage == 'targets':
            return self.targets_tasks(cfg, run_dir, dry_run, options.get('regenerate', ()))
        if stage == 'infer':
            return self.infer_tasks(cfg, run_dir, dry_run, eager_eval=options.get('eager_eval', False),
                                    discard_stale=options.get('discard_stale', False), built=built)
        if stage == 'eval':
            return self.eval_tasks(cfg, run_dir, dry_run, built=built)
        raise ValueError(f'unknown stage {stage!r}')

    def targets_tasks(self, cfg, run_dir, dry_run, regenerate) -> list[TaskSpec]:
        """The targets stage: one task per dataset named in `regenerate` (abbrs)."""
        return [self.task(run_dir, 'targets', [ds['abbr']], {'dataset': ds}, labels={'dataset': ds['abbr']},
                          dry_run=dry_run)
                for ds in cfg['datasets'] if ds['abbr'] in regenerate]

    # ------------------------------------------------------------ shards
    def _shards(self, ds_cfgs, stage, built):
        """Shards of problem ids over these datasets: a problem in several of them (with and
        without background) is in the same shard of each, its costs added up."""
        costs = {}
        for ds_cfg in ds_cfgs:
            dataset = built.get(ds_cfg['abbr']) or build_dataset(ds_cfg)
            for pid, cost in (infer_costs(dataset) if stage == 'infer' else eval_costs(dataset)):
                costs[pid] = costs.get(pid, 0) + cost
        return [shard for shard in self.split(list(costs.items()), stage) if shard]

    def infer_tasks(self, cfg, run_dir, dry_run, eager_eval, discard_stale, built=None) -> list[TaskSpec]:
        """The inference stage: per model, one task over all datasets, or one per shard and a merge
        task after them; each keeps its share of the request limits. `built`: {abbr: dataset}
        already built by planning."""
        datasets = cfg['datasets']
        built = built or {}
        # The same shards for every model: they depend on the datasets only.
        shard_ids = self._shards(datasets, 'infer', built)
        names = [shard_name(k, len(shard_ids)) for k in range(len(shard_ids))]
        problems = {ds['abbr']: {p.problem_id for p in (built.get(ds['abbr']) or build_dataset(ds)).problems}
                    for ds in datasets}
        shard_parts = [[(ds, [pid for pid in ids if pid in problems[ds['abbr']]]) for ds in datasets]
                       for ids in shard_ids]
        # An endpoint's limits (the config's `endpoints`) are shared out among every task asking it.
        limits = check_endpoints(cfg.get('endpoints'))
        sharing = endpoint_sharing(cfg['models'], limits, len(shard_ids))
        specs = []
        for model in cfg['models']:
            m = model['abbr']
            finals = [run_dir.predictions_path(m, ds['abbr']) for ds in datasets]
            url = asks_endpoint(model)
            entry = self.model_entry(model)
            if len(shard_ids) > 1 or url in limits:
                entry = task_limits(entry, len(shard_ids), limits.get(url), sharing.get(url, 1))
            resources = _model_resources(model)
            # the API SDK (the model type's own list), and the scoring code early evaluation runs
            sdk = list(type_attribute(model.get('type', ''), 'warm_imports', ()))
            sdk += list(EARLY_EVALUATION) if eager_eval else []
            common = {'eager_eval': eager_eval, 'discard_stale': discard_stale}
            labels = {'model': m, 'datasets': [ds['abbr'] for ds in datasets]}
            if len(shard_ids) == 1:
                specs.append(self.task(run_dir, 'infer', [m], dict(common, model=entry, datasets=datasets),
                                       outputs=finals, labels=labels, resources=resources, preload=sdk,
                                       dry_run=dry_run))
                continue
            shards = []
            for shard, parts in zip(names, shard_parts):
                parts = [(ds, ids) for ds, ids in parts if ids]
                shards.append(self.task(
                    run_dir, 'infer', [m, shard],
                    dict(common, model=entry, shard=shard,
                         datasets=[dict(ds, sample_ids=ids) for ds, ids in parts]),
                    outputs=[run_dir.part_path(run_dir.predictions_path(m, ds['abbr']), shard) for ds, _ in parts],
                    labels=dict(labels, datasets=[ds['abbr'] for ds, _ in parts], shard=shard,
                                problems={ds['abbr']: ids for ds, ids in parts}),
                    resources=resources, preload=sdk, dry_run=dry_run))
            specs += shards
            specs.append(self.task(run_dir, 'infer', [m], {'action': 'merge', 'model_abbr': m, 'datasets': datasets,
                                                           'shards': names},
                                   outputs=finals, depends_on=[s.name for s in shards],
                                   labels=dict(labels, shard='merge'), resources={'shares_cpu': True},
                                   dry_run=dry_run))
        return specs

    def eval_tasks(self, cfg, run_dir, dry_run, built=None) -> list[TaskSpec]:
        """The evaluation stage: per model and dataset, one task after the model's inference, or
        one per shard and a merge task after them. `built`: {abbr: dataset} already built."""
        # A dataset's shards are the same for every model.
        shards_of = {ds['abbr']: self._shards([ds], 'eval', built or {}) for ds in cfg['datasets']}
        specs = []
        for model in cfg['models']:
            m = model['abbr']
            for ds in cfg['datasets']:
                d = ds['abbr']
                final = run_dir.results_path(m, d)
                after = [run_dir.task_name('infer', m)]
                labels = {'model': m, 'dataset': d}
                resources = _eval_resources(ds)
                shards = shards_of[d]
                if len(shards) == 1:
                    specs.append(self.task(run_dir, 'eval', [m, d], {'model_abbr': m, 'dataset': ds},
                                           outputs=[final], depends_on=after, labels=labels,
                                           resources=resources, dry_run=dry_run))
                    continue
                names = [shard_name(k, len(shards)) for k in range(len(shards))]
                parts = [self.task(run_dir, 'eval', [m, d, shard],
                                   {'model_abbr': m, 'dataset': dict(ds, sample_ids=ids), 'shard': shard},
                                   outputs=[run_dir.part_path(final, shard)], depends_on=after,
                                   labels=dict(labels, shard=shard, problems={d: ids}),
                                   resources=resources, dry_run=dry_run)
                         for shard, ids in zip(names, shards)]
                specs += parts
                specs.append(self.task(run_dir, 'eval', [m, d], {'model_abbr': m, 'dataset': ds, 'merge_shards': names},
                                       outputs=[final], depends_on=[s.name for s in parts],
                                       labels=dict(labels, shard='merge'), resources=resources, dry_run=dry_run))
        return specs

    # ------------------------------------------------------------ task files
    @staticmethod
    def model_entry(model_cfg: dict) -> dict:
        """A `models` entry as a task file holds it: plain values, without run_cfg, and literal
        secrets moved into the environment."""
        entry = {k: v for k, v in dict(model_cfg).items() if k != 'run_cfg'}
        return move_secrets_to_env(to_plain(entry), model_cfg['abbr'])

    @staticmethod
    def task(run_dir, stage, parts, work, outputs=(), depends_on=(), labels=None, resources=None,
             preload=(), dry_run=False) -> TaskSpec:
        """The spec of one task of `stage`, named from `parts`, doing `work` (its task file's
        content beside the spec, written unless `dry_run`).
        preload: modules beside the task's own code that the task imports (an API SDK)."""
        name = run_dir.task_name(stage, *parts)
        code, _ = task_code(stage, work.get('action'))
        config_path = run_dir.task_config_path(name)
        log_path = run_dir.log_path(name)
        spec = TaskSpec(
            name=name, stage=stage,
            command=[sys.executable, '-m', TASK_PACKAGE, str(config_path)],
            config_path=str(config_path), log_path=str(log_path),
            progress_path=str(log_path.with_suffix('.progress.json')),
            outputs=[str(p) for p in outputs], depends_on=list(depends_on), labels=dict(labels or {}),
            env={'PYTHONPATH': with_package(os.environ.get('PYTHONPATH'))},
            resources={k: v for k, v in (resources or {}).items() if v},
            preload=[f'{TASK_PACKAGE}.__main__', code, *preload])
        if not dry_run:
            record = task_file(dict(task=spec.to_dict(), work_dir=str(run_dir.work_dir),
                                    timestamp=run_dir.timestamp, **to_plain(work)), config_path)
            write_json_atomic(config_path, record.model_dump(mode='json'))
        return spec


def shard_name(index: int, count: int) -> str:
    """The name of shard `index` of `count` in task and file names: 'part0of4'."""
    return f'part{index}of{count}'


def spread(costs: list[tuple], count: int) -> list[list[str]]:
    """`count` shards of the problem ids in `costs` ([(problem id, cost)], dataset order).
    Longest first, each problem to the shard with the least so far; each shard keeps the
    dataset's order, so a problem's steps stay together and in order."""
    order = {pid: i for i, (pid, _) in enumerate(costs)}
    loads = [0.0] * count
    shards = [[] for _ in range(count)]
    for pid, cost in sorted(costs, key=lambda pc: (-pc[1], order[pc[0]])):
        k = min(range(count), key=lambda i: (loads[i], i))
        loads[k] += cost
        shards[k].append(pid)
    return [sorted(shard, key=order.get) for shard in shards]


def _model_resources(model_cfg):
    run_cfg = model_cfg.get('run_cfg') or {}
    gpus = run_cfg.get('num_gpus')
    # Without a GPU or a server of its own, an inference task spends its time waiting for
    # answers: a cluster may let such tasks share CPUs (runners/slurm.py). That of an API model
    # takes no slot of the runner either: all of them run at once (tasks/contract.py).
    shares = not gpus and not model_cfg.get('server')
    return {'gpus': gpus, 'procs': run_cfg.get('num_procs'), 'shares_cpu': shares,
            'api_only': shares and type_attribute(model_cfg.get('type', ''), 'api_only', False)}


def _eval_resources(ds_cfg):
    evaluator = (ds_cfg.get('eval_cfg') or {}).get('evaluator') or {}
    return {'cpus': evaluator.get('max_workers')}
