import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(scope='session')
def official_data():
    """The real SciCode files in data/scicode (fetched once if missing)."""
    from opencompass_scicode.datasets.files import prepare_data
    return prepare_data(ROOT / 'data' / 'scicode')


@pytest.fixture
def tiny_data(tmp_path):
    from helpers import make_data_dir, TINY_PROBLEMS
    return make_data_dir(tmp_path / 'data', TINY_PROBLEMS)
