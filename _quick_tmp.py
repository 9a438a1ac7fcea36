from mmengine.config import read_base
_base_ = ['configs/eval_scicode.py']
with read_base():
    from .configs.datasets.scicode.scicode_gen import scicode_datasets
datasets = [dict(d, sample_ids=['1', '19', '29']) for d in scicode_datasets]
work_dir = '/tmp/slurmtry'
