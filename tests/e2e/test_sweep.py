"""configs/eval_scicode_sweep.py (models x temperatures x modes) and the summary's long layout."""
import csv
import json
import struct
from pathlib import Path

import pytest

from helpers import ROOT, fake_results, only_run, run_cli, texts_off_canvas, write_results
from opencompass_scicode.config import fill_abbrs, load_config, validate_config
from opencompass_scicode.errors import ConfigError
from opencompass_scicode.summarizers import SciCodeSummarizer
from opencompass_scicode.summarizers.scicode import LONG_HEADER, group_datasets, row_chart
from opencompass_scicode.utils.workdir import RunDir

SWEEP = ROOT / 'configs' / 'eval_scicode_sweep.py'
SWEEP_ENV = ('SCICODE_SWEEP_OFFLINE', 'SCICODE_SAMPLE_IDS', 'SCICODE_SPLIT')
UNSET = dict.fromkeys((*SWEEP_ENV, 'OPENAI_API_KEY'))          # run_cli's env: none of them set


@pytest.fixture
def clean_env(monkeypatch):
    """No sweep switches and no API key: what loading the sweep must do without them."""
    for name in (*SWEEP_ENV, 'OPENAI_API_KEY'):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def _sweep(offline=False, monkeypatch=None):
    if offline:
        monkeypatch.setenv('SCICODE_SWEEP_OFFLINE', '1')
    cfg = load_config(SWEEP)
    validate_config(cfg, file=SWEEP)          # builds no model: no key needed
    return fill_abbrs(cfg)


@pytest.mark.parametrize('offline', [False, True])
def test_sweep_config_names_every_combination_once(clean_env, offline):
    cfg = _sweep(offline, clean_env)
    temperatures, modes = cfg['_temperatures'], cfg['_modes']
    names = [name for name, _, _ in cfg['_api_models']] if not offline else ['reference', 'dummy']
    models = [m['abbr'] for m in cfg['models']]
    datasets = [d['abbr'] for d in cfg['datasets']]
    assert len(set(models)) == len(models) == len(names) * len(temperatures)
    assert len(set(datasets)) == len(datasets) == 2 * len(modes)
    assert models == [f'{name.split("/")[-1]}-t{float(t)}' for name in names for t in temperatures]
    assert datasets == [f'scicode_validation_{mode}{sfx}' for mode in modes
                        for sfx in ('', '_with_background')]
    # each mode a dataset setting, each temperature a model setting
    assert [d['infer_cfg']['mode'] for d in cfg['datasets']] == [m for m in modes for _ in (0, 1)]
    if offline:
        assert {m['type'].__name__ for m in cfg['models']} == {'ReferenceModel', 'DummyModel'}
    else:
        assert [m['temperature'] for m in cfg['models']] == [float(t) for _ in names for t in temperatures]
        assert all(m['key'].startswith('ENV:') for m in cfg['models'])       # a variable's name, never a key
    # the summary: one row per model entry x mode
    groups = group_datasets(cfg['datasets'])
    assert [label for label, _ in groups] == [f'scicode_validation_{mode}' for mode in modes]
    assert len(models) * len(groups) == len(names) * len(temperatures) * len(modes)
    assert cfg['summarizer']['layout'] == 'long'


def test_sweep_sample_ids_and_split_come_from_the_environment(clean_env):
    clean_env.setenv('SCICODE_SAMPLE_IDS', ' 1, 19 ')
    cfg = _sweep()
    assert {tuple(d['sample_ids']) for d in cfg['datasets']} == {('1', '19')}
    assert {d['split'] for d in cfg['datasets']} == {'validation'}


