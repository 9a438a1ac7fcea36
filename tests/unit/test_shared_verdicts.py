"""Claims on a step program shared by the eval tasks of a run (evaluation/sharing.py)."""
import os
import subprocess
import sys

from opencompass_scicode.evaluation.sharing import HOST, SharedVerdicts


def test_a_claim_holds_while_its_owner_lives_here_and_never_blocks_on_another_node(tmp_path):
    shared = SharedVerdicts(tmp_path)
    assert shared.try_claim('k1')                       # first: run it
    assert not SharedVerdicts(tmp_path).try_claim('k1')  # claimed by a live process here: wait
    # an owner that died here: taken over
    dead = subprocess.run([sys.executable, '-c', 'import os; print(os.getpid())'], capture_output=True,
                          text=True).stdout.strip()
    (tmp_path / 'k2.claim').write_text(f'{HOST} {dead}')
    assert shared.try_claim('k2')
    assert (tmp_path / 'k2.claim').read_text() == f'{HOST} {os.getpid()}'
    # an owner on another node sharing the run directory: its life cannot be seen from here
    (tmp_path / 'k3.claim').write_text(f'another-node {os.getpid()}')
    assert shared.try_claim('k3')
    shared.put('k3', {'status': 'pass'})
    assert shared.get('k3') == {'status': 'pass'} and not (tmp_path / 'k3.claim').exists()
