"""``scalewall simulate`` with failures: restart cost and goodput in the --json document."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

FAILING = ("--trace", "synthetic:Seren:200:1", "--nodes", "8", "--failures")
FAILING += ("--failure-rate", "5000", "--json")


Check = Callable[[Any, str], None]


def _summary(run_cli: Callable[..., Any], check_schema: Check, *extra: str) -> dict[str, Any]:
    result = run_cli("simulate", *FAILING, *extra)
    assert result.returncode == 0, result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    check_schema(doc, "simulate")
    return doc


def test_restart_cost_and_goodput_in_the_summary(
    run_cli: Callable[..., Any], check_schema: Check
) -> None:
    charged = _summary(run_cli, check_schema)
    assert charged["node_failures"] > 0 and charged["gpu_hours_restart"] > 0
    wasted = charged["gpu_hours_lost_failures"] + charged["gpu_hours_lost_preemption"]
    metered = sum(charged["gpu_hours_metered"].values())
    expected = 1 - (wasted + charged["gpu_hours_restart"]) / metered
    assert abs(charged["goodput_frac"] - expected) < 1e-9
    free = _summary(run_cli, check_schema, "--no-restart-cost")
    assert free["gpu_hours_restart"] == 0.0
    assert free["goodput_frac"] > charged["goodput_frac"]
