"""Model servers started per task (`OpenAIChatModel(server=dict(command=[...'{port}'...]))`).

The servers are real processes: tests/serve_openai.py (openai_server.FakeOpenAI on
the port the task picks), `sleep`, or a Python that exits at once. "Gone" is
checked by pid in /proc; each check is first shown to see a live process.
"""
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest

from helpers import (DATA, KEY, ROOT, alive, api_config_file, only_run, predictions, processes_mentioning, results,
                     run_cli, start_cli, statuses, wait_until, wait_until_gone)
from opencompass_scicode.errors import ConfigError
from opencompass_scicode.models import OpenAIChatModel
from opencompass_scicode.models.server import ModelServer, ModelServerError
from opencompass_scicode.utils.fingerprint import fingerprint
from opencompass_scicode.utils.procs import read_proc

SERVE = [sys.executable, str(ROOT / 'tests' / 'serve_openai.py'), '--port', '{port}']
SAY_PID_AND_SLEEP = ['sh', '-c', 'echo "pid $$"; exec sleep 600', 'never-ready', '{port}']


def model(**kw):
    kw.setdefault('server', dict(command=SERVE))
    return OpenAIChatModel(path='test-model', key='sk-x', **kw)


def pids_in(log_text):
    """The pids a server wrote to its output (`server pid N`, `child pid N`, `pid N`)."""
    return [int(pid) for pid in re.findall(r'\bpid (\d+)', log_text)]


# ------------------------------------------------------------ the option, checked when the model is built
@pytest.mark.parametrize('server, says', [
    (['vllm', 'serve', 'm', '--port', '{port}'], 'must be a dict'),
    (dict(command=[]), 'non-empty list of strings'),
    (dict(command='vllm serve m --port {port}'), 'non-empty list of strings'),
    (dict(command=['vllm', 'serve', 8000]), 'non-empty list of strings'),
    (dict(command=['vllm', 'serve', 'm', '--port', '8000']), "has no '{port}'"),
    (dict(command=SERVE, ready_timeout=0), 'ready_timeout must be a positive number'),
    (dict(command=SERVE, ready_timeout=True), 'ready_timeout must be a positive number'),
    (dict(command=SERVE, ready_timeout='600'), 'ready_timeout must be a positive number'),
    (dict(command=SERVE, env={'CUDA_VISIBLE_DEVICES': 0}), 'env must be a dict of strings'),
    (dict(command=SERVE, env=['A=1']), 'env must be a dict of strings'),
    (dict(command=SERVE, ready_timout=60), "did you mean 'ready_timeout'"),
])
def test_a_wrong_server_option_is_refused_when_the_model_is_built(server, says):
    with pytest.raises(ConfigError) as caught:
        model(server=server)
    assert caught.value.key == 'server' and says in str(caught.value) and caught.value.fix


def test_server_and_base_url_together_are_refused_and_a_right_server_is_kept_with_defaults():
    with pytest.raises(ConfigError, match='server and base_url') as caught:
        model(base_url='http://localhost:8000/v1')
    assert caught.value.key == 'server'
    built = model(server=dict(command=('llama-server', '-m', 'x.gguf', '--port={port}')))
    assert built.server == {'command': ['llama-server', '-m', 'x.gguf', '--port={port}'],
                            'ready_timeout': 600.0, 'env': {}}
    assert built.base_url is None
    assert model(server=None, base_url='http://h/v1').server is None


def test_the_settings_name_the_command_not_the_port():
    built = model()
    before = fingerprint(built.settings())
    built.base_url = 'http://127.0.0.1:41234/v1'          # what the task sets once the server runs
    assert fingerprint(built.settings()) == before
    assert built.settings()['server'] == SERVE and 'base_url' not in built.settings()
    # ... while another command, or (without a server) another base_url, is another model
    assert fingerprint(model(server=dict(command=SERVE + ['--quantization', 'fp8'])).settings()) != before
    plain = model(server=None, base_url='http://h:1/v1')
    assert plain.settings()['base_url'] == 'http://h:1/v1' and 'server' not in plain.settings()
    assert fingerprint(plain.settings()) != fingerprint(model(server=None, base_url='http://h:2/v1').settings())


