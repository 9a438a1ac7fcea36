# The default job: runs offline, no API key. The built-in ReferenceModel answers
# with the gold code on the validation split, with and without background, so a
# sound harness reports 15/15 problems and 50/50 steps in both settings.
from mmengine.config import read_base

from opencompass_scicode.runners import LocalRunner

with read_base():
    from .datasets.scicode.scicode_validation import scicode_datasets
    from .models.reference import models
    from .summarizers.scicode_summary import summarizer

datasets = scicode_datasets
runner = dict(type=LocalRunner, max_num_workers=2)
work_dir = 'outputs/default'