@pytest.mark.slow
def test_sweep_dry_run_names_missing_keys_and_sends_nothing(official_data, tmp_path):
    work = tmp_path / 'w'
    proc = run_cli([SWEEP, '-w', work, '--dry-run'], env=UNSET)
    assert proc.returncode == 0, proc.stderr          # a dry run needs no key: it says a run would stop
    message = ' '.join(proc.stderr.split())
    assert '$OPENAI_API_KEY is not set: a run would stop here' in message and 'export OPENAI_API_KEY=' in message
    assert not work.exists()
    proc = run_cli([SWEEP, '-w', work], env=UNSET)    # the run itself does stop, before any work
    assert proc.returncode == 2 and '$OPENAI_API_KEY is not set' in ' '.join(proc.stderr.split())
    # With a key: the plan, and nothing written or sent (requests would go to a closed port).
    proc = run_cli([SWEEP, '-w', work, '--dry-run'],
                   env=dict(UNSET, OPENAI_API_KEY='sk-never-used', OPENAI_BASE_URL='http://127.0.0.1:9/v1'))
    assert proc.returncode == 0, proc.stderr
    cfg = load_config(SWEEP)
    n_models, n_datasets = len(cfg['_api_models']) * len(cfg['_temperatures']), 2 * len(cfg['_modes'])
    plan = proc.stdout.splitlines()
    # after the table, one line per task saying how it is started: `<task name>: <command>`
    starts = [line.split(': ', 1)[0] for line in plan if line.split(': ', 1)[0].count('/') and ': ' in line]
    assert sum(name.startswith('infer/') for name in starts) == n_models
    assert sum(name.startswith('eval/') for name in starts) == n_models * n_datasets
    assert 'sk-never-used' not in proc.stdout + proc.stderr
    assert not work.exists()


def _png_size(path):
    width, height = struct.unpack('>II', Path(path).read_bytes()[16:24])
    return width, height


@pytest.mark.slow
def test_offline_sweep_gives_one_summary_row_per_combination(official_data, tmp_path):
    work = tmp_path / 'w'
    proc = run_cli([SWEEP, '-w', work], env=dict(UNSET, SCICODE_SWEEP_OFFLINE='1', SCICODE_SAMPLE_IDS='1,19'))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    run_dir = only_run(work)
    stamp = run_dir.name
    cfg = load_config(SWEEP)
    modes = cfg['_modes']
    with open(run_dir / 'summary' / f'summary_{stamp}.csv', newline='') as fh:
        header, *rows = list(csv.reader(fh))
    assert header == LONG_HEADER
    expected = []
    for model, main, sub in (('reference', '100.0 (2/2) [100-100]', '100.0 (3/3) [100-100]'),
                             ('dummy', '0.0 (0/2) [0-0]', '0.0 (0/3) [0-0]')):
        for t in cfg['_temperatures']:
            for mode in modes:
                # the protocol's name says what the sweep sets differently from the official one
                protocol = 'official' + ('' if mode == 'naive' else f'+mode={mode}') + '+max_out_len=4096'
                expected.append([f'{model}-t{float(t)}', f'scicode_validation_{mode}', 'regenerated', protocol,
                                 main, main, sub, sub])
    assert rows == expected
    # every mode really ran as itself: chat keeps one conversation per problem, tool_use was offered the tool
    for mode in modes:
        records = [json.loads(line) for line in
                   (run_dir / 'predictions' / 'reference-t0.7' / f'scicode_validation_{mode}.jsonl').open()]
        assert {r['mode'] for r in records} == {mode} and len(records) == 3
        step = next(r for r in records if r['step_id'] == '19.2')
        if mode == 'chat':
            assert [m['role'] for m in step['transcript']] == ['user', 'assistant', 'user', 'assistant']
        elif mode == 'tool_use':
            assert step['tool_calls'] == 0 and 'code_interpreter' in step['transcript'][0]['content']
    text = (run_dir / 'summary' / f'summary_{stamp}.txt').read_text()
    assert text.startswith('SciCode results: 4 models x 3 dataset groups')
    width, height = _png_size(run_dir / 'summary' / f'summary_{stamp}.png')
    assert height > width and height >= 12 * 80          # grows with the 12 rows
    assert (run_dir / 'summary' / f'report_{stamp}.html').is_file()


# ---------------------------------------------------------------- the long layout, from files alone

