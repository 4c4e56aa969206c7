"""Every ``--json`` document says what it is: ``"format": "scalewall-<kind>/1"`` first."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scalewall.validation.runs import frontier_runs_path

CASES = {
    "catalog": ["catalog"],
    "catalog-entry": ["catalog", "models", "llama3-8b"],
    "cost": ["cost"],
    "prices": ["cost", "--list-prices"],
    "search": ["search", "--model", "llama3-8b", "--gpus", "64"],
    "wall": ["wall", "--model", "llama3-8b", "--sizes", "64", "--workers", "1", "--fresh"],
    "goodput": ["goodput", "--model", "llama3-8b", "--gpus", "64", "--tp", "2", "--pp", "2"],
    "simulate": ["simulate", "--trace", "synthetic:Seren:30"],
    "fgd": ["fgd", "--seeds", "1", "--policies", "random", "--max-demand", "0.05", "--at", "0.05"],
    "report": ["report", "--model", "llama3-8b", "--cluster", "h100-sxm-80gb:64", "-o", "r.html"],
    "estimate": ["estimate", "--model", "llama3-8b", "--gpus", "64", "--gpu", "h100-sxm-80gb"],
    "validation": ["validate", "--cases", "SMALL_RUNS"],
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_json_names_its_format(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Callable[..., Any]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    args = list(CASES[kind])
    if "SMALL_RUNS" in args:
        runs = json.loads(frontier_runs_path().read_text())
        small = tmp_path / "runs.json"
        small.write_text(json.dumps({"format": runs["format"], "cases": runs["cases"][:2]}))
        args[args.index("SMALL_RUNS")] = str(small)
    result = run_cli(*args, "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert next(iter(doc.items())) == ("format", f"scalewall-{kind}/1")
