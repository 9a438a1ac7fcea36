"""LocalRunner forks tasks from a warm launcher (runners/warm.py): a task must not be able to
tell, except that it starts sooner. Its environment, log, session, exit code, the way it is
stopped and the way it stops when run.py dies are those of a task started by a new interpreter.
"""
import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from helpers import ROOT, alive, wait_until

# A task module: records where it ran, what it saw, and that its code was imported.
TASK = textwrap.dedent('''
    import json, os, sys, time
    from pathlib import Path
    with open(os.environ['IMPORTS_LOG'], 'a') as fh:
        fh.write(f'{os.getpid()}\\n')

    def main(args):
        out, how = args
        from opencompass_scicode.utils.lifeline import stop_with_parent, stop_on_sigterm
        stop_with_parent(poll_s=0.1)
        stop_on_sigterm()
        Path(out).write_text(json.dumps({
            'pid': os.getpid(), 'ppid': os.getppid(), 'sid': os.getsid(0), 'pgrp': os.getpgrp(),
            'env': os.environ.get('TASK_SETTING'), 'parent_env': os.environ.get('OPENCOMPASS_SCICODE_PARENT_PID'),
            'run_env': os.environ.get('OPENCOMPASS_SCICODE_RUN_PID'),
            'argv': sys.argv, 'stdin': sys.stdin.read(), 'comm': Path('/proc/self/comm').read_text().strip(),
            'cmdline': Path('/proc/self/cmdline').read_bytes().decode()}))
        print(f'task output {args[0]}', flush=True)
        if how == 'fail':
            return 3
        if how == 'crash':
            raise RuntimeError('boom')
        if how == 'kill':
            os.kill(os.getpid(), 9)
        if how == 'wait':
            try:
                time.sleep(120)
            except KeyboardInterrupt:
                Path(out + '.interrupted').write_text('yes')
                return 130
        return 0

    if __name__ == '__main__':
        sys.exit(main(sys.argv[1:]))
''')

SCRIPT = textwrap.dedent('''
    import json, os, sys
    sys.path.insert(0, sys.argv[1])
    from opencompass_scicode.runners import LocalRunner
    from opencompass_scicode.tasks.contract import TaskSpec

    tmp, warm, hows = sys.argv[2], sys.argv[3] == 'warm', sys.argv[4].split(',')
    specs = [TaskSpec(name=f'task{i}', stage='eval', command=[sys.executable, '-m', 'warmtask', f'{tmp}/out{i}', how],
                      config_path='-', log_path=f'{tmp}/logs/task{i}.out', progress_path=f'{tmp}/task{i}.json',
                      env={'PYTHONPATH': tmp, 'TASK_SETTING': f'setting {i}'}, preload=['warmtask.__main__'])
             for i, how in enumerate(hows)]
    statuses = LocalRunner(max_num_workers=2, warm_start=warm).launch(specs)
    print(json.dumps({'run_py': os.getpid(), 'codes': [s.returncode for s in statuses],
                      'states': [s.state for s in statuses]}))
''')


def write_task(tmp_path):
    (tmp_path / 'warmtask').mkdir()
    (tmp_path / 'warmtask' / '__init__.py').write_text('')
    (tmp_path / 'warmtask' / '__main__.py').write_text(TASK)
    return tmp_path / 'imports.log'


