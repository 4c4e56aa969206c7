"""Terminal output: tables fitted to 80 columns (or COLUMNS) when piped, never cells squeezed to
an ellipsis, --wide for every column; one plan text (with EP and precision) in every view."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from scalewall.cli.output import column, fitting_columns, print_table
from scalewall.plan import ParallelPlan, format_plan

ELLIPSIS = "\u2026"
MOE_FP8 = ParallelPlan(tp=2, pp=1, dp=4, ep=4, etp=1, precision="fp8", global_batch=64)


def _cells(out: str) -> list[str]:
    """Every table cell of ``out`` (columns split on runs of two or more spaces)."""
    return [c for line in out.splitlines() for c in re.split(r"\s{2,}", line.strip()) if c]


def _assert_readable(out: str, width: int = 80) -> None:
    assert ELLIPSIS not in _cells(out), out
    assert all(len(line) <= width for line in out.splitlines() if "\u2500" in line), out


def test_narrow_console_drops_low_priority_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    columns = [column("size", right=True)] + [
        column(f"part_number_{k}", k + 1, right=True) for k in range(12)
    ]
    rows = [[str(n), *(f"{k * n / 7:.1%}" for k in range(12))] for n in (8, 64, 1024)]
    print_table(columns, rows)
    out = capsys.readouterr().out
    _assert_readable(out)
    shown = fitting_columns(columns, rows, 80)
    assert 1 < len(shown) < len(columns)
    # The most important columns are the ones kept.
    assert shown == list(range(len(shown)))
    assert f"{len(columns) - len(shown)} columns hidden; --wide shows all" in out
    print_table(columns, rows, wide=True)
    wide = capsys.readouterr().out
    assert "hidden" not in wide and ELLIPSIS not in wide
    monkeypatch.setenv("COLUMNS", "400")  # room for every header on one line
    print_table(columns, rows, wide=True)
    wide = capsys.readouterr().out
    assert all(c.header in wide for c in columns)


def test_columns_env_widens_the_table(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    columns = [column("a")] + [column(f"col_{k:02d}", k + 1) for k in range(10)]
    rows = [["x" * 10, *("1234567" for _ in range(10))]]
    monkeypatch.setenv("COLUMNS", "200")
    print_table(columns, rows)
    assert "hidden" not in capsys.readouterr().out
    monkeypatch.setenv("COLUMNS", "40")
    print_table(columns, rows)
    assert "hidden; --wide shows all" in capsys.readouterr().out


def test_format_plan_long_and_short_carry_ep_and_precision() -> None:
    long, short = format_plan(MOE_FP8), format_plan(MOE_FP8, short=True)
    assert "ep=4" in long and "fp8" in long and "etp=1" in long
    assert "ep4" in short and short.endswith("fp8")
    # A --json plan object reads the same as the plan.
    as_dict = {k: getattr(MOE_FP8, k) for k in MOE_FP8.__dataclass_fields__}
    assert format_plan(as_dict) == long
    assert "cp2-a2a" in format_plan(ParallelPlan(cp=2, cp_mode="a2a"), short=True)


MOE_ARGS = ("-m", "mixtral-8x7b", "--gpu", "h100-sxm-80gb", "-n", "8")


def test_every_view_prints_ep_and_precision(
    run_cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    plan = ("--tp", "2", "--pp", "1", "--ep", "4", "--precision", "fp8", "--global-batch", "64")
    est = run_cli("estimate", *MOE_ARGS, *plan)
    assert est.returncode == 0, est.stderr
    assert "ep=4" in est.stdout and "fp8" in est.stdout
    good = run_cli("goodput", *MOE_ARGS, *plan, "--mc-runs", "0")
    assert good.returncode == 0, good.stderr
    assert "ep=4" in good.stdout and "fp8" in good.stdout
    _assert_readable(good.stdout)

    from scalewall.cli.wall_cmd import print_wall
    from scalewall.report.content import plan_text

    plan_dict = {k: getattr(MOE_FP8, k) for k in MOE_FP8.__dataclass_fields__}
    row = {"plan": plan_dict}
    assert "ep4" in plan_text(row) and "fp8" in plan_text(row)
    modules = {"plan": plan_dict, "recompute_modules": ["moe_act", "layernorm"]}
    assert plan_text(modules) == plan_text(row) + " +moe_act+layernorm"
    assert "ep4" in format_plan(plan_dict, short=True)
    assert print_wall is not None  # the wall table writes plans with the same function


def test_search_at_80_columns_groups_equivalents(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from scalewall.cli.search_cmd import print_search
    from scalewall.search import SearchSpace, search

    monkeypatch.setenv("COLUMNS", "80")
    result = search(
        "mixtral-8x7b",
        gpu="h100-sxm-80gb",
        gpus=16,
        global_batch=32,
        seq_len=4096,
        space=SearchSpace(precisions=("fp8",)),
        top_k=3,
    )
    print_search(result)
    out = capsys.readouterr().out
    _assert_readable(out)
    assert "tokens/s" in out and "fp8" in out and " ep" in out
    doc = result.to_dict()
    numbers = [
        (r["step_time_s"], r["memory_total_bytes"], tuple(r["breakdown_s"].values()))
        for r in doc["top"]
    ]
    assert len(set(numbers)) == len(numbers)  # no two rows with identical results
    assert any(r["equivalents"] for r in doc["top"])
    for r in doc["top"]:
        for knobs in r["equivalents"]:
            assert knobs and all(r["plan"][k] != v for k, v in knobs.items())
        if r["equivalents"]:
            assert f"x{len(r['equivalents']) + 1} equivalent" in out
    print_search(result, wide=True)
    wide = capsys.readouterr().out
    assert "GiB" in wide and "columns hidden" not in wide
