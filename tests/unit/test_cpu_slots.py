"""The machine's CPU slots: steps of every pool on one machine never outnumber its CPUs, and a
holder that dies (even by SIGKILL) frees its slot."""
import os
import re
import signal
import subprocess
import sys
import threading
import time

from helpers import gold_predictions, tiny_dataset
from opencompass_scicode.evaluation import SciCodeEvaluator
from opencompass_scicode.evaluation.regenerate import ensure_targets
from opencompass_scicode.pool import StepPool
from opencompass_scicode.pool.cpuslots import CpuSlots

HOLDER = '''
import sys, time
from opencompass_scicode.pool.cpuslots import CpuSlots
with CpuSlots(1, sys.argv[1]).hold():
    print('holding', flush=True)
    time.sleep(600)
'''


def _hold_in_thread(slots):
    got = threading.Event()

    def take():
        with slots.hold():
            got.set()
    threading.Thread(target=take, daemon=True).start()
    return got


def test_a_slot_held_by_another_process_waits_until_it_dies(tmp_path):
    holder = subprocess.Popen([sys.executable, '-c', HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == 'holding'
        got = _hold_in_thread(CpuSlots(1, str(tmp_path)))
        assert not got.wait(0.5), 'took a slot another process holds'
        os.kill(holder.pid, signal.SIGKILL)
        assert got.wait(5), 'the slot of a killed holder was not freed'
    finally:
        holder.kill()
        holder.wait()


def test_as_many_holders_as_slots_at_once_and_no_more(tmp_path):
    slots = CpuSlots(2, str(tmp_path))
    with slots.hold(), slots.hold():          # two slots: both at once, no wait
        third = _hold_in_thread(slots)
        assert not third.wait(0.3)
    assert third.wait(5)


SLEEP = 'import time as _t\nprint("start", _t.time(), flush=True)\n_t.sleep(1)\nprint("end", _t.time(), flush=True)\n'


def _intervals(tiny_data, slot_count, slot_dir):
    ds = tiny_dataset(tiny_data)
    targets = ensure_targets(ds)
    evaluator = SciCodeEvaluator(timeout=60, max_workers=2)
    preds = gold_predictions(ds)
    for record in preds.values():
        record['code'] = SLEEP + record['code']
    jobs, _ = evaluator.jobs(ds, preds, targets)
    got = []
    scheduler = StepPool(evaluator.make_executor, cpus=CpuSlots(slot_count, str(slot_dir)))
    scheduler.submit(evaluator.submissions(jobs, targets.path, scheduler.durations, got.append))
    scheduler.close()
    assert {r.status for r in got} == {'pass'}
    spans = []
    for record in got:
        marks = dict(re.findall(r'^(start|end) ([0-9.]+)$', record.stdout, re.MULTILINE))
        spans.append((float(marks['start']), float(marks['end'])))
    return sorted(spans)


def _overlap(spans):
    return any(b[0] < a[1] for a, b in zip(spans, spans[1:]))


def test_two_workers_run_one_step_at_a_time_on_one_slot(tiny_data, tmp_path):
    assert not _overlap(_intervals(tiny_data, 1, tmp_path / 'one'))
    # the same pool with a slot per worker: its steps do run side by side
    assert _overlap(_intervals(tiny_data, 2, tmp_path / 'two'))
