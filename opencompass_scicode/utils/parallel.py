"""How many evaluation tasks run side by side: the local runner puts their number in each task's
environment (runners/local.py), and an evaluation task divides its CPUs by it
(evaluation/evaluator.py, default_workers)."""

PARALLEL_ENV = 'OPENCOMPASS_SCICODE_PARALLEL_EVALS'
