"""A step scored in several library environments: one verdict per environment, and the rule that
makes them the step's verdict.

- 'any' (SciCode-Verified's rule): the step passes if it passes in any environment; its record
  is that of the first environment (in the order given) where it passed, else of the first;
- 'all': it passes only if it passes in every one; its record is that of the first where it did
  not, else of the first;
- an environment's name: that environment's verdict decides.

Whatever the rule, the record keeps each environment's verdict (`environment_verdicts`), so a
report can show the steps whose verdicts differ between environments.
"""

from typing import Any

from ..errors import ConfigError
from ..results import StepRecord

RULES = ('any', 'all')


def check_rule(rule, environments) -> str:
    """`rule`, checked against the scoring `environments` (ConfigError when it cannot apply to
    them)."""
    if rule in RULES or rule in environments:
        return rule
    # not an "unknown" value: which names are allowed depends on `environments`
    raise ConfigError(f'environment_rule {rule!r} is neither any, all nor an environment scored in',
                      key='environment_rule',
                      fix=f"use 'any' (pass in one environment suffices), 'all', or one of the environments "
                          f"scored in: {', '.join(environments)}")


def verdict_of(record) -> dict[str, Any]:
    """What a record of one environment keeps of it beside the deciding one."""
    out = {'status': record.status, 'category': record.category}
    if not record.passed and record.message:
        out['message'] = record.message[:300]
    return out


def combine(by_environment, rule) -> StepRecord:
    """The step's record from {environment: StepRecord} (in the order scored) under `rule`."""
    names = list(by_environment)
    if rule == 'any':
        chosen = next((n for n in names if by_environment[n].passed), names[0])
    elif rule == 'all':
        chosen = next((n for n in names if not by_environment[n].passed), names[0])
    else:
        chosen = rule
    verdicts = {name: verdict_of(record) for name, record in by_environment.items()}
    return by_environment[chosen].replace(environment_verdicts=verdicts)

