"""Shared reading of an out-of-sample runs file for its tests."""

from __future__ import annotations

from pathlib import Path

from scalewall.validation.harness import CasePrediction, predict_cases
from scalewall.validation.runs import read_runs


def predict_file(path: Path) -> dict[str, CasePrediction]:
    """Every case of a runs file predicted as ``validate`` does (series chosen together), by id;
    a case the model cannot evaluate fails the calling test."""
    out = predict_cases(read_runs(path))
    assert not any(isinstance(p, Exception) for p in out), [
        p for p in out if isinstance(p, Exception)
    ]
    return {p.case.id: p for p in out if isinstance(p, CasePrediction)}
