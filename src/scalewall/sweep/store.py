"""The results file of a sweep: one JSON line per finished size, written as each completes.

Each line carries the key of the arguments that produced it (model, cluster design, stack,
assumptions, search space, batch, the size, and a fingerprint of the model code), so a rerun with
the same arguments reuses the finished rows and recomputes only what is missing or stale.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from scalewall import __version__

CACHE_ENV = "SCALEWALL_CACHE_DIR"
"""Environment variable naming the directory of default results files."""


def default_results_dir() -> Path:
    """``$SCALEWALL_CACHE_DIR``, else ``$XDG_CACHE_HOME/scalewall/wall``, else ``~/.cache/...``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "scalewall" / "wall"


@cache
def code_fingerprint() -> str:
    """A hash of the step model's, the search's and the goodput model's source: a changed
    model invalidates rows."""
    digest = hashlib.sha256(__version__.encode())
    for package in (
        "scalewall.perf",
        "scalewall.search",
        "scalewall.plan",
        "scalewall.reliability",
    ):
        root = resources.files(package)
        for entry in sorted(root.iterdir(), key=lambda e: e.name):
            if entry.name.endswith(".py"):
                digest.update(entry.read_bytes())
    return digest.hexdigest()


def key_of(payload: Any) -> str:
    """A stable hash of a JSON-ready payload."""
    text = json.dumps(payload, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def read_rows(path: Path) -> dict[str, dict[str, Any]]:
    """Rows by key; lines that do not parse (a run cut off mid-write) are skipped."""
    rows: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return rows
    for line in path.read_text().splitlines():
        try:
            entry = json.loads(line)
            rows[str(entry["key"])] = dict(entry["row"])
        except (json.JSONDecodeError, KeyError, TypeError):
            continue
    return rows


def append_row(path: Path, key: str, row: dict[str, Any]) -> None:
    """Append one finished row and flush it to disk."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        handle.write(json.dumps({"key": key, "row": row}, allow_nan=True) + "\n")
        handle.flush()
