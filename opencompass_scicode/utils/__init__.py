"""Small helpers every layer may use: run-directory layout, progress files, locks, secrets."""
__all__ = []
