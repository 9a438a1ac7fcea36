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
import dataclasses

from ..errors import ConfigError

RULES = ('any', 'all')


def check_rule(rule, environments):
    if rule in RULES or rule in environments:
        return rule
    raise ConfigError(f'unknown environment_rule {rule!r}', key='environment_rule',
                      fix=f"use 'any' (pass in one environment suffices), 'all', or one of the environments "
                          f"scored in: {', '.join(environments)}")


def verdict_of(record):
    """What a record of one environment keeps of it beside the deciding one."""
    out = {'status': record.status, 'category': record.category}
    if not record.passed and record.message:
        out['message'] = record.message[:300]
    return out


def combine(by_environment, rule):
    """The step's record from {environment: StepRecord} (in the order scored) under `rule`."""
    names = list(by_environment)
    if rule == 'any':
        chosen = next((n for n in names if by_environment[n].passed), names[0])
    elif rule == 'all':
        chosen = next((n for n in names if not by_environment[n].passed), names[0])
    else:
        chosen = rule
    verdicts = {name: verdict_of(record) for name, record in by_environment.items()}
    return dataclasses.replace(by_environment[chosen], environment_verdicts=verdicts)

