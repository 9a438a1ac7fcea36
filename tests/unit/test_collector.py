"""The summary holds the cycle collector off while it builds what it keeps (utils/collector.py)."""
import gc

import pytest

from opencompass_scicode.utils.collector import collector_paused


def test_the_collector_is_off_inside_and_as_it_was_after():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        with collector_paused():
            raise RuntimeError('a summary that fails')
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()           # one that was off stays off
    finally:
        gc.enable()


def test_the_summary_runs_with_the_collector_off(monkeypatch, tmp_path):
    from opencompass_scicode.summarizers import scicode
    seen = []
    monkeypatch.setattr(scicode.SciCodeSummarizer, '_summarize',
                        lambda self, *args: seen.append(gc.isenabled()) or {'rows': []})
    assert scicode.SciCodeSummarizer(plot=False, report=False).summarize({}, tmp_path) == {'rows': []}
    assert seen == [False] and gc.isenabled()
