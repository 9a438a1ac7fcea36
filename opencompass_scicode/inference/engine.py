"""Asks one model for every step of its datasets, in the official order.

Steps of one problem are sequential (each prompt embeds the code of the steps
before it); problems and datasets run concurrently and the model's own limits
(concurrency, rate) bound the requests. Every finished step is appended and
flushed to its predictions file before the next step of that problem starts,
so a killed run loses at most the requests in flight.

A step without code stops the rest of its problem (official: later prompts embed
it), except where the missing code is a gap the later steps can go on without:
a request the API refused for itself (models/refusals.py: context length, a
content filter; asking again gives the same answer) and, under an extraction
that finds no code in prose (extract.py), an answer without a code block. The
later steps are asked with an empty code for it, and their records name it
(`gaps`): when -r fills the gap, they are asked again.
"""
import asyncio
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ..errors import UserFacingError
from ..models.base import ANSWER_LIMIT, ANSWER_TEMPERATURE
from ..models.refusals import EndpointError, StepRefused
from ..predictions import Prediction, record_key
from ..utils.fingerprint import fingerprint
from ..datasets.chain import code_chain
from ..prompts import build_chat_prompt, build_prompt
from .extract import extractor
from .modes import CHAT_EARLIER_STEPS, CHAT_GIVEN_STEPS, GENERATORS
from .settings import InferConfig


class StalePredictionsError(UserFacingError):
    pass


@dataclass
class InferStats:
    total: int = 0          # scored steps in the dataset
    done: int = 0           # steps with a record (reused or new)
    reused: int = 0
    errors: int = 0
    error_steps: list = field(default_factory=list)
    cause: tuple = None     # (step id, error) of the first step whose request failed


def infer_settings(model, dataset, infer_cfg) -> dict[str, Any]:
    """Everything that determines the answers; a change makes old predictions stale."""
    config = InferConfig.of(infer_cfg)
    infer = config.settings()
    own = model.settings()
    if 'temperature' in own and own['temperature'] is None:
        # the temperature it is asked with: the dataset's (its protocol's), as the request sends it
        own['temperature'] = config.temperature
    settings = {'model': own, 'mode': infer.pop('mode'), 'max_out_len': infer.pop('max_out_len'),
                'prefilled_mode': dataset.prefilled_mode, 'with_bg': dataset.with_bg, 'split': dataset.split}
    settings.update(infer)
    return settings


def stale_records(existing, settings) -> list[str]:
    """The names of the settings that differ, if any record was made with other settings."""
    current = fingerprint(settings)
    for record in existing.values():
        if record.settings_fp != current:
            old = record.settings
            return sorted(k for k in set(old) | set(settings) if old.get(k) != settings.get(k)) or ['unknown']
    return []


def check_stale(store, settings, discard=False) -> dict[str, Prediction]:
    """Refuse to mix predictions made with other settings into a run, or set them aside.

    Returns the predictions the run goes on from."""
    existing = store.load()
    changed = stale_records(existing, settings)
    if not changed:
        return existing
    if discard:
        store.set_aside('stale')
        return {}
    raise StalePredictionsError(
        f'{store.path} holds predictions made with other settings '
        f'(changed: {", ".join(changed)}). Reusing them would mix two runs.\n'
        f'  fix: start a new run (drop -r), or add --discard-stale to set them aside '
        f'and generate them again.')


@dataclass
class InferPart:
    """One dataset of the model's inference task."""
    dataset: object
    store: object
    infer_cfg: InferConfig
    settings: dict = None       # set by the Inferencer
    settings_fp: str = None
    stats: InferStats = None


