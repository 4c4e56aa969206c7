"""Published-vs-predicted rows of the reliability checks, written to test-artifacts/."""

from __future__ import annotations

import json
from pathlib import Path

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "reliability"


def write_rows(source: str, rows: list[dict[str, float | str]]) -> None:
    """Write one source's rows (quantity, published, predicted, ratio) as JSON."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for row in rows:
        row["ratio"] = float(row["predicted"]) / float(row["published"])
    (ARTIFACTS / f"{source}.json").write_text(json.dumps(rows, indent=1))
