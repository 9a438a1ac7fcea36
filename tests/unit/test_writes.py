"""Where a run writes its files (utils/writes.py, utils/runlock.py): whole files are synced,
then renamed, then their folder synced; the test hook refuses the N-th write as a full disk
would; a refused run.py names the holder of the run's lock as the kernel knows it."""
import json
import os
import stat
import subprocess
import sys

import pytest

from opencompass_scicode.errors import NoSpaceError
from opencompass_scicode.utils import writes
from opencompass_scicode.utils.runlock import RunDirBusy, RunLock
from opencompass_scicode.utils.writes import FAIL_ENV, append_synced, write_json_atomic, write_whole


def test_a_whole_file_is_synced_then_renamed_then_its_folder_synced(tmp_path, monkeypatch):
    synced = []
    real = os.fsync

    def fsync(fd):
        mode = os.fstat(fd).st_mode
        synced.append('folder' if stat.S_ISDIR(mode) else 'file')
        real(fd)
    monkeypatch.setattr(writes.os, 'fsync', fsync)
    path = tmp_path / 'status.json'
    write_json_atomic(path, {'a': 1})
    assert synced == ['file', 'folder'] and json.loads(path.read_text()) == {'a': 1}
    synced.clear()
    write_json_atomic(path, {'a': 2}, durable=False)           # progress files: a glance, not kept
    assert synced == [] and json.loads(path.read_text()) == {'a': 2}


def test_the_hook_refuses_the_nth_write_and_every_later_one_as_a_full_disk(tmp_path, monkeypatch):
    run, counter = tmp_path / 'run', tmp_path / 'counter'
    run.mkdir()
    monkeypatch.setenv(FAIL_ENV, f'3:{counter}:{run}')
    write_whole(run / 'a.txt', 'one')
    write_whole(tmp_path / 'outside.txt', 'not counted')        # not under the run
    append_synced(run / 'p.jsonl', '{}\n')
    with pytest.raises(NoSpaceError, match=f'no space left on device: {run / "b.json"}'):
        write_json_atomic(run / 'b.json', {})
    with pytest.raises(NoSpaceError):
        write_whole(run / 'a.txt', 'two')                      # full from then on
    assert (run / 'a.txt').read_text() == 'one'                # the old file, whole
    assert not [p for p in run.iterdir() if p.name.endswith('.tmp') or '.tmp.' in p.name]
    numbered = [line.split(' ', 2) for line in (tmp_path / 'counter.paths').read_text().splitlines()]
    assert [(n, path) for n, _, path in numbered] == [('1', str(run / 'a.txt')), ('2', str(run / 'p.jsonl')),
                                                      ('3', str(run / 'b.json'))]
    # counting one stage's writes only: the first results file is the one refused
    monkeypatch.setenv(FAIL_ENV, f'1:{tmp_path / "c2"}:{run}:/results/')
    write_whole(run / 'summary.txt', 'counted nowhere')
    with pytest.raises(NoSpaceError):
        write_whole(run / 'results' / 'val.json', '{}')
    monkeypatch.delenv(FAIL_ENV)
    write_whole(run / 'a.txt', 'room again')
    assert (run / 'a.txt').read_text() == 'room again'


HOLDER = '''
import fcntl, sys, time
fh = open(sys.argv[1], 'a')
fcntl.flock(fh, fcntl.LOCK_EX)
print('held', flush=True)
time.sleep(60)
'''


def test_a_refused_run_names_the_live_holder_not_the_pid_a_dead_one_left(tmp_path):
    """The holder writes its pid once it has the lock: a run.py refused in between read the pid
    of the holder before, long dead (here the file still names one that is not running)."""
    dead = subprocess.run([sys.executable, '-c', 'import os; print(os.getpid())'], capture_output=True,
                          text=True).stdout.strip()
    (tmp_path / '.lock').write_text(dead)
    holder = subprocess.Popen([sys.executable, '-c', HOLDER, str(tmp_path / '.lock')], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == 'held'
        with pytest.raises(RunDirBusy, match=rf'in use by another run.py \(pid {holder.pid}\)'):
            RunLock(tmp_path).acquire()
    finally:
        holder.kill()
        holder.wait()
    lock = RunLock(tmp_path).acquire()          # its holder gone, the lock is free
    assert (tmp_path / '.lock').read_text() == str(os.getpid())
    lock.release()