# ------------------------------------------------------------ ModelServer itself
def test_a_server_starts_on_a_free_port_answers_and_its_whole_group_stops(tmp_path):
    log = tmp_path / 'logs' / 'm.server.log'
    lines = []
    with ModelServer(SERVE + ['--child', '--key', KEY], ready_timeout=30, env={'MARK': 'x'}, log_path=log,
                     api_key=KEY, log=lines.append) as server:
        assert re.fullmatch(r'http://127\.0\.0\.1:\d+/v1', server.base_url)
        request = urllib.request.Request(server.base_url + '/models', headers={'Authorization': f'Bearer {KEY}'})
        assert json.loads(urllib.request.urlopen(request, timeout=5).read())['data'][0]['id'] == 'test-model'
        text = log.read_text()
        assert f'serving on {server.base_url}' in text
        pids = pids_in(text)
        assert len(set(pids)) == 2 and alive(pids) == pids           # the server and its child
        environ = Path(f'/proc/{pids[0]}/environ').read_bytes().split(b'\0')
        assert b'MARK=x' in environ and f'PATH={os.environ["PATH"]}'.encode() in environ
    assert alive(pids) == []
    assert any('ready at ' + server.base_url in line for line in lines)
    assert 'stopped' in lines[-1] and 'SIGKILL' not in lines[-1]
    assert text.splitlines()[0].startswith('--- ') and str(server.port) in text.splitlines()[0]


def test_a_server_that_exits_early_fails_with_its_code_and_last_lines(tmp_path):
    log = tmp_path / 'm.server.log'
    code = 'import sys\nfor i in range(30): print("line", i)\nsys.exit(3)'
    with pytest.raises(ModelServerError) as caught:
        with ModelServer([sys.executable, '-c', code, '{port}'], ready_timeout=30, log_path=log):
            pass
    message = str(caught.value)
    assert 'exited with code 3 before it was ready' in message and str(log) in message
    assert 'line 10' in message and 'line 29' in message and 'line 9\n' not in message   # the last 20
    assert 'line 0' in log.read_text()


def _answers(base_url):
    try:
        return urllib.request.urlopen(base_url + '/models', timeout=2).status == 200
    except OSError:
        return False


def test_a_server_that_dies_is_started_again_on_its_port_once_then_given_up(tmp_path):
    log = tmp_path / 'm.server.log'
    lines = []
    with pytest.raises(ModelServerError) as caught:
        with ModelServer(SERVE, ready_timeout=30, log_path=log, log=lines.append, poll_s=0.05) as server:
            url = server.base_url
            first = pids_in(log.read_text())
            os.kill(first[0], signal.SIGKILL)
            # started again (and seen ready by the watcher), on the port the model was given
            wait_until(lambda: sum('ready at' in line for line in lines) == 2, 30, interval=0.05)
            assert server.base_url == url and _answers(url) and server.failure is None
            os.kill(pids_in(log.read_text())[1], signal.SIGKILL)
            wait_until(lambda: server.failure, 30, interval=0.05)
            assert not _answers(url)        # not started a third time
    message = str(caught.value)
    assert 'was killed by signal 9 during the run, after 1 restart(s)' in message and str(log) in message
    assert any(f'starting it again on port {server.port}' in line for line in lines)
    assert log.read_text().count('--- ') == 2 and alive(pids_in(log.read_text())) == []


def test_a_server_stopped_by_its_task_is_not_restarted(tmp_path):
    log = tmp_path / 'm.server.log'
    lines = []
    with ModelServer(SERVE, ready_timeout=30, log_path=log, log=lines.append, poll_s=0.05):
        pass
    time.sleep(0.3)                        # several watcher polls
    assert log.read_text().count('--- ') == 1 and not any('again' in line for line in lines)
    assert alive(pids_in(log.read_text())) == []


