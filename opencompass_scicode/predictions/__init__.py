from .store import PredictionStore, fingerprint  # noqa: F401