def launch(tmp_path, hows, warm=True):
    imports = write_task(tmp_path)
    env = dict(os.environ, IMPORTS_LOG=str(imports))
    proc = subprocess.run([sys.executable, '-c', SCRIPT, str(ROOT), str(tmp_path), 'warm' if warm else 'cold',
                           ','.join(hows)], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = [json.loads((tmp_path / f'out{i}').read_text()) for i in range(len(hows))]
    return json.loads(proc.stdout.splitlines()[-1]), seen, imports.read_text().split()


@pytest.mark.parametrize('warm', [True, False], ids=['warm', 'cold'])
def test_a_task_sees_what_a_new_interpreter_would_show_it(tmp_path, warm):
    out, seen, imported = launch(tmp_path, ['ok', 'ok', 'ok'], warm)
    assert out['codes'] == [0, 0, 0] and out['states'] == ['done'] * 3
    for i, task in enumerate(seen):
        assert task['env'] == f'setting {i}'                        # its own environment
        assert task['sid'] == task['pid'] == task['pgrp']          # a session of its own
        assert task['parent_env'] == str(task['ppid'])             # the parent it watches is its parent
        assert task['run_env'] == str(out['run_py'])               # what serves the run watches run.py
        assert task['argv'][1:] == [str(tmp_path / f'out{i}'), 'ok']
        assert task['stdin'] == ''                                  # nothing to read
        assert (tmp_path / 'logs' / f'task{i}.out').read_text() == f'task output {tmp_path}/out{i}\n'
    if warm:
        # the code was imported once, by the launcher, which forked every task
        assert len(imported) == 1 and {t['ppid'] for t in seen} == {int(imported[0])}
        assert int(imported[0]) != out['run_py']
        # top names each by its task; ps shows the launcher's command line, naming the log folder
        assert [t['comm'] for t in seen] == ['task0', 'task1', 'task2']
        assert str(tmp_path / 'logs') in seen[0]['cmdline']
    else:
        assert sorted(imported) == sorted(str(t['pid']) for t in seen)
        assert {t['ppid'] for t in seen} == {out['run_py']}


def test_exit_codes_come_back_as_from_a_process_of_its_own(tmp_path):
    out, seen, _ = launch(tmp_path, ['ok', 'fail', 'crash', 'kill'])
    assert out['codes'] == [0, 3, 1, -signal.SIGKILL]
    assert out['states'][0] == 'done' and 'done' not in out['states'][1:]
    assert 'RuntimeError: boom' in (tmp_path / 'logs' / 'task2.out').read_text()


def test_a_task_started_otherwise_runs_as_before(tmp_path):
    """A command that is not `python -m MODULE` is started as a process of its own."""
    write_task(tmp_path)
    script = SCRIPT.replace("command=[sys.executable, '-m', 'warmtask', f'{tmp}/out{i}', how]",
                            "command=['/bin/sh', '-c', f'echo $PPID > {tmp}/out{i}']")
    proc = subprocess.run([sys.executable, '-c', script, str(ROOT), str(tmp_path), 'warm', 'ok'],
                          capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, IMPORTS_LOG=str(tmp_path / 'imports.log')))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out['codes'] == [0] and int((tmp_path / 'out0').read_text()) == out['run_py']


RUN_PY = textwrap.dedent('''
    import os, sys, time
    sys.path.insert(0, sys.argv[1])
    from opencompass_scicode.runners import LocalRunner
    from opencompass_scicode.tasks.contract import TaskSpec
    tmp = sys.argv[2]
    spec = TaskSpec(name='task0', stage='eval', command=[sys.executable, '-m', 'warmtask', f'{tmp}/out0', 'wait'],
                    config_path='-', log_path=f'{tmp}/logs/task0.out', progress_path=f'{tmp}/task0.json',
                    env={'PYTHONPATH': tmp}, preload=['warmtask.__main__'])
    try:
        statuses = LocalRunner(warm_start=True).launch([spec])
        print('ended', statuses[0].state, statuses[0].returncode, flush=True)
    except KeyboardInterrupt:
        print('interrupted', flush=True)
''')


@pytest.mark.parametrize('how', ['Ctrl-C to run.py', 'run.py killed outright', 'the launcher killed outright'])
def test_a_forked_task_stops_with_run_py_or_its_launcher(tmp_path, how):
    write_task(tmp_path)
    proc = subprocess.Popen([sys.executable, '-c', RUN_PY, str(ROOT), str(tmp_path)], stdout=subprocess.PIPE,
                            text=True, env=dict(os.environ, IMPORTS_LOG=str(tmp_path / 'imports.log')))
    out = tmp_path / 'out0'
    task = wait_until(lambda: out.exists() and json.loads(out.read_text()), 60, interval=0.05)
    assert task, 'the task never started'
    assert alive([task['pid']])
    if how.startswith('the launcher'):
        os.kill(task['ppid'], signal.SIGKILL)
    else:
        os.kill(proc.pid, signal.SIGINT if how.startswith('Ctrl-C') else signal.SIGKILL)
    stdout, _ = proc.communicate(timeout=30)
    # Ctrl-C: run.py stops it (SIGINT to its group); killed: the launcher sees its input close and
    # leaves, and the task sees its parent go
    assert wait_until(lambda: not alive([task['pid']]), 15, interval=0.05), 'the task outlived run.py'
    assert (tmp_path / 'out0.interrupted').read_text() == 'yes'      # as Ctrl-C: its own clean-up ran
    assert not alive([task['ppid']])                                # no launcher left either
    if how.startswith('Ctrl-C'):
        assert stdout.strip() == 'interrupted'
    if how.startswith('the launcher'):
        # run.py goes on: the task is reported failed (killed with its launcher), not waited for
        assert proc.returncode == 0 and stdout.strip() == f'ended failed {-signal.SIGKILL}'