class Inferencer:
    def __init__(self, model, parts, on_progress=None, on_problem_done=None, code_runner=None,
                 discard_stale=False):
        self.model = model
        self.parts = parts
        self.on_progress = on_progress or (lambda part: None)
        self.on_problem_done = on_problem_done or (lambda part, problem, sample: None)
        self.code_runner = code_runner
        self.discard_stale = discard_stale
        for part in parts:
            part.infer_cfg = InferConfig.of(part.infer_cfg)
            part.settings = infer_settings(model, part.dataset, part.infer_cfg)
            part.settings_fp = fingerprint(part.settings)
            part.stats = InferStats(total=part.dataset.scored_step_count * part.infer_cfg.n)

    def run(self) -> list[InferStats]:
        """Answer every step of every dataset part; the statistics of each part."""
        # before any request
        existing = [check_stale(part.store, part.settings, self.discard_stale) for part in self.parts]
        asyncio.run(self._run_all(existing))
        return [part.stats for part in self.parts]

    async def _run_all(self, existing_per_part):
        chains = []
        for part, existing in zip(self.parts, existing_per_part):
            for problem in part.dataset.problems:
                for sample in range(part.infer_cfg.n):      # each sample a chain of its own answers
                    chains.append((len(problem.scored_steps), part, problem, existing, sample))
        # Longest problems first: they set the total time, and the model's very first
        # request (sent alone, see OpenAIChatModel) then belongs to one of them.
        chains.sort(key=lambda c: -c[0])
        tasks = [asyncio.ensure_future(self._run_problem(part, problem, existing, sample))
                 for _, part, problem, existing, sample in chains]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:        # a fatal error (wrong key, model, ...) stops everything
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    async def _run_problem(self, part, problem, existing, sample=0):
        ANSWER_LIMIT.set(part.infer_cfg.max_out_len)       # this task's own context (models/base.py)
        ANSWER_TEMPERATURE.set(part.infer_cfg.temperature)
        codes, state = {}, {'code_runner': self.code_runner, 'sample': sample, 'gaps': set()}
        for step in problem.steps:
            if step.prefilled:
                continue
            old = existing.get(record_key(step.step_id, sample))
            if old is not None and not old.error and not _filled_since(old, codes):
                codes[step.step_id] = old.code
                if old.code is None:
                    state['gaps'].add(step.step_id)
                if old.transcript:
                    state['messages'] = old.transcript
                part.stats.done += 1
                part.stats.reused += 1
                self.on_progress(part)
                continue
            record = await self._run_step(part, problem, step, codes, state)
            codes[step.step_id] = record['code']
            if record['code'] is None and (record.get('refused') or not record['error']):
                state['gaps'].add(step.step_id)        # the later steps go on without it
            # saved (and synced) before this problem's next step; off the event loop
            await asyncio.to_thread(part.store.append, record)
            part.stats.done += 1
            if record['error']:
                part.stats.errors += 1
                part.stats.error_steps.append(step.step_id)
                if part.stats.cause is None and record['prompt'] is not None:     # asked, not skipped
                    part.stats.cause = (step.step_id, record['error'])
            self.on_progress(part)
        self.on_problem_done(part, problem, sample)

    async def _run_step(self, part, problem, step, codes, state):
        dataset, mode = part.dataset, part.settings['mode']
        prior = code_chain(problem, step.index, codes, dataset.prefilled_file, dataset.prefilled_mode)
        base = {'problem_id': problem.problem_id, 'step_id': step.step_id, 'step_index': step.index,
                'model': self.model.abbr, 'dataset': dataset.abbr, 'mode': mode,
                'settings': part.settings, 'settings_fp': part.settings_fp}
        if part.infer_cfg.n > 1:
            base['sample'] = state['sample']
        without = [s.step_id for s, c in zip(problem.steps, prior) if c is None]
        missing = [sid for sid in without if sid not in state['gaps']]
        gaps = [sid for sid in without if sid in state['gaps']]
        if gaps:
            base['gaps'] = gaps
        if self.model.needs_prior_code and missing:
            return dict(base, prompt=None, response=None, code=None, program=None,
                        error=f'not generated: earlier step(s) {", ".join(missing)} have no code',
                        finish_reason=None, reasoning=None, usage={}, duration_s=0.0,
                        created_at=_now())
        if mode == 'chat' and 'messages' in state:
            prompt = build_chat_prompt(dataset.template, problem, step.index, dataset.with_bg,
                                       CHAT_EARLIER_STEPS, _given_before(problem, step, prior), CHAT_GIVEN_STEPS)
        else:
            prompt = build_prompt(dataset.template, problem, step.index, [c or '' for c in prior],
                                  dataset.with_bg)
        start = time.monotonic()
        try:
            out = await GENERATORS[mode](self.model, problem, step, prompt, dataset, state,
                                         part.infer_cfg)
        except EndpointError as exc:       # every request would fail so: the model stops here
            raise exc.at_step(step.step_id) from None
        except UserFacingError:
            raise
        except StepRefused as exc:         # this request's own failure, in the server's words
            out = {'response': None, 'error': str(exc), 'refused': not exc.transient,
                   'finish_reason': None, 'reasoning': None, 'usage': {}}
        except Exception as exc:  # one step's failure must not stop the others
            out = {'response': None, 'error': self.model.redact(f'{type(exc).__name__}: {exc}'),
                   'finish_reason': None, 'reasoning': None, 'usage': {}}
        response = out.get('response')
        extract = extractor(part.infer_cfg.extraction)
        code = None if out.get('error') or response is None else extract(response)
        record = dict(base, prompt=prompt, response=response, code=code, program=out.get('program'),
                      error=out.get('error'), finish_reason=out.get('finish_reason'),
                      truncated=out.get('finish_reason') == 'length',
                      reasoning=out.get('reasoning'), usage=out.get('usage') or {},
                      duration_s=round(time.monotonic() - start, 3), created_at=_now())
        for key in ('transcript', 'tool_calls'):
            if key in out:
                record[key] = out[key]
        if out.get('refused'):
            record['refused'] = True
        return record


def _filled_since(record, codes):
    """Whether a step answered with gaps in its chain (earlier steps without code) now has code
    for one of them: its answer was built without that code, and is asked again."""
    return any(codes.get(step_id) is not None for step_id in record.gaps or ())


def _given_before(problem, step, prior):
    """[(step, code)] of the prefilled steps right before `step` (their code is in no chat turn)."""
    first = step.index - 1
    while first > 0 and problem.steps[first - 1].prefilled:
        first -= 1
    return [(s, c or '') for s, c in zip(problem.steps[first:step.index - 1], prior[first:])]


def _now():
    return datetime.now(timezone.utc).isoformat(timespec='seconds')