def test_a_server_never_ready_is_stopped_when_ready_timeout_runs_out(tmp_path):
    log = tmp_path / 'm.server.log'
    start = time.monotonic()
    with pytest.raises(ModelServerError, match=r'not ready within ready_timeout=1 s') as caught:
        with ModelServer(SAY_PID_AND_SLEEP, ready_timeout=1, log_path=log):
            pass
    assert 1 <= time.monotonic() - start < 5
    assert 'pid ' in str(caught.value)          # its output so far
    assert alive(pids_in(log.read_text())) == []


def test_readiness_needs_a_200_from_v1_models(tmp_path):
    """A server that listens but answers 503 (a model still loading) is not ready."""
    log = tmp_path / 'm.server.log'
    with pytest.raises(ModelServerError, match='never answered 200'):
        with ModelServer(SERVE + ['--not-ready'], ready_timeout=1, log_path=log):
            pass
    assert 'serving on' in log.read_text() and alive(pids_in(log.read_text())) == []
    # ... and without the key, a server started with one never answers 200 either
    with pytest.raises(ModelServerError, match='never answered 200'):
        with ModelServer(SERVE + ['--key', KEY], ready_timeout=1, log_path=log):
            pass


def test_a_server_ignoring_sigterm_is_killed_after_the_grace_period(tmp_path):
    log = tmp_path / 'm.server.log'
    lines = []
    with ModelServer(SERVE + ['--ignore-sigterm'], ready_timeout=30, log_path=log, log=lines.append,
                     stop_grace=1) as server:
        pids = pids_in(log.read_text())
        assert alive(pids) == pids
        stopping = time.monotonic()
    assert time.monotonic() - stopping >= 1 and alive(pids) == []
    assert 'SIGTERM, then SIGKILL' in lines[-1]
    assert server.proc is None


def test_ctrl_c_while_waiting_stops_the_server(tmp_path):
    log = tmp_path / 'm.server.log'
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            with ModelServer(SERVE + ['--load-time', '60'], ready_timeout=120, log_path=log):
                pass
    finally:
        timer.cancel()
    pids = pids_in(log.read_text())
    assert pids and alive(pids) == []


def test_the_marker_command_of_the_planning_tests_does_write_its_marker(tmp_path):
    """So that its marker missing after planning means the server was not started."""
    marker = tmp_path / 'started'
    with pytest.raises(ModelServerError, match='exited with code 0'):
        with ModelServer(marker_command(marker), ready_timeout=10, log_path=tmp_path / 'm.log'):
            pass
    assert marker.exists()


def marker_command(marker):
    return [sys.executable, '-c', 'import sys; open(sys.argv[1], "w")', str(marker), '{port}']


def test_sigterm_to_a_task_process_runs_its_clean_up():
    """tasks/__main__.py: SIGTERM (scancel, kill) interrupts the task as Ctrl-C does."""
    code = ('import asyncio, sys\nfrom opencompass_scicode.utils.lifeline import stop_on_sigterm\n'
            'stop_on_sigterm()\n'
            'try:\n    print("ready", flush=True)\n    asyncio.run(asyncio.sleep(60))\n'
            'except KeyboardInterrupt:\n    print("cleaned up")\n')
    for install in (True, False):
        proc = subprocess.Popen([sys.executable, '-c', code if install else code.replace('stop_on_sigterm()\n', '')],
                                cwd=ROOT, stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline() == 'ready\n'
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=10)
        assert (out, proc.returncode) == (('cleaned up\n', 0) if install else ('', -signal.SIGTERM))


# ------------------------------------------------------------ whole runs
def server_config(tmp_path, command, name='cfg.py', **model):
    """helpers.api_config_file's config, with a started server instead of a base_url."""
    server = dict(command=command, ready_timeout=model.pop('ready_timeout', 60))
    return api_config_file(tmp_path, SimpleNamespace(base_url=model.pop('base_url', None)),
                           model=dict(server=server, **model), both=False, name=name)


def infer_logs(run_dir):
    return (run_dir / 'logs' / 'infer' / 'api.out').read_text(), (run_dir / 'logs' / 'infer' / 'api.server.log')


