"""Asks a model for every step of a dataset, in the official order.

Steps of one problem are sequential (each prompt embeds the code of the
steps before it); problems run concurrently up to the model's limit. Every
finished step is appended to the predictions file before the next starts.
"""
import asyncio
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone

from ..errors import UserFacingError
from ..models.base import GenerationRequest
from ..predictions import fingerprint
from ..prompts import build_prompt, code_chain
from .extract import extract_code


class StalePredictionsError(UserFacingError):
    pass


@dataclass
class InferStats:
    total: int = 0          # scored steps in the dataset
    done: int = 0           # steps with a record (reused or new)
    reused: int = 0
    errors: int = 0
    error_steps: list = field(default_factory=list)


def infer_settings(model, dataset, infer_cfg, prefilled_mode):
    return {
        'model': model.settings(),
        'mode': infer_cfg.get('mode', 'naive'),
        'max_out_len': infer_cfg.get('max_out_len'),
        'prefilled_mode': prefilled_mode,
        'with_bg': dataset.with_bg,
        'split': dataset.split,
    }


def check_stale(existing, settings, where):
    """Refuse to mix predictions made with other settings into this run."""
    current = fingerprint(settings)
    for record in existing.values():
        if record.get('settings_fp') == current:
            continue
        old = record.get('settings', {})
        changed = sorted(k for k in set(old) | set(settings) if old.get(k) != settings.get(k))
        raise StalePredictionsError(
            f'{where} holds predictions made with other settings '
            f'(changed: {", ".join(changed) or "unknown"}). Reusing them would mix two runs.\n'
            f'  fix: start a new run (drop -r), or delete {where} to regenerate it.')


class Inferencer:
    def __init__(self, model, dataset, store, infer_cfg, prefilled_mode, on_progress=None):
        self.model = model
        self.dataset = dataset
        self.store = store
        self.infer_cfg = dict(infer_cfg or {})
        self.prefilled_mode = prefilled_mode
        self.settings = infer_settings(model, dataset, self.infer_cfg, prefilled_mode)
        self.settings_fp = fingerprint(self.settings)
        self.on_progress = on_progress or (lambda stats: None)
        self.stats = InferStats()

    def run(self):
        existing = self.store.load()
        check_stale(existing, self.settings, self.store.path)
        self.stats = InferStats(total=self.dataset.scored_step_count)
        asyncio.run(self._run_all(existing))
        return self.stats

    async def _run_all(self, existing):
        limit = asyncio.Semaphore(max(1, int(getattr(self.model, 'max_concurrency', 1) or 1)))

        async def one(problem):
            async with limit:
                await self._run_problem(problem, existing)

        await asyncio.gather(*(one(p) for p in self.dataset.problems))

    async def _run_problem(self, problem, existing):
        codes = {}
        for step in problem.steps:
            if step.prefilled:
                continue
            old = existing.get(step.step_id)
            if old is not None and not old.get('error'):
                codes[step.step_id] = old.get('code')
                self.stats.done += 1
                self.stats.reused += 1
                self.on_progress(self.stats)
                continue
            record = await self._run_step(problem, step, codes)
            codes[step.step_id] = record['code']
            self.store.append(record)
            self.stats.done += 1
            if record['error']:
                self.stats.errors += 1
                self.stats.error_steps.append(step.step_id)
            self.on_progress(self.stats)

    async def _run_step(self, problem, step, codes):
        prior = code_chain(problem, step.index, codes, self.dataset.prefilled_file,
                           self.prefilled_mode)
        base = {'problem_id': problem.problem_id, 'step_id': step.step_id,
                'step_index': step.index, 'model': self.model.abbr,
                'dataset': self.dataset.abbr, 'mode': self.settings['mode'],
                'settings': self.settings, 'settings_fp': self.settings_fp}
        missing = [s.step_id for s, c in zip(problem.steps, prior) if c is None]
        if self.model.needs_prior_code and missing:
            return dict(base, prompt=None, response=None, code=None, program=None,
                        error=f'not generated: earlier step(s) {", ".join(missing)} have no code',
                        finish_reason=None, reasoning=None, usage={}, duration_s=0.0,
                        created_at=_now())
        prompt = build_prompt(self.dataset.template, problem, step.index,
                              [c or '' for c in prior], self.dataset.with_bg)
        request = GenerationRequest(problem=problem, step=step, prompt=prompt,
                                    with_bg=self.dataset.with_bg, split=self.dataset.split)
        start = time.monotonic()
        try:
            gen = await self.model.agenerate(request)
        except UserFacingError:
            raise
        except Exception as exc:  # one step's failure must not stop the others
            from ..models.base import Generation
            gen = Generation(error=f'{type(exc).__name__}: {exc}')
        duration = time.monotonic() - start
        code = None if gen.error else extract_code(gen.text)
        return dict(base, prompt=prompt, response=gen.text, code=code, program=gen.program,
                    error=gen.error, finish_reason=gen.finish_reason, reasoning=gen.reasoning,
                    usage=gen.usage, duration_s=round(duration, 3), created_at=_now())


def _now():
    return datetime.now(timezone.utc).isoformat(timespec='seconds')
