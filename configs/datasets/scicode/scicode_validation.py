# SciCode validation split (15 problems, 50 steps), without and with background: this package's
# own default dataset file (`--datasets scicode_validation`). Its name is none of OpenCompass's:
# `scicode_gen` and the other names OpenCompass ships mean OpenCompass's test-split configs.
from opencompass_scicode.datasets import SciCodeDataset
from opencompass_scicode.evaluation import SciCodeEvaluator

scicode_reader_cfg = dict(verify_sha256=True)

# mode: 'naive' = the official one-call-per-step generation; no token limit is sent (official).
scicode_infer_cfg = dict(mode='naive')

scicode_eval_cfg = dict(
    evaluator=dict(
        type=SciCodeEvaluator,
        timeout=1800,             # seconds per step program, as the official harness
        max_workers=None,         # parallel step programs; None = number of CPUs
        simps_shim=True,          # scipy.integrate.simps on SciPy >= 1.14 (problems 2, 28)
    ))

scicode_datasets = [
    dict(
        abbr=f'scicode_validation{suffix}',
        type=SciCodeDataset,
        protocol='official',      # how the numbers are made (docs/protocols.md); keys below override it
        path='data/scicode',
        split='validation',
        with_bg=with_bg,
        sample_ids=None,          # e.g. ['1', '10'] to run some problems only
        h5py_file=None,           # official test_data.h5; default: data/scicode/test_data.h5
        prefilled_mode='official',  # or 'full': the whole 13.6/62.1/76.3 files (prompts and tests)
        reader_cfg=scicode_reader_cfg,
        infer_cfg=scicode_infer_cfg,
        eval_cfg=scicode_eval_cfg,
    )
    for with_bg, suffix in ((False, ''), (True, '_with_background'))
]