@pytest.mark.slow
def test_a_run_with_a_started_server_scores_and_leaves_nothing_running(official_data, tmp_path):
    work = tmp_path / 'w'
    command = SERVE + ['--data', str(DATA), '--key', KEY, '--child']    # the readiness probe sends the key
    cfg = server_config(tmp_path, command)
    proc = run_cli([cfg, '-w', work])
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    run_dir = only_run(work)
    assert statuses(results(run_dir, 'api', 'val')) == dict.fromkeys(['1.1', '19.1', '19.2', '29.1', '29.2', '29.3'],
                                                                     'pass')
    task_log, server_log = infer_logs(run_dir)
    text = server_log.read_text()
    port = re.search(r'serving on http://127\.0\.0\.1:(\d+)/v1', text).group(1)
    assert text.count('request 200') == 6 and f'ready at http://127.0.0.1:{port}/v1' in task_log
    assert 'model server: stopped' in task_log
    pids = pids_in(text)
    assert len(pids) == 2 and alive(pids) == []
    settings = predictions(run_dir, 'api', 'val')[0]['settings']['model']
    # the command as given, its secret (the key after --key) redacted
    assert settings['server'] == [a if a != KEY else '<redacted>' for a in command] and 'base_url' not in settings
    # -r: the predictions are not stale (a new port would be another base_url); nothing is started again
    proc = run_cli([cfg, '-w', work, '-r'])
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert 'skipped' in proc.stdout and 'other settings' not in proc.stderr
    assert [line.startswith('--- ') for line in server_log.read_text().splitlines()].count(True) == 1


@pytest.mark.slow
def test_secrets_of_a_server_reach_the_server_and_no_file_of_the_run(official_data, tmp_path):
    """A key in the server's command (after --key) and a token in its env, the key also as key=:
    the server gets both, and no file the run writes holds either (the server's own output file
    is the server's business)."""
    import hashlib
    token = 'hf_SECRET_token_0123456789abcdef'
    work = tmp_path / 'w'
    command = SERVE + ['--data', str(DATA), '--key', KEY,
                       '--env-digest', f'HF_TOKEN:{hashlib.sha256(token.encode()).hexdigest()}']
    server = dict(command=command, ready_timeout=60, env={'HF_TOKEN': token})
    cfg = api_config_file(tmp_path, SimpleNamespace(base_url=None), model=dict(server=server), both=False,
                          sample_ids=['1'])
    assert KEY in cfg.read_text() and token in cfg.read_text()
    for args in ([cfg, '-w', work], [cfg, '-w', work, '-r'], [cfg, '-w', work, '--dry-run']):
        proc = run_cli(args)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert KEY not in proc.stdout + proc.stderr and token not in proc.stdout + proc.stderr
    run_dir = only_run(work)
    assert statuses(results(run_dir, 'api', 'val')) == {'1.1': 'pass'}     # the server got key and token
    server_log = run_dir / 'logs' / 'infer' / 'api.server.log'
    written = [p for p in run_dir.rglob('*') if p.is_file() and p != server_log]
    assert {p.relative_to(run_dir).parts[0] for p in written} >= {'configs', 'logs', 'predictions', 'results'}
    for path in written:
        data = path.read_bytes()
        assert KEY.encode() not in data and token.encode() not in data, path
    assert b'<redacted>' in (run_dir / 'configs' / f'{run_dir.name}.py').read_bytes()


@pytest.mark.slow
def test_a_server_that_exits_early_fails_the_task_with_its_last_lines(official_data, tmp_path):
    work = tmp_path / 'w'
    cfg = server_config(tmp_path, [sys.executable, '-c', "import sys; print('boom'); sys.exit(3)", '{port}'])
    proc = run_cli([cfg, '-w', work])
    assert proc.returncode == 1
    task_log, server_log = infer_logs(only_run(work))
    assert 'exited with code 3 before it was ready' in task_log and '    boom' in task_log
    assert 'boom' in server_log.read_text()
    assert re.search(r'infer/api\s+failed', proc.stdout) and re.search(r'eval/api/val\s+not run', proc.stdout)