def _datasets(modes):
    return [{'abbr': f'val_{mode}' + ('_bg' if bg else ''), 'split': 'validation', 'with_bg': bg,
             'infer_cfg': {'mode': mode}} for mode in modes for bg in (False, True)]


def _write(run_dir, cfg, score):
    for m in cfg['models']:
        for ds in cfg['datasets']:
            resolved, correct = score(m['abbr'], ds['abbr'])
            write_results(run_dir, fake_results(m['abbr'], ds['abbr'], ds['with_bg'], resolved, correct))


def test_datasets_differing_in_mode_pair_by_mode():
    groups = group_datasets(_datasets(['naive', 'chat']) + [{'abbr': 'plain', 'with_bg': False}])
    assert groups == [('val_naive', {'without': 'val_naive', 'with': 'val_naive_bg'}),
                      ('val_chat', {'without': 'val_chat', 'with': 'val_chat_bg'}),
                      ('plain', {'without': 'plain', 'with': None})]     # no infer_cfg = naive, own group


def test_long_layout_one_row_per_model_and_mode(tmp_path):
    cfg = {'models': [{'abbr': 'a-t0.0'}, {'abbr': 'a-t0.7'}, {'abbr': 'b-t0.0'}],
           'datasets': _datasets(['naive', 'chat'])}
    run_dir = RunDir(tmp_path, '20260101_000000').create()
    _write(run_dir, cfg, lambda m, d: (1, 3) if d.endswith('_bg') else (2, 4))
    (run_dir.results_path('b-t0.0', 'val_chat_bg')).unlink()           # not run (yet)
    out = SciCodeSummarizer(report=False).summarize(cfg, run_dir, echo=False)      # auto: 2 groups -> long
    assert out['header'] == LONG_HEADER
    assert [row[:2] for row in out['rows']] == [[m, f'val_{mode}'] for m in ('a-t0.0', 'a-t0.7', 'b-t0.0')
                                                for mode in ('naive', 'chat')]
    # results written without a protocol record (as before protocols) say so
    assert out['rows'][0][2:] == ['regenerated', 'unrecorded', '100.0 (2/2) [0-100]', '50.0 (1/2) [0-100]',
                                  '100.0 (4/4) [25-100]', '75.0 (3/4) [25-100]']
    assert out['rows'][-1][2:] == ['regenerated', 'unrecorded', '100.0 (2/2) [0-100]', '-', '100.0 (4/4) [25-100]',
                                   '-']
    csv_rows = run_dir.summary_path('csv').read_text().splitlines()
    assert csv_rows[0] == ','.join(LONG_HEADER) and len(csv_rows) == 7
    md = run_dir.summary_path('md').read_text()
    assert md.startswith('## SciCode results: 3 models x 2 dataset groups')
    # the background differences follow the table's order: a model's rows together
    comparisons = [line.split(',')[:2] for line in run_dir.summary_path('comparisons.csv').read_text().splitlines()]
    assert comparisons[1:6] == [['a-t0.0: w/ bg - w/o bg', 'val_naive'], ['a-t0.0: w/ bg - w/o bg', 'val_chat'],
                                ['a-t0.7: w/ bg - w/o bg', 'val_naive'], ['a-t0.7: w/ bg - w/o bg', 'val_chat'],
                                ['b-t0.0: w/ bg - w/o bg', 'val_naive']]
    width, height = _png_size(run_dir.summary_path('png'))
    assert height > 6 * 60


def test_layout_can_be_forced_either_way(tmp_path):
    cfg = {'models': [{'abbr': 'a'}], 'datasets': _datasets(['naive'])}
    run_dir = RunDir(tmp_path, '20260101_000000').create()
    _write(run_dir, cfg, lambda m, d: (2, 4))
    wide = SciCodeSummarizer(plot=False, report=False).summarize(cfg, run_dir, echo=False)
    assert wide['header'] == ['model', 'targets', 'protocol', 'main w/o bg', 'sub-steps w/o bg', 'main w/ bg',
                              'sub-steps w/ bg']
    long = SciCodeSummarizer(plot=False, report=False, layout='long').summarize(cfg, run_dir, echo=False)
    assert long['header'] == LONG_HEADER and len(long['rows']) == 1
    cfg['datasets'] = _datasets(['naive', 'chat'])
    _write(run_dir, cfg, lambda m, d: (2, 4))
    wide = SciCodeSummarizer(plot=False, report=False, layout='wide').summarize(cfg, run_dir, echo=False)
    assert wide['header'][:4] == ['model', 'val_naive targets', 'val_naive protocol', 'val_naive main w/o bg']
    assert len(wide['rows']) == 1


