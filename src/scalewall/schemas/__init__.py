"""JSON Schemas (draft 2020-12) of every ``--json`` document and of the input files.

An output kind is the ``<kind>`` of the document's ``"format": "scalewall-<kind>/1"``; the input
kinds are ``runs`` (``scalewall-runs/1``, read by ``validate`` and ``fit``) and ``scenario`` (the
report's TOML, as the object it parses to). ``scalewall schema KIND`` prints one.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from scalewall.errors import SpecError

OUTPUT_KINDS: dict[str, str] = {
    "estimate": "scalewall estimate --json",
    "search": "scalewall search --json",
    "wall": "scalewall wall --json",
    "goodput": "scalewall goodput --json",
    "cost": "scalewall cost --json",
    "prices": "scalewall cost --list-prices --json",
    "report": "scalewall report --json",
    "validation": "scalewall validate --json",
    "cross-validation": "scalewall validate --cv source --json",
    "calibration-fit": "scalewall calibrate --json",
    "fit": "scalewall fit --json",
    "simulate": "scalewall simulate --json",
    "fgd": "scalewall fgd --json",
    "explore": "scalewall explore --json",
    "catalog": "scalewall catalog --json",
    "catalog-entry": "scalewall catalog KIND ID --json",
}
"""Output kind: the command that prints it."""
INPUT_KINDS: dict[str, str] = {
    "runs": "published-runs JSON file (scalewall validate --cases, scalewall fit)",
    "scenario": "report scenario TOML (scalewall report --scenario)",
}
"""Input kind: the file it describes."""
KINDS: dict[str, str] = {**OUTPUT_KINDS, **INPUT_KINDS}


def schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of ``kind`` (one of ``KINDS``) as a dict."""
    if kind not in KINDS:
        raise SpecError("kind", kind, f"one of {', '.join(KINDS)}")
    text = (resources.files(__name__) / f"{kind}.schema.json").read_text()
    loaded: dict[str, Any] = json.loads(text)
    return loaded


__all__ = ["INPUT_KINDS", "KINDS", "OUTPUT_KINDS", "schema"]