@pytest.mark.slow
def test_a_server_never_ready_fails_the_task_and_is_stopped(official_data, tmp_path):
    work = tmp_path / 'w'
    proc = run_cli([server_config(tmp_path, SAY_PID_AND_SLEEP, ready_timeout=2), '-w', work])
    assert proc.returncode == 1
    task_log, server_log = infer_logs(only_run(work))
    assert 'not ready within ready_timeout=2 s' in task_log
    pids = pids_in(server_log.read_text())
    assert len(pids) == 1 and alive(pids) == []


@pytest.mark.slow
def test_a_server_dying_mid_run_is_restarted_once_and_the_run_completes(official_data, tmp_path):
    work = tmp_path / 'w'
    # answers take 0.3 s, so a request is in flight when it dies: that one is asked again
    command = SERVE + ['--data', str(DATA), '--delay', '0.3', '--die-after', '2', '--die-once', str(tmp_path / 'died')]
    proc = run_cli([server_config(tmp_path, command, max_concurrency=1), '-w', work])
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    run_dir = only_run(work)
    assert set(statuses(results(run_dir, 'api', 'val')).values()) == {'pass'}
    task_log, server_log = infer_logs(run_dir)
    text = server_log.read_text()
    assert 'dying after 2 answers' in text and text.count('--- ') == 2
    assert 'exited with code 3 during the run; starting it again' in task_log
    assert alive(pids_in(text)) == []


@pytest.mark.slow
def test_a_server_dying_twice_fails_the_task_naming_its_log(official_data, tmp_path):
    work = tmp_path / 'w'
    command = SERVE + ['--data', str(DATA), '--delay', '0.3', '--die-after', '1']
    proc = run_cli([server_config(tmp_path, command, max_concurrency=1), '-w', work])
    assert proc.returncode == 1
    run_dir = only_run(work)
    task_log, server_log = infer_logs(run_dir)
    assert 'exited with code 3 during the run, after 1 restart(s)' in task_log and str(server_log) in task_log
    assert server_log.read_text().count('dying after 1 answers') == 2
    assert re.search(r'infer/api\s+failed', proc.stdout) and re.search(r'eval/api/val\s+not run', proc.stdout)
    # the answers of both starts are kept for -r
    kept = {r['step_id'] for r in predictions(run_dir, 'api', 'val') if r.get('response')}
    assert len(kept) == 2


def serving_mid_inference(tmp_path, work):
    """run.py with a slow started server, once that server has answered a request: (run.py, server pids)."""
    cfg = server_config(tmp_path, SERVE + ['--data', str(DATA), '--delay', '1', '--child'], max_concurrency=1)
    proc = start_cli([cfg, '-w', work])

    def answered_log():
        logs = list(work.glob('*/logs/infer/api.server.log'))
        if logs and 'request 200' in logs[0].read_text():
            return logs[0]
        assert proc.poll() is None, proc.communicate()
    log = wait_until(answered_log, 120, interval=0.1)
    if log is None:
        os.killpg(proc.pid, signal.SIGKILL)
        raise AssertionError('the server never answered')
    pids = pids_in(log.read_text())
    assert len(pids) == 2 and alive(pids) == pids
    return proc, pids


@pytest.mark.slow
@pytest.mark.parametrize('how', ['Ctrl-C to run.py', 'SIGTERM to the task (a cancelled Slurm job)',
                                 'run.py killed outright', 'the task killed outright (the OOM killer)'])
def test_a_run_stopped_mid_inference_leaves_no_server_running(official_data, tmp_path, how):
    work = tmp_path / 'w'
    proc, pids = serving_mid_inference(tmp_path, work)
    # the task started the server: of the server's ancestors, the nearest of this run's processes
    ours, task = processes_mentioning(str(work)), pids[0]
    while task not in ours:
        task = read_proc(task).parent
        assert task > 1, 'no task above the server'
    if how.startswith('Ctrl-C'):
        os.kill(proc.pid, signal.SIGINT)
    elif how.startswith('SIGTERM'):
        os.kill(task, signal.SIGTERM)
    elif how.startswith('run.py'):
        os.kill(proc.pid, signal.SIGKILL)          # its task notices and stops as if interrupted
    else:
        os.kill(task, signal.SIGKILL)              # no clean-up of its own: the server's guard stops it
    out, _ = proc.communicate(timeout=60)
    wait_until(lambda: not alive(pids), 15, interval=0.1)
    assert alive(pids) == []
    wait_until_gone(str(work))
    if how.startswith('the task'):
        assert proc.returncode == 1 and re.search(r'infer/api\s+failed', out), out
        return
    assert proc.returncode == (-signal.SIGKILL if how.startswith('run.py') else 130)
    if how.startswith('SIGTERM'):
        assert re.search(r'infer/api\s+interrupted', out)
    assert 'model server: stopped' in infer_logs(only_run(work))[0]


