"""Inference for one model over all its datasets, in one process.

One process per model keeps the model's concurrency and rate limits true for
the whole run, however many datasets it has. With early evaluation on, each
problem is scored as soon as its last step is answered. A shard (`shard` in
the task file) answers some problems only and appends to its part file, seeing
the run's earlier predictions before it; the merge task (tasks/merge.py)
brings the parts together. A model with `server=` gets its server started
here, before the first request, and stopped as soon as inference ends,
however it ends (models/server.py).
"""
import contextlib
from pathlib import Path

from ..inference.engine import InferPart, Inferencer, infer_settings
from ..inference.settings import InferConfig
from ..models.server import ModelServer
from ..predictions import PredictionStore, record_key
from ..registry import build_dataset, build_evaluator, build_model
from ..utils.fingerprint import fingerprint
from ..utils.progress import ProgressFile
from ..utils.workdir import write_json_atomic
from .base import BaseTask, second_to_first
from .contract import CAUSE, EXIT_OK, EXIT_STEP_ERRORS


class InferTask(BaseTask):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.model_cfg = dict(cfg.model)
        self.model_abbr = self.model_cfg['abbr']
        self.dataset_cfgs = [dict(d) for d in cfg.datasets]
        self.shard = cfg.shard

    def store(self, dataset_abbr) -> PredictionStore:
        """The predictions store of `dataset_abbr`: this shard's part file, or the final file."""
        final = self.run_dir.predictions_path(self.model_abbr, dataset_abbr)
        if self.shard:
            return PredictionStore(self.run_dir.part_path(final, self.shard), base=final)
        return PredictionStore(final)

    def _parts(self):
        parts = []
        for cfg in self.dataset_cfgs:
            parts.append(InferPart(dataset=build_dataset(cfg), store=self.store(cfg['abbr']),
                                   infer_cfg=InferConfig.of(cfg.get('infer_cfg'))))
        return parts

    def is_complete(self) -> bool:
        """Every scored step of every dataset has an error-free record made with today's settings."""
        model = build_model(self.model_cfg)
        for part in self._parts():
            settings_fp = fingerprint(infer_settings(model, part.dataset, part.infer_cfg))
            records = part.store.load()
            for problem in part.dataset.problems:
                for step in problem.scored_steps:
                    for sample in range(part.infer_cfg.n):
                        rec = records.get(record_key(step.step_id, sample))
                        if rec is None or rec.error or rec.settings_fp != settings_fp:
                            return False
        return True

    def run(self) -> int:
        model = build_model(self.model_cfg)
        parts = self._parts()
        for part in parts:
            model.check_dataset(part.dataset)
        answers = {p.dataset.abbr: p.dataset.scored_step_count * p.infer_cfg.n for p in parts}
        progress = ProgressFile(self.progress_path, self.name, sum(answers.values()), parts=answers)
        code_runner = None
        tool_parts = [p for p in parts if p.infer_cfg.mode == 'tool_use']
        if tool_parts:
            from ..inference.code_interpreter import CodeInterpreter
            # Each call carries its own dataset's code timeout (modes.tool_use); this bounds the pool.
            code_runner = CodeInterpreter(timeout=max(p.infer_cfg.code_timeout_seconds for p in tool_parts))

        def on_progress(part):
            progress.update_part(part.dataset.abbr, done=part.stats.done, errors=part.stats.errors)

        eager = self._eager_evaluator(parts, progress) if self.cfg.eager_eval else None
        inferencer = Inferencer(model, parts, on_progress=on_progress, code_runner=code_runner,
                                on_problem_done=eager.submit if eager else None,
                                discard_stale=self.cfg.discard_stale)
        try:
            with contextlib.ExitStack() as serving:
                self._start_model_server(model, serving)
                stats = inferencer.run()
        finally:
            if code_runner:
                code_runner.close()
            with second_to_first():
                if eager:
                    eager.finish()
            with second_to_first():
                if not self.shard:          # a shard's usage is counted when the parts are merged
                    write_json_atomic(self.run_dir.usage_path(self.model_abbr),
                                      {p.dataset.abbr: p.store.usage() for p in parts})
        progress.write(force=True)
        errors = 0
        for part, st in zip(parts, stats):
            self.log(f'{part.dataset.abbr}: {st.done}/{st.total} steps ({st.reused} reused), '
                     f'{st.errors} errors -> {part.store.path}')
            if st.errors:
                self.log(f'{part.dataset.abbr}: steps without code: {", ".join(st.error_steps)}')
                if st.cause:        # the line the terminal shows (tasks/contract.py, failure_cause)
                    self.log(f'{CAUSE}{part.dataset.abbr}: {st.errors} of {st.total} steps without an answer; '
                             f'step {st.cause[0]}: {st.cause[1]}')
            errors += st.errors
        return EXIT_STEP_ERRORS if errors else EXIT_OK

    def _start_model_server(self, model, stack):
        """A model naming its own server (`server=`): start it, stopped with `stack`; its URL is the model's."""
        server = getattr(model, 'server', None)
        if server:
            log_path = Path(self.spec.log_path).with_suffix('.server.log')
            started = stack.enter_context(
                ModelServer(**server, log_path=log_path, api_key=model.api_key, log=self.log))
            model.base_url = started.base_url
            model.server_failure = lambda: started.failure

    def _eager_evaluator(self, parts, progress):
        """Scores problems as they finish; the eval tasks read these verdicts back."""
        from ..evaluation.eager import EagerEvaluator
        evaluators = [build_evaluator(cfg) for cfg in self.dataset_cfgs]
        return EagerEvaluator(self.run_dir, list(zip(parts, evaluators)), log=self.log, progress=progress)
