"""scalewall: plan AI training clusters from a hundred to a hundred thousand accelerators."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