def test_layout_rejects_a_bad_value_with_a_clear_error(tmp_path):
    with pytest.raises(ConfigError) as info:
        SciCodeSummarizer(layout='tall')
    assert "unknown layout 'tall'" in str(info.value) and "'auto'" in info.value.fix and "'long'" in info.value.fix
    path = tmp_path / 'cfg.py'
    path.write_text(f"_base_ = [{str(ROOT / 'configs' / 'eval_scicode.py')!r}]\nsummarizer = dict(layout='tall')\n")
    with pytest.raises(ConfigError) as info:
        validate_config(load_config(path), file=path)         # before any work, with file and key
    assert str(info.value).startswith(f"{path}: key `summarizer.layout`: unknown layout 'tall'")
    path.write_text(f"_base_ = [{str(ROOT / 'configs' / 'eval_scicode.py')!r}]\nsummarizer = dict(layout=2)\n")
    with pytest.raises(ConfigError, match='summarizer.layout.*must be str'):
        validate_config(load_config(path), file=path)


@pytest.mark.parametrize('n_rows', [2, 12, 40])
def test_row_plot_keeps_every_label_on_the_canvas_and_grows_with_rows(n_rows):
    rows = [f'model-{i // 3}-t0.7 | {("naive", "chat", "tool_use")[i % 3]}' for i in range(n_rows)]
    series = [(f'{metric}, {side}', [50.0] * n_rows, [[25.0, 75.0]] * n_rows)
              for metric in ('main', 'sub-steps') for side in ('w/o bg', 'w/ bg')]
    fig = row_chart(rows, series)
    ticks = fig.axes[0].get_yticklabels()
    assert texts_off_canvas(fig, ticks) == []
    assert [t.get_text() for t in ticks] == rows
    # labels do not overlap: each row's label sits below the one before it
    extents = [t.get_window_extent(fig.canvas.get_renderer()) for t in ticks]
    assert all(upper.y0 >= lower.y1 for upper, lower in zip(extents, extents[1:]))
    assert fig.get_size_inches()[1] >= 0.6 * n_rows


def test_offline_models_answer_chat_and_tool_use_turns_from_the_step(tiny_data):
    """What lets the offline sweep run every mode: each turn is the step's own answer, no tool call."""
    import asyncio

    from helpers import tiny_dataset
    from opencompass_scicode.inference import modes
    from opencompass_scicode.inference.settings import InferConfig
    from opencompass_scicode.models import DummyModel, GeneratedCodeModel, ReferenceModel

    dataset = tiny_dataset(tiny_data, sample_ids=['900'])
    problem = dataset.problems[0]
    state = {'code_runner': None}
    for step in problem.scored_steps:
        out = asyncio.run(modes.chat(ReferenceModel(), problem, step, f'prompt {step.step_id}', dataset, state,
                                     InferConfig(mode='chat')))
        assert out['response'] == f'```python\n{step.ground_truth_code}\n```' and out['error'] is None
    assert [m['role'] for m in state['messages']] == ['user', 'assistant', 'user', 'assistant']
    assert state['messages'][2]['content'] == 'prompt 900.2'
    out = asyncio.run(modes.tool_use(DummyModel(response='```python\nx = 1\n```'), problem, problem.scored_steps[0],
                                     'prompt', dataset, {'code_runner': None}, InferConfig(mode='tool_use')))
    assert out['response'] == '```python\nx = 1\n```' and out['tool_calls'] == 0
    assert ReferenceModel.supports_chat and DummyModel.supports_chat and not GeneratedCodeModel.supports_chat
