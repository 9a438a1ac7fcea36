"""Inference: the engine that asks a model for every step, generation modes, code extraction."""

# Nothing is re-exported: target regeneration imports `extract` alone and should
# not pay for the engine, the models and the sandbox executors.
__all__ = []
