"""LocalRunner's launch loop under a storm of SIGCHLD: it must never hang.

The loop wakes when a task ends (SIGCHLD). A handler that took a lock the loop itself holds
(threading.Event.set inside Event.wait) deadlocked run.py after every task had ended (seen in
a tool_use run whose tasks ended close together: run.py waited for ever on the lock its own
handler held). That nesting is rare and cannot be forced from outside; this check holds the
loop to finishing, with every task's status, while signals keep arriving. The runner must run
in a main thread, so the check runs in a process of its own.
"""
import subprocess
import sys
import textwrap

from helpers import ROOT

SCRIPT = textwrap.dedent('''
    import os, signal, sys, threading, time
    sys.path.insert(0, sys.argv[1])
    from opencompass_scicode.runners import LocalRunner
    from opencompass_scicode.tasks.contract import TaskSpec

    tmp = sys.argv[2]
    specs = [TaskSpec(name=f'task{i}', stage='infer', command=[sys.executable, '-c', 'pass'],
                      config_path='-', log_path=f'{tmp}/task{i}.log', progress_path=f'{tmp}/task{i}.json')
             for i in range(60)]
    runner = LocalRunner(max_num_workers=8)
    runner.poll_interval = 5.0        # only a signal wakes the loop in time
    stop = threading.Event()

    def storm():                      # SIGCHLD at any moment, also while the loop holds its locks
        while not stop.is_set():
            os.kill(os.getpid(), signal.SIGCHLD)

    for _ in range(2):
        threading.Thread(target=storm, daemon=True).start()
    statuses = runner.launch(specs)
    stop.set()
    print(sorted({s.state for s in statuses}), len(statuses))
''')


def test_the_launch_loop_survives_a_storm_of_child_signals(tmp_path):
    proc = subprocess.run([sys.executable, '-c', SCRIPT, str(ROOT), str(tmp_path)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["['done']", '60']
