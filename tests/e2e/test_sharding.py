"""Shards: whole problems spread over tasks, part files merged into what an unsharded run writes."""
import json
import os
import signal
import subprocess
import time

import pytest

from opencompass_scicode.partitioners.base import spread
from opencompass_scicode.partitioners.limits import share_limits
from opencompass_scicode.partitioners.sharded import NumWorkerPartitioner, SizePartitioner
from opencompass_scicode.predictions import PredictionStore, merge_parts
from opencompass_scicode.errors import ConfigError
from helpers import KEY, config_file, only_run, results, run_cli, start_cli, statuses, wait_until
from openai_server import asked

MODELS = "[dict(type=ReferenceModel, abbr='ref'), dict(type=DummyModel, abbr='dum')]"
SHARDED = '''
from opencompass_scicode.partitioners import NumWorkerPartitioner
infer = dict(partitioner=dict(type=NumWorkerPartitioner, num_worker=3))
eval = dict(partitioner=dict(type=NumWorkerPartitioner, num_worker=2))
'''
# what a results file says of the verdicts (timings and file paths aside)
SAME = ('main_problem_resolved', 'main_problem_total', 'subproblem_correct', 'subproblem_total',
        'categories', 'excluding_known_defects', 'main_problem_resolve_rate_ci95', 'subproblem_ci95')


def test_spread_keeps_whole_problems_longest_first_in_dataset_order():
    costs = [('1', 1), ('2', 9), ('3', 4), ('4', 4), ('5', 1)]
    shards = spread(costs, 2)
    assert shards == [['2', '5'], ['1', '3', '4']]      # loads 10 and 9
    assert sorted(pid for shard in shards for pid in shard) == ['1', '2', '3', '4', '5']
    assert spread(costs, 3) == [['2'], ['1', '3'], ['4', '5']]


def test_partitioners_check_their_settings_and_size_the_shards():
    with pytest.raises(ConfigError, match='num_worker'):
        NumWorkerPartitioner(num_worker=0)
    with pytest.raises(ConfigError, match='max_task_size'):
        SizePartitioner(max_task_size=-1)
    costs = [('1', 100), ('2', 100), ('3', 100)]
    assert len(SizePartitioner(max_task_size=150).split(costs, 'infer')) == 2
    assert len(SizePartitioner(max_task_size=1000).split(costs, 'infer')) == 1
    assert len(SizePartitioner(max_eval_seconds=100).split(costs, 'eval')) == 3
    assert NumWorkerPartitioner(num_worker=8).split(costs, 'infer') == [['1'], ['2'], ['3']]


def test_a_models_limits_are_shared_out_among_its_shards():
    entry = {'type': 'opencompass_scicode.models.OpenAIChatModel', 'abbr': 'm', 'path': 'm',
             'max_concurrency': 10, 'query_per_second': 3.0}
    shared = share_limits(entry, 4)
    assert shared['max_concurrency'] == 2 and shared['query_per_second'] == 0.75
    # the class's own default is shared too; a shard always keeps one request
    assert share_limits(dict(entry, max_concurrency=None), 3)['max_concurrency'] is None
    assert share_limits({k: v for k, v in entry.items() if k != 'max_concurrency'}, 3)['max_concurrency'] == 2
    assert share_limits(entry, 50)['max_concurrency'] == 1
    # models without request limits are left alone
    ref = {'type': 'opencompass_scicode.models.ReferenceModel', 'abbr': 'ref'}
    assert share_limits(ref, 4) == ref


def test_the_planner_shares_out_the_limits_the_model_itself_defaults_to():
    # one place (the class's request_limits) for the model's defaults and the planner's
    from opencompass_scicode.models import OpenAIChatModel
    model = OpenAIChatModel(path='m', key='sk-x')
    for kind in (OpenAIChatModel, 'OpenAIChatModel', 'opencompass_scicode.models.OpenAIChatModel',
                 'opencompass_scicode.models.openai_api.OpenAIChatModel'):
        whole = share_limits({'type': kind, 'path': 'm'}, 1)
        assert (whole['max_concurrency'], whole.get('query_per_second')) == (
            model.max_concurrency, model.query_per_second) == (8, None), kind
    # a class of one's own is no registered model, whatever its name
    assert share_limits({'type': 'mine.OpenAIChatModel'}, 4) == {'type': 'mine.OpenAIChatModel'}


