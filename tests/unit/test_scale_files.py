"""benchmarks/scale.py's run is shaped as the pipeline's: it loads through the summarizer with
the counts it should have; and the report's texts survive their packing exactly."""
import json
import sys

from helpers import DATA, ROOT
from opencompass_scicode.datasets import SciCodeDataset
from opencompass_scicode.summarizers import SciCodeSummarizer
from opencompass_scicode.summarizers.report import Records, _Chunk
from opencompass_scicode.summarizers.results_files import collect

sys.path.insert(0, str(ROOT / 'benchmarks'))

IDS = ['1', '13']          # a validation problem (gold code) and a test one with a prefilled step (13.6)


def _text(paragraphs, runs):
    """What the page's script does with a text's runs."""
    return '\n\n'.join(p for first, count in zip(runs[::2], runs[1::2]) for p in paragraphs[first:first + count])


def test_texts_survive_the_paragraph_packing():
    chunk = _Chunk('d', '1')
    texts = ['', '\n', 'a', 'a\n', '\na', 'a\n\nb', 'a\n\n\nb', 'a\n\n\n\nb\n\n', '\n\n\n', 'α\n\nβ\r\n\n\tγ',
             'x\n\ny\n\nz', 'y\n\nz\n\nx', 'x\n\ny\n\nz\n\nnew']
    packed = [(text, chunk.runs(text)) for text in texts]
    paragraphs = list(chunk.paragraphs)
    assert [_text(paragraphs, runs) for _, runs in packed] == texts
    # new paragraphs are numbered in turn, so a text is few runs: x, y, z new; then y z | x; then x y z new
    k = packed[-3][1][0]
    assert [runs for _, runs in packed[-3:]] == [[k, 3], [k + 1, 2, k, 1], [k, 4]]


def test_the_synthetic_run_loads_through_the_summarizer(tmp_path):
    import scale
    _, run_dir, cfg = scale.synthetic_run(tmp_path, n_models=2, samples=2, data=DATA, sample_ids=IDS)
    dataset = SciCodeDataset(path=str(DATA), split='all', sample_ids=IDS)
    scored, steps = dataset.scored_step_count, sum(len(p.steps) for p in dataset.problems)
    files = sorted((run_dir.root / 'results').glob('*/*.json'))
    assert [f'{f.parent.name}/{f.stem}' for f in files] == [
        f'model-0{m}/scicode_all{sfx}' for m in (0, 1) for sfx in ('', '_with_background')]
    for path in files:
        results = json.loads(path.read_text())
        assert results['subproblem_total'] == 2 * scored and results['samples'] == 2
        assert set(results['pass_at_k']['main']) == {'1', '2'}
        records = [s for p in results['problems'] for s in p['steps']]
        assert len(records) == 2 * steps
        answered = [s for s in records if s['status'] != 'skipped']
        assert all(s['answer']['prompt'] and s['answer']['response'] and s['tests'] for s in answered)
        assert {s.get('sample') for s in records} == {0, 1}
    status = json.loads(run_dir.status_path.read_text())
    assert {v['state'] for v in status.values()} == {'done'} and len(status) == 2 + 2 * 2
    usage = json.loads(run_dir.usage_path('model-00').read_text())
    assert usage['scicode_all']['steps answered'] == 2 * scored

    out = SciCodeSummarizer(plot=False, report=False).summarize(cfg, run_dir, echo=False)
    assert [row[0] for row in out['rows']] == ['model-00', 'model-01']
    assert all(f'/{2 * scored})' in cell for row in out['rows'] for cell in row[4::2])
    assert len(run_dir.summary_path('pass_at_k.csv').read_text().splitlines()) == 1 + 2 * 2

    gathered = Records(cfg)
    collect(cfg, run_dir, steps=False, each=gathered.reader(run_dir.timestamp))
    index, chunks = gathered.payload()
    assert len(index['records']) == 2 * 2 * 2 * steps and len(chunks) == 2 * len(IDS)
    # every prompt, response and code as the results file has it, from its chunk
    first = json.loads(files[0].read_text())
    compared = 0
    for problem in first['problems']:
        chunk = gathered.chunks['scicode_all', problem['problem_id']]
        mine = [r for r in gathered.index if r['model'] == 'model-00' and r['dataset'] == 'scicode_all'
                and r['problem_id'] == problem['problem_id'] and r['sample'] == problem['sample']]
        for record, step in zip(mine, problem['steps']):
            detail = chunk.records[record['at']]['t']
            for field in ('prompt', 'response', 'code'):
                if field in step.get('answer', {}):
                    assert _text(list(chunk.paragraphs), detail[field]) == step['answer'][field]
                    compared += 1
    assert compared == 3 * 2 * scored
