"""The knobs a protocol sets: what each one is, which config key holds it, and whether changing
it needs new answers from the model.

A protocol (table.py) gives every knob a value. A dataset entry holds the knobs at their usual
places (a dataset key, an `infer_cfg` key or an `eval_cfg.evaluator` key), so that everything
which reads a dataset's settings reads the protocol's without knowing protocols exist.

`phase`: 'answers' when the knob changes what the model is asked or how it answers (the prompt,
the request, which steps are asked), so a changed value needs new answers; 'scoring' when it
changes only how saved answers are scored, so a finished run can be scored again with another
value and no request to any model.
"""
from dataclasses import dataclass

# A protocol that leaves a knob to the user (the official harness runs either split, and
# reports both background settings) says so with this value: any choice keeps its name.
ANY = '*'
# What such a knob is where the entry does not set it either: the dataset's own defaults
# (datasets/scicode.py; that module reads protocols, so they are not imported from there).
UNSET = {'split': 'validation', 'with_bg': False}


@dataclass(frozen=True)
class Knob:
    name: str
    section: str        # 'dataset' (a key of the entry), 'infer_cfg' or 'evaluator' (eval_cfg.evaluator)
    phase: str          # 'answers' or 'scoring'
    what: str


KNOBS = (
    Knob('split', 'dataset', 'answers', 'split and so the step set (validation 15/50, test 65/288, all 80/338)'),
    Knob('targets', 'dataset', 'answers', 'official targets and problems, or SciCode-Verified\'s corrected ones '
                                          '(on the test split its problems change the prompts)'),
    Knob('with_bg', 'dataset', 'answers', 'scientific background in the prompt'),
    Knob('prefilled_mode', 'dataset', 'answers', 'code of the prefilled steps 13.6, 62.1, 76.3 in the chain of '
                                                 'later steps (prompts and programs)'),
    Knob('mode', 'infer_cfg', 'answers', 'prompt form: one cumulative prompt per step (naive), a multi-turn '
                                         'chat, or tool use'),
    Knob('max_out_len', 'infer_cfg', 'answers', 'token limit of an answer (None: none sent, the model\'s own)'),
    Knob('temperature', 'infer_cfg', 'answers', 'temperature of models that set none (None: none sent)'),
    Knob('n', 'infer_cfg', 'answers', 'samples per problem'),
    Knob('tool_use_max_loops', 'infer_cfg', 'answers', 'tool calls per step (tool_use only)'),
    Knob('code_timeout_seconds', 'infer_cfg', 'answers', 'seconds per snippet the tool runs (tool_use only)'),
    Knob('extraction', 'infer_cfg', 'scoring', 'how code is taken from an answer, and whether its imports are '
                                               'removed'),
    Knob('prefilled_steps', 'evaluator', 'scoring', 'the prefilled steps in the counts: skipped (out of both), '
                                                    'failed (in the denominator, never passed) or scored'),
    Knob('timeout', 'evaluator', 'scoring', 'seconds per step program'),
    Knob('memory_limit_mb', 'evaluator', 'scoring', 'address space per step program'),
    Knob('simps_shim', 'evaluator', 'scoring', 'scipy.integrate.simps provided where SciPy lacks it'),
    Knob('environments', 'evaluator', 'scoring', 'the library environments each step is scored in'),
    Knob('environment_rule', 'evaluator', 'scoring', 'how their verdicts combine: any, all, or one environment'),
)
BY_NAME = {knob.name: knob for knob in KNOBS}
# The knobs that only matter in tool_use mode: other modes leave them out of a record.
TOOL_ONLY = ('tool_use_max_loops', 'code_timeout_seconds')
