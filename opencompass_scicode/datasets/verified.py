"""SciCode-Verified's corrected test problems: which file, where it is published, what it hashes to.

Facts, not code: SciCode-Verified (arXiv 2608.04975) publishes its corrected test problems in
the record format of the official JSONL files: `data/problems_test.jsonl` of the Hugging Face
dataset shhu2001/SciCode-Verified at revision `eea11a86...` (the revision whose
test_data_cleaned.h5 targets/sources.py pins), the same bytes as
`scicode_verified/problems_test.jsonl` of its GitHub repository at commit `ddab4a92...`. Harnesses
that fetch that revision pin the sha256 below (and the MD5 `5c604d8d...` the release's manifest
binds to the corrected h5, MD5 `2b41a7df...`). The file holds 64 problems (the official test
problem 2 is dropped as under-specified), 290 steps, 287 of them scored: the official prefilled
steps 13.6, 62.1 and 76.3 stay where they were, without tests, and keep the official code.

The corrections change prompts and tests as well as targets, so a `targets='verified'` dataset
reads its test problems from this file: the corrected tests are scored against the corrected
values, as SciCode-Verified's own harness scores them. SciCode-Verified republished no
validation problems: the validation split keeps the official ones.
"""
HUB_REVISION = 'eea11a866be6860725258702b39ef8651ed26abd'
GIT_REVISION = 'ddab4a92f8d80a7113ab946628e994b52354d838'
HUB_FILES = f'https://huggingface.co/datasets/shhu2001/SciCode-Verified/resolve/{HUB_REVISION}'

PROBLEMS_URLS = (
    f'{HUB_FILES}/data/problems_test.jsonl',
    f'https://raw.githubusercontent.com/flyingwagner/scicode-verified/{GIT_REVISION}/'
    f'scicode_verified/problems_test.jsonl',
)
PROBLEMS_SHA256 = '427771cb8bceb5058e8b510af0ee2c8210827a1491e0cdf8e6db56d4ed1440ba'
# Saved in the data directory under a name of its own: the release calls it problems_test.jsonl,
# a name that says nothing of the corrections.
PROBLEMS_NAME = 'problems_test_verified.jsonl'
# The official file whose problems it replaces (the test split, and the test part of `all`).
REPLACES = 'problems_all.jsonl'


def manual_steps(data_dir) -> str:
    """How to put the corrected problems in place by hand."""
    return (f'download data/problems_test.jsonl of the Hugging Face dataset shhu2001/SciCode-Verified at '
            f'revision {HUB_REVISION[:8]} ({PROBLEMS_URLS[0]}) and save it as {data_dir}/{PROBLEMS_NAME}; on '
            f'a machine with access, python -m opencompass_scicode.targets.fetch --source verified '
            f'--data-dir {data_dir} fetches and checks it with the corrected targets.')
