"""Test-process stand-in for the official `scicode` package (see ../README.md)."""

__all__ = []
