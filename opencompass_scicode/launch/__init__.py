"""From a checked config to a finished run: plan it (plan.py), then run it (execute.py).

The face (cli.py) parses the command line, loads and checks the config, and prints; what
happens in between is here, in the planning layer, with the partitioners and runners it uses.
"""
from .execute import Outcome, run_plan
from .plan import RUN_MODES, LaunchOptions, RunPlan, plan_run, prepare_data_dirs
from .regrade import regrade

__all__ = ['RUN_MODES', 'LaunchOptions', 'Outcome', 'RunPlan', 'plan_run', 'prepare_data_dirs', 'regrade',
           'run_plan']
