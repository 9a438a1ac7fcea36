"""The order in which workers run steps (pool/planner.py) and the import costs it uses."""
from opencompass_scicode.pool.planner import Planner
from opencompass_scicode.pool.timings import ImportCosts, StepDurations

BASE = {'numpy', 'math'}


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def costs(**known):
    imports = ImportCosts()
    imports.known = {m.replace('_', '.'): v for m, v in known.items()}
    return imports


def planner(expected, modules, imports, workers=2, clock=None):
    loaded = [set(BASE) for _ in range(workers)]
    return Planner(expected, modules, workers, imports, loaded, clock or Clock())


def test_a_heavy_import_starts_first_and_its_steps_stay_with_the_worker_doing_it():
    clock = Clock()
    imports = costs(scipy_integrate={'s': 0.6, 'brings': ['scipy.special']})
    modules = {'44.1': ('scipy.integrate',), '44.2': ('scipy.integrate',), '10.1': ('scipy.special',)}
    cheap = [f'70.{i}' for i in range(1, 9)]
    modules.update({sid: ('numpy',) for sid in cheap})
    p = planner({sid: 0.02 for sid in modules}, modules, imports, clock=clock)
    first = p.order(0)[0]
    assert first in ('44.1', '44.2')
    p.take(0, first)
    # worker 1 runs the numpy-only steps first: the other scipy.integrate step and the
    # scipy.special step (special comes with integrate) are cheaper on worker 0
    for sid in cheap:
        assert p.order(1)[0] in cheap
        p.take(1, p.order(1)[0])
        clock.now += 0.02
        p.finished(1)
    # then it does not import scipy.integrate a second time (0.62 s here, 0.5 s there), but
    # scipy.special alone (0.27 s here) is sooner than waiting for worker 0
    other = ({'44.1', '44.2'} - {first}).pop()
    assert p.order(1) == ['10.1']
    assert set(p.order(0)) == {other, '10.1'}


def test_without_any_knowledge_the_step_with_imports_goes_first():
    modules = {'a': ('numpy',), 'b': ('sympy',), 'c': ('numpy',)}
    p = planner({'a': 1.0, 'b': 1.0, 'c': 1.0}, modules, ImportCosts())
    assert p.order(0)[0] == 'b'         # sympy costs ImportCosts.DEFAULT, numpy is loaded


def test_a_step_is_taken_from_a_busy_worker_only_when_that_is_sooner():
    clock = Clock()
    imports = costs(scipy_special={'s': 0.2, 'brings': []})
    modules = {'run': ('scipy.special',), 'x': ('scipy.special',)}
    p = planner({'run': 0.5, 'x': 0.01}, modules, imports, clock=clock)
    p.take(0, 'run')                   # worker 0 imports scipy.special and runs a 0.5 s step
    # worker 1 would need 0.21 s; worker 0 is free in 0.7 s: taking it is sooner
    assert p.order(1) == ['x']
    p2 = planner({'run': 0.05, 'x': 0.01}, modules, imports, clock=Clock())
    p2.take(0, 'run')                  # worker 0 is done in 0.25 s: 0.26 there, 0.21 here ...
    assert p2.order(1) == ['x']
    p3 = planner({'run': 0.0, 'x': 0.01}, modules, costs(scipy_special={'s': 0.5, 'brings': []}),
                 clock=Clock())
    p3.take(0, 'run')                  # ... but not when importing here is no sooner than waiting
    assert p3.order(1) == []


def test_a_worker_past_its_estimate_is_expected_to_take_as_long_again():
    clock = Clock()
    imports = costs(scipy_special={'s': 0.5, 'brings': []})
    modules = {'stuck': ('scipy.special',), 'x': ('scipy.special',)}
    p = planner({'stuck': 0.0, 'x': 0.01}, modules, imports, clock=clock)
    p.take(0, 'stuck')                 # expected: 0.5 s of import
    assert p.order(1) == []            # 0.51 s there, 0.51 s here: no sooner
    clock.now = 0.3
    assert p.order(1) == []            # 0.2 s left there: wait
    clock.now = 0.9
    assert p.order(1) == []            # a little past its estimate: still wait
    clock.now = 5.0                    # far past its estimate: import here instead of waiting
    assert p.order(1) == ['x']


def test_plain_executor_longest_first():
    p = Planner({'a': 0.1, 'b': 3.0, 'c': 1.0}, {'a': (), 'b': (), 'c': ()}, 2, ImportCosts(), None)
    assert p.order(0) == ['b', 'c', 'a']
    p.take(0, 'b')
    assert p.order(1) == ['c', 'a']
    p.drop('c')
    assert p.pending == ['a']


def test_import_costs_defaults_merge_and_persistence(tmp_path):
    imports = ImportCosts()
    assert imports.seconds('json') == 0.0 and imports.seconds('os.path') == 0.0
    assert imports.seconds('scipy.linalg') == ImportCosts.DEFAULT
    durations = StepDurations(tmp_path / 'cache' / 'step_durations.json')
    path = tmp_path / 'cache' / 'step_durations.json'
    durations.save([('1.1', 'key', 0.5)], {'scipy.integrate': (0.6, ['scipy.special'], True)})
    again = StepDurations(path)
    assert again.expected('1.1', 'key') == 0.5
    assert again.imports.seconds('scipy.integrate') == 0.6
    assert again.imports.closure({'scipy.integrate'}) == {'scipy.integrate', 'scipy.special'}
    # cheaper in a worker that had loaded some of its parts already: not what it costs alone
    again.save({}, {'scipy.integrate': (0.01, [], False)})
    assert StepDurations(path).imports.seconds('scipy.integrate') == 0.6
    again.save({}, {'scipy.integrate': (0.9, [], False)})         # but a lower bound
    assert StepDurations(path).imports.seconds('scipy.integrate') == 0.9
    again.save({}, {'scipy.integrate': (0.5, [], True)})          # a clean measurement replaces it
    assert StepDurations(path).imports.seconds('scipy.integrate') == 0.5
    assert StepDurations(path).imports.closure({'scipy.integrate'}) == {'scipy.integrate', 'scipy.special'}


def test_a_worker_is_copied_rather_than_importing_again():
    imports = costs(scipy_integrate={'s': 0.6, 'brings': []})
    steps = [f'44.{i}' for i in range(1, 11)]
    modules = {sid: ('scipy.integrate',) for sid in steps}
    modules['long'] = ('scipy.integrate',)
    loaded = [BASE | {'scipy.integrate'}, set(BASE)]
    expected = dict({sid: 0.02 for sid in steps}, long=5.0)
    p = Planner(dict(expected), dict(modules), 2, imports, [set(s) for s in loaded], Clock(), copy_s=0.02)
    p.drop('long')
    p.take(0, '44.1')
    # worker 0's queue (nine steps) outlasts waiting for its current step and copying it
    assert p.order(1)[0] in steps
    assert p.take(1, p.order(1)[0]) == 0
    # busy with a long step: importing is sooner than waiting to copy it
    p = Planner(dict(expected), dict(modules), 2, imports, [set(s) for s in loaded], Clock(), copy_s=0.02)
    p.take(0, 'long')
    assert p.order(1)[0] in steps
    assert p.take(1, p.order(1)[0]) is None
    # an executor that cannot copy: importing (0.6 s) is not worth it for 0.2 s of queue
    p = Planner(dict(expected), dict(modules), 2, imports, [set(s) for s in loaded], Clock())
    p.drop('long')
    p.take(0, '44.1')
    assert p.order(1) == []
