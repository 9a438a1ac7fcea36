import pytest

from opencompass_scicode.evaluation.capture import CaptureError, capture_test


def test_allclose_against_target():
    src, n = capture_test('x = 2\nassert np.allclose(f(x), target)')
    assert n == 1 and src.endswith('__record_target__(f(x))')


def test_indexed_target_becomes_tuple():
    src, n = capture_test('assert np.allclose(g(1)[0], target[0]) and np.allclose(g(1)[1], target[1])')
    assert '__record_target__((g(1)[0], g(1)[1]))' in src


def test_equality_against_target():
    src, _ = capture_test('assert (a < 3) == target')
    assert '__record_target__(a < 3)' in src


def test_asserts_without_target_are_kept_and_record_nothing():
    src, n = capture_test('def t():\n    assert f(1) == 2\nt()')
    assert n == 0 and 'assert f(1) == 2' in src


@pytest.mark.parametrize('bad', [
    'y = target + 1\nassert y',                          # target outside an assert
    'assert np.allclose(f(target), 1)',                   # target is not compared
    'assert np.allclose(a, target)\nassert np.allclose(b, target)',   # two asserts
    'assert np.allclose(a, target[1])',                   # indices must start at 0
])
def test_unsupported_shapes_are_refused(bad):
    with pytest.raises(CaptureError):
        capture_test(bad)
