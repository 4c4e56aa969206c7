"""Shared output helpers for subcommands: JSON to stdout, rich tables for people."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
from rich.console import Console

console = Console()
err_console = Console(stderr=True)


def plain(value: Any) -> Any:
    """``value`` as JSON-ready Python: numpy scalars as numbers, NaN and inf as None."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.generic):
        return plain(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def print_json(data: Any, kind: str | None = None) -> None:
    """Print one JSON document (NaN and inf become null) to stdout; with ``kind``, an object
    that starts with ``"format": "scalewall-<kind>/1"``."""
    if kind is not None:
        data = {"format": f"scalewall-{kind}/{JSON_VERSION}", **data}
    print(json.dumps(plain(data), indent=2, sort_keys=False))


JSON_VERSION = 1
"""Version of every ``--json`` layout: it changes when a key is renamed or removed."""
