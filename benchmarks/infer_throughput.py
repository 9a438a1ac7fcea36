"""Inference throughput against an OpenAI-compatible server that answers after a fixed delay.

    python benchmarks/infer_throughput.py [--delay 1.0] [--concurrency 160] [--split all]

All problems of the split, without and with background, through the real
inference engine and OpenAIChatModel over HTTP on loopback. Steps of a problem
are sequential, so no schedule can beat the critical path: the longest
problem's number of generated steps times the delay. Prints the wall time
divided by that critical path (target: at most 1.3 with a concurrency of at
least the number of problems) and by the fully sequential time.
"""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from opencompass_scicode.datasets import SciCodeDataset  # noqa: E402
from opencompass_scicode.inference.engine import InferPart, Inferencer  # noqa: E402
from opencompass_scicode.models import OpenAIChatModel  # noqa: E402
from opencompass_scicode.predictions import PredictionStore  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--delay', type=float, default=1.0, help='seconds the server takes per answer')
    parser.add_argument('--concurrency', type=int, default=160)
    parser.add_argument('--split', default='all')
    parser.add_argument('--data', default=str(ROOT / 'data' / 'scicode'))
    args = parser.parse_args(argv)

    datasets = [SciCodeDataset(path=args.data, split=args.split, with_bg=bg) for bg in (False, True)]
    longest = max(len(p.scored_steps) for p in datasets[0].problems)
    total = sum(d.scored_step_count for d in datasets)
    # The server runs in its own process, as a real one would.
    server = subprocess.Popen([sys.executable, str(ROOT / 'tests' / 'openai_server.py'), '--data', args.data,
                               '--delay', str(args.delay), '--key', 'local'],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    base_url = server.stdout.readline().strip()
    with tempfile.TemporaryDirectory() as tmp:
        model = OpenAIChatModel(path='bench', base_url=base_url, key='local',
                                max_concurrency=args.concurrency, timeout=60)
        parts = [InferPart(dataset=d, store=PredictionStore(Path(tmp) / f'{d.abbr}.jsonl'),
                           infer_cfg={'mode': 'naive'}, prefilled_mode='official') for d in datasets]
        start = time.monotonic()
        stats = Inferencer(model, parts).run()
        wall = time.monotonic() - start
    server.stdin.close()
    counts = json.loads(server.stdout.readline())
    server.wait()
    requests, peak = counts['requests'], counts['max_in_flight']
    critical = longest * args.delay
    sequential = total * args.delay
    errors = sum(s.errors for s in stats)
    print(f'{len(datasets[0].problems)} problems x 2 background settings = {total} steps, '
          f'{requests} requests, {errors} errors, at most {peak} in flight (limit {args.concurrency})')
    print(f'server delay {args.delay:.1f}s; critical path {critical:.1f}s '
          f'(longest problem: {longest} generated steps); sequential {sequential:.0f}s')
    print(f'wall {wall:.1f}s = {wall / critical:.2f}x the critical path, '
          f'{wall / sequential:.3f}x the sequential time ({sequential / wall:.0f}x faster)')
    return 0 if errors == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