@pytest.mark.parametrize('case', ['base_url too', 'no {port}'])
def test_a_wrong_server_stops_run_py_before_anything_starts(official_data, tmp_path, case):
    marker = tmp_path / 'started'
    if case == 'base_url too':
        cfg = server_config(tmp_path, marker_command(marker), base_url='http://127.0.0.1:9/v1')
        says = 'server and base_url'
    else:
        cfg = server_config(tmp_path, marker_command(marker)[:-1])
        says = "server command has no '{port}'"
    work = tmp_path / 'w'
    proc = run_cli([cfg, '-w', work])
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert 'models[0].server' in proc.stderr and says in proc.stderr and 'fix:' in proc.stderr
    assert not work.exists() and not marker.exists()


def test_planning_starts_no_server(official_data, tmp_path):
    marker = tmp_path / 'started'
    proc = run_cli([server_config(tmp_path, marker_command(marker)), '-w', tmp_path / 'w', '--dry-run'])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert 'infer' in proc.stdout and not marker.exists()


@pytest.mark.parametrize('name', ['vllm_server', 'sglang_server', 'llamacpp_server'])
def test_the_ready_made_server_configs_build(name):
    from opencompass_scicode.config import load_config
    from opencompass_scicode.registry import build_model
    (entry,) = load_config(str(ROOT / 'configs' / 'models' / f'{name}.py'))['models']
    assert entry['run_cfg'] == dict(num_gpus=1, num_procs=1) and 'base_url' not in entry
    built = build_model(entry)              # run_cfg is for the runners, not the model
    assert '{port}' in built.server['command'] and built.base_url is None


def test_run_cfg_is_checked_and_asks_the_cluster_for_gpus(tmp_path):
    """A model's run_cfg passes validation, gives its inference jobs GPUs in the plan, and a wrong
    key or value is refused before any work."""
    from opencompass_scicode.config import validate_config
    model = dict(type='ReferenceModel', abbr='ref', run_cfg=dict(num_gpus=2, num_procs=1))
    datasets = [dict(abbr='val', type='SciCodeDataset', path=str(DATA), split='validation', sample_ids=['1'])]
    validate_config({'models': [model], 'datasets': datasets})
    with pytest.raises(ConfigError, match=r"(?s)models\[0\]\.run_cfg\.num_gpu.*did you mean 'num_gpus'"):
        validate_config({'models': [dict(model, run_cfg=dict(num_gpu=1))], 'datasets': datasets})
    with pytest.raises(ConfigError, match=r'run_cfg\.num_gpus.*whole number'):
        validate_config({'models': [dict(model, run_cfg=dict(num_gpus='two'))], 'datasets': datasets})
    cfg = tmp_path / 'gpu.py'
    cfg.write_text(f'models = [{model!r}]\ndatasets = {datasets!r}\n'
                   "runner = dict(type='SlurmRunner', partition='gpu')\n")
    plan = run_cli([cfg, '-w', tmp_path / 'w', '--dry-run'])
    assert plan.returncode == 0, plan.stderr[-2000:]
    infer = next(line for line in plan.stdout.splitlines() if line.startswith('infer/ref: '))
    assert '--gres=gpu:2' in infer
    evaluate = next(line for line in plan.stdout.splitlines() if line.startswith('eval/ref/val: '))
    assert '--gres' not in evaluate and '--partition=gpu' in evaluate
