"""LocalRunner's launch loop under a storm of SIGCHLD: it must never hang.

The loop wakes when a task ends (SIGCHLD). A handler that took a lock the loop itself holds
(threading.Event.set inside Event.wait) deadlocked run.py after every task had ended (seen in
a tool_use run whose tasks ended close together: run.py waited for ever on the lock its own
handler held). That nesting is rare and cannot be forced from outside; this check holds the
loop to finishing, with every task's status, while signals keep arriving. The runner must run
in a main thread, so the check runs in a process of its own.
"""
import json
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


PROGRESS = textwrap.dedent('''
    import json, sys, time
    path, parts_done, code = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    time.sleep(1.0)                   # the loop sees it running, with its datasets at 0/6
    parts = {'val': {'done': parts_done, 'total': 6}, 'val_bg': {'done': parts_done, 'total': 6}}
    json.dump({'done': 2 * parts_done, 'total': 12, 'parts': parts}, open(path, 'w'))
    sys.exit(code)
''')


def test_a_task_s_dataset_lines_end_as_the_task_left_them(tmp_path):
    """An inference task whose datasets the loop last saw at 0/6 ends with them at 6/6: the one
    that wrote so as it ended (done), and the one whose outputs were complete though its progress
    file, left by a run cut short, says 0/6 (skipped)."""
    import io
    from rich.console import Console
    from opencompass_scicode.runners import LocalRunner
    from opencompass_scicode.tasks.contract import TaskSpec
    specs = []
    for name, parts_done, code in (('done', 6, 0), ('skipped', 0, 4)):
        progress = tmp_path / f'{name}.json'
        parts = {'val': {'done': 0, 'total': 6}, 'val_bg': {'done': 0, 'total': 6}}
        progress.write_text(json.dumps({'done': 0, 'total': 12, 'parts': parts}))
        specs.append(TaskSpec(name=name, stage='infer', config_path='-', log_path=str(tmp_path / f'{name}.log'),
                              progress_path=str(progress),
                              command=[sys.executable, '-c', PROGRESS, str(progress), str(parts_done), str(code)]))
    runner = LocalRunner(max_num_workers=2, warm_start=False)
    shown = io.StringIO()
    runner.console = Console(file=shown, width=150)
    statuses = runner.launch(specs, title='infer')
    assert [s.state for s in statuses] == ['done', 'skipped']
    lines = [line for line in shown.getvalue().splitlines() if line.strip().startswith('val')]
    assert len(lines) == 4 and all('6/6' in line for line in lines), shown.getvalue()