def test_merging_parts_keeps_every_record_and_can_run_again(tmp_path):
    final = tmp_path / 'p' / 'd.jsonl'
    PredictionStore(final).append({'step_id': '1.1', 'code': 'old'})
    parts = [tmp_path / 'p' / 'd.parts' / f'part{k}of2.jsonl' for k in range(2)]
    shard = PredictionStore(parts[0], base=final)
    assert set(shard.load()) == {'1.1'}          # a shard sees the run's earlier records
    shard.append({'step_id': '1.1', 'code': 'new'})
    PredictionStore(parts[1], base=final).append({'step_id': '2.1', 'code': 'b'})
    assert PredictionStore(final).load()['1.1'].code == 'old'     # never written by a shard
    copy = [p.read_text() for p in parts]
    merge_parts(final, parts)
    merged = PredictionStore(final)
    assert {k: r.code for k, r in merged.load().items()} == {'1.1': 'new', '2.1': 'b'}
    assert merged.usage()['requests'] == 0 and len(list(merged.records())) == 3
    assert not (tmp_path / 'p' / 'd.parts').exists()
    # a merge cut short after the final file was written runs again without adding anything twice
    for part, text in zip(parts, copy):
        part.parent.mkdir(exist_ok=True)
        part.write_text(text)
    merge_parts(final, parts)
    assert len(list(PredictionStore(final).records())) == 3


def _verdicts(run_dir, model, dataset):
    res = results(run_dir, model, dataset)
    return statuses(res), {k: res.get(k) for k in SAME}


@pytest.mark.slow
def test_a_sharded_run_writes_what_an_unsharded_run_writes(tmp_path):
    plain = config_file(tmp_path, MODELS, name='plain.py')
    sharded = config_file(tmp_path, MODELS, name='sharded.py', extra=SHARDED)
    dry = run_cli([sharded, '-w', tmp_path / 'dry', '--dry-run'])
    assert dry.returncode == 0, dry.stderr
    for name in ('infer/dum/part0of3', 'infer/dum/part2of3', 'eval/dum/val_bg/part1of2'):
        assert name in dry.stdout
    for args in ([plain, '-w', tmp_path / 'a'], [sharded, '-w', tmp_path / 'b']):
        out = run_cli(args)
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    a, b = only_run(tmp_path / 'a'), only_run(tmp_path / 'b')
    status = json.loads((b / 'status.json').read_text())
    assert {'infer/ref/part0of3', 'infer/ref', 'eval/ref/val/part1of2', 'eval/ref/val'} <= set(status)
    for model in ('ref', 'dum'):
        for dataset in ('val', 'val_bg'):
            assert _verdicts(a, model, dataset) == _verdicts(b, model, dataset)
            pa, pb = (PredictionStore(r / 'predictions' / model / f'{dataset}.jsonl').load() for r in (a, b))
            assert {k: v.code for k, v in pa.items()} == {k: v.code for k, v in pb.items()}
        usage = [{d: {k: v for k, v in u.items() if k != 'model time (s)'} for d, u in
                  json.loads((r / 'predictions' / model / 'usage.json').read_text()).items()} for r in (a, b)]
        assert usage[0] == usage[1] and usage[0]['val']['steps answered'] == 6
    assert set(statuses(results(b, 'ref', 'val')).values()) == {'pass'}
    assert 'pass' not in set(statuses(results(b, 'dum', 'val')).values())
    assert not list(b.rglob('*.parts'))
    summary = lambda r: (r / 'summary' / f'summary_{r.name}.csv').read_text()  # noqa: E731
    assert summary(a) == summary(b)


def api_models(server, concurrency=3):
    return (f"[dict(type='OpenAIChatModel', abbr='api', path='test-model', base_url={server.base_url!r}, "
            f"key={KEY!r}, max_concurrency={concurrency}, retries=2, timeout=10)]")


