"""The same question through the CLI and the Python API gets the same answer: each function's
``to_dict()`` equals its command's ``--json`` document (timings and cache paths aside)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import scalewall
from scalewall.cli.output import plain
from scalewall.sweep import SerialExecutor

TIMINGS = {"elapsed_s", "search_s", "results_path", "reused_rows"}


def _same(api: dict[str, Any], cli: dict[str, Any]) -> None:
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in TIMINGS}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    assert strip(json.loads(json.dumps(plain(api)))) == strip(cli)


def test_goodput(run_cli: Callable[..., Any]) -> None:
    args = ["--model", "llama3-8b", "--gpu", "h100-sxm-80gb", "--gpus", "64"]
    result = run_cli("goodput", *args, "--tp", "2", "--pp", "2", "--mc-runs", "200", "--json")
    assert result.returncode == 0, result.stderr
    run = scalewall.goodput(
        "llama3-8b",
        gpu="h100-sxm-80gb",
        gpus=64,
        plan={"tp": 2, "pp": 2, "global_batch": 512, "seq_len": 8192},
        monte_carlo_runs=200,
    )
    _same(run.to_dict(), json.loads(result.stdout))


def test_cost(run_cli: Callable[..., Any]) -> None:
    result = run_cli("cost", "--model", "llama3-70b", "--mfu", "0.4", "--tokens", "1e12", "--json")
    assert result.returncode == 0, result.stderr
    run = scalewall.cost(model="llama3-70b", mfu=0.4, tokens=1e12)
    _same(run.to_dict(), json.loads(result.stdout))


def test_wall(run_cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    args = ["--model", "llama3-8b", "--gpu", "h100-sxm-80gb", "--sizes", "64,128"]
    result = run_cli("wall", *args, "--workers", "1", "--fresh", "--json")
    assert result.returncode == 0, result.stderr
    curve = scalewall.wall(
        "llama3-8b", gpu="h100-sxm-80gb", sizes=[64, 128], executor=SerialExecutor(), reuse=False
    )
    _same(curve.to_dict(), json.loads(result.stdout))