def test_what_a_task_file_preloads_is_the_code_that_runs_it(tmp_path):
    """The partitioner's preload list and the task entry point read one table: a module renamed
    there is renamed for both (a wrong name would only lose the warm start, silently)."""
    from opencompass_scicode.partitioners.base import BasePartitioner
    from opencompass_scicode.tasks.__main__ import task_class
    from opencompass_scicode.utils.workdir import RunDir
    run_dir = RunDir(tmp_path, '20260101_000000').create()
    for stage, work in (('infer', {}), ('infer', {'action': 'merge'}), ('eval', {}), ('targets', {})):
        spec = BasePartitioner.task(run_dir, stage, ['x'], work, dry_run=True)
        cls = task_class(stage, work.get('action'))
        assert spec.preload[:2] == ['opencompass_scicode.tasks.__main__', cls.__module__], (stage, work)
    with pytest.raises(ValueError, match='unknown task stage'):
        task_class('nonsense')


# Two stages, as run.py runs them: each its own runner, the second's tasks preloading one more module.
STAGES = textwrap.dedent('''
    import contextlib, json, os, sys
    sys.path.insert(0, sys.argv[1])
    from opencompass_scicode.runners import LocalRunner
    from opencompass_scicode.runners.warm import shared_launchers
    from opencompass_scicode.tasks.contract import TaskSpec

    tmp, shared = sys.argv[2], sys.argv[3] == 'shared'

    def specs(stage, preload):
        return [TaskSpec(name=f'{stage}{i}', stage=stage, config_path='-',
                         command=[sys.executable, '-m', 'warmtask', f'{tmp}/out-{stage}{i}', 'ok'],
                         log_path=f'{tmp}/logs/{stage}/{i}.out', progress_path=f'{tmp}/{stage}{i}.json',
                         env={'PYTHONPATH': tmp}, preload=preload) for i in range(2)]

    codes = []
    with shared_launchers() if shared else contextlib.nullcontext():
        codes += [s.returncode for s in LocalRunner(max_num_workers=2).launch(specs('infer', ['warmtask.__main__']))]
        codes += [s.returncode for s in LocalRunner(max_num_workers=1).launch(
            specs('eval', ['warmtask.__main__', 'warmextra']))]
    print(json.dumps({'codes': codes}))
''')


@pytest.mark.parametrize('shared', [True, False], ids=['one-launcher-per-run', 'one-per-launch'])
def test_within_a_run_later_stages_fork_from_the_first_stages_launcher(tmp_path, shared):
    imports = write_task(tmp_path)
    (tmp_path / 'warmextra.py').write_text(
        'import os\nwith open(os.environ["IMPORTS_LOG"], "a") as fh:\n    fh.write(f"extra {os.getpid()}\\n")\n')
    env = dict(os.environ, IMPORTS_LOG=str(imports))
    proc = subprocess.run([sys.executable, '-c', STAGES, str(ROOT), str(tmp_path), 'shared' if shared else 'own'],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.splitlines()[-1])['codes'] == [0] * 4
    parents = {stage: {json.loads((tmp_path / f'out-{stage}{i}').read_text())['ppid'] for i in range(2)}
               for stage in ('infer', 'eval')}
    lines = imports.read_text().split('\n')
    extra = [line.split()[1] for line in lines if line.startswith('extra ')]
    # the second stage's addition was imported once, by the launcher that forked that stage
    assert extra == [str(p) for p in parents['eval']]
    if shared:
        # and that launcher forked both stages
        assert parents['infer'] == parents['eval'] and len(parents['infer']) == 1
    else:
        assert parents['infer'] != parents['eval']
    # and no launcher outlives the block (or its launch)
    assert not alive(parents['infer'] | parents['eval'])