@pytest.mark.slow
def test_three_shards_against_the_api_give_the_unsharded_verdicts_asking_each_step_once(tmp_path, server, steps):
    plain = config_file(tmp_path, api_models(server), name='plain.py')
    sharded = config_file(tmp_path, api_models(server), name='sharded.py', extra=SHARDED)
    out = run_cli([plain, '-w', tmp_path / 'a'])
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    unsharded_requests = len(server.log)
    out = run_cli([sharded, '-w', tmp_path / 'b'])
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    a, b = only_run(tmp_path / 'a'), only_run(tmp_path / 'b')
    status = json.loads((b / 'status.json').read_text())
    assert {f'infer/api/part{k}of3' for k in range(3)} <= set(status)
    requests = asked(server, steps)[unsharded_requests:]
    assert len(requests) == len(set(requests)) == 12          # each step of each setting, once
    for dataset in ('val', 'val_bg'):
        assert _verdicts(a, 'api', dataset) == _verdicts(b, 'api', dataset)


@pytest.mark.slow
def test_an_interrupted_sharded_run_resumes_shard_by_shard(tmp_path, server):
    """Stopped while its shards answer, then `-r`: the shards go on from their part files, no saved
    step is asked again, and the merged results are complete."""
    server.delay = 0.4
    cfg = config_file(tmp_path, api_models(server),
                      extra=SHARDED + "\nrunner = dict(type='LocalRunner', max_num_workers=3)\n")
    work = tmp_path / 'w'
    proc = start_cli([cfg, '-w', work], output=subprocess.DEVNULL)
    wait_until(lambda: sum(len(p.read_text().splitlines()) for p in work.rglob('*.parts/*.jsonl')) >= 4, 120)
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    run_dir = only_run(work)
    saved = {json.loads(line)['step_id'] + p.parent.name for p in run_dir.rglob('*.parts/*.jsonl')
             for line in p.read_text().splitlines() if line.strip()}
    assert 4 <= len(saved) < 12
    time.sleep(1)         # the server logs a request when it has answered: one in flight may still end
    asked_before = len(server.log)
    server.delay = 0.0
    again = run_cli([cfg, '-w', work, '-r'])
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert len(server.log) - asked_before == 12 - len(saved)
    for dataset in ('val', 'val_bg'):
        assert set(statuses(results(run_dir, 'api', dataset)).values()) == {'pass'}
    assert not list(run_dir.rglob('*.parts'))


@pytest.mark.slow
def test_discard_stale_in_a_sharded_run_sets_the_whole_runs_old_predictions_aside(tmp_path, server):
    """Shards read the run's predictions before their own part: those must be set aside too, or
    the merged file keeps answers made with the old settings."""
    work = tmp_path / 'w'
    cfg = config_file(tmp_path, api_models(server), extra=SHARDED)
    assert run_cli([cfg, '-w', work, '-m', 'infer']).returncode == 0
    warmer = api_models(server).replace('timeout=10)', 'timeout=10, temperature=0.7)')
    changed = config_file(tmp_path, warmer, name='c2.py', extra=SHARDED)
    refused = run_cli([changed, '-w', work, '-r', '-m', 'infer'])
    assert refused.returncode == 2 and '--discard-stale' in refused.stderr
    out = run_cli([changed, '-w', work, '-r', '-m', 'infer', '--discard-stale'])
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    preds = only_run(work) / 'predictions' / 'api'
    for dataset in ('val', 'val_bg'):
        records = [json.loads(line) for line in (preds / f'{dataset}.jsonl').read_text().splitlines()]
        assert len(records) == 6 and len({r['settings_fp'] for r in records}) == 1
        assert all(r['settings']['model']['temperature'] == 0.7 for r in records), records[0]['settings']
        (aside,) = preds.glob(f'{dataset}.stale-*.jsonl')
        assert len(aside.read_text().splitlines()) == 6
    # nothing stale is left: -r goes on without the flag
    assert run_cli([changed, '-w', work, '-r', '-m', 'infer']).returncode == 0
