import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

# Step timings of the made-up programs tests run must not mislead the planner on real runs
# of this checkout: keep them apart (run.py and its tasks inherit this).
if 'OPENCOMPASS_SCICODE_TIMINGS_DIR' not in os.environ:
    _timings = tempfile.mkdtemp(prefix='scicode-test-timings-')
    os.environ['OPENCOMPASS_SCICODE_TIMINGS_DIR'] = _timings
    atexit.register(shutil.rmtree, _timings, ignore_errors=True)


@pytest.fixture(scope='session')
def official_data():
    """The real SciCode files in data/scicode (fetched once if missing)."""
    from opencompass_scicode.datasets.files import prepare_data
    return prepare_data(ROOT / 'data' / 'scicode')


@pytest.fixture
def tiny_data(tmp_path):
    from helpers import make_data_dir, TINY_PROBLEMS
    return make_data_dir(tmp_path / 'data', TINY_PROBLEMS)
