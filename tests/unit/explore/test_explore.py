"""The exploration without Ray: grid, batch rules, chunk size, dataset written once, resume."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from scalewall.errors import SpecError
from scalewall.explore import (
    BatchRule,
    ExploreSpec,
    build,
    explore,
    load,
    load_spec,
    pareto_frontier,
    points_per_task,
)
from scalewall.sweep import SerialExecutor

SPEC = ExploreSpec(
    models=("megatron-1.7b",),
    gpus=("h100-sxm-80gb",),
    sizes=(8, 12, 16),
    fabrics=("ndr-rail-3tier", "roce400-rail-3tier"),
    batch=("seqs=64", "per-gpu=2"),
    seq_len=2048,
    max_cp=1,
    max_micro_batch=1,
    tp=(1,),
    pp=(1,),
)


def test_grid_is_the_cartesian_product_with_unique_keys() -> None:
    _, points = build(SPEC)
    assert len(points) == 1 * 2 * 3 * 2
    assert len({p.key for p in points}) == len(points)


def test_batch_rules() -> None:
    assert BatchRule.parse("tokens=4096").global_batch(8, 1024) == 4
    assert BatchRule.parse("seqs=64").global_batch(8, 1024) == 64
    assert BatchRule.parse("per-gpu=2").global_batch(8, 1024) == 16
    with pytest.raises(SpecError, match="batch='sequences=3'"):
        BatchRule.parse("sequences=3")


def test_points_per_task_keeps_overhead_under_ten_percent() -> None:
    k = points_per_task(overhead_s=2e-3, point_s=1e-3, points=10**6, workers=2)
    assert 2e-3 / (2e-3 + k * 1e-3) <= 0.1 < 2e-3 / (2e-3 + (k - 1) * 1e-3)
    # Few points: load balance caps the chunk (4 tasks per worker).
    assert points_per_task(overhead_s=1.0, point_s=1e-3, points=80, workers=2) == 10


def test_rows_written_once_and_rerun_resumes(tmp_path: Path) -> None:
    first = explore(SPEC, tmp_path, executor=SerialExecutor(), chunk=5)
    assert first.written == 12 and first.failed == 0
    frame = load(tmp_path)
    assert len(frame) == 12 and frame["point_key"].is_unique
    assert sorted(p.parent.parent.name for p in tmp_path.glob("*/*/part-*.parquet"))[0] == (
        "model=megatron-1.7b"
    )
    # 12 GPUs cannot split 64 sequences with TP = PP = 1: a row with its reason.
    odd = frame[(frame["gpus"] == 12) & (frame["batch_rule"] == "seqs=64")]
    assert not odd["found"].any() and odd["reason"].str.len().min() > 0
    again = explore(SPEC, tmp_path, executor=SerialExecutor(), chunk=3)
    assert (again.skipped, again.written) == (12, 0)
    assert load(tmp_path).equals(frame)
    front = pareto_frontier(frame)
    assert len(front) >= 1 and front["time_to_train_s"].is_monotonic_increasing


def test_cli_bad_batch_rule_is_one_line_exit_2(tmp_path: Path) -> None:
    code = "from scalewall.cli.app import main; main()"
    argv = ["explore", "--out", str(tmp_path / "d"), "--batch", "half"]
    run = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True)
    assert run.returncode == 2
    # One line, before any progress is drawn.
    assert run.stderr == (
        "error: batch='half' is invalid; tokens=N, seqs=N or per-gpu=N (N a positive integer)\n"
    )


def test_stack_overrides_reach_every_point_and_its_key(tmp_path: Path) -> None:
    plain, plain_points = build(SPEC)
    slower = replace(SPEC, stack_set=("tp_comm_overlap_frac=0", "grad_reduce_bytes=2"))
    config, points = build(slower)
    assert (config.stack.tp_comm_overlap_frac, config.stack.grad_reduce_bytes) == (0.0, 2.0)
    assert plain.stack.tp_comm_overlap_frac > 0
    # The overrides are part of what a point's result depends on: no resume across them.
    assert not {p.key for p in points} & {p.key for p in plain_points}
    grid = tmp_path / "grid.toml"
    grid.write_text('models = ["megatron-1.7b"]\nstack_set = ["tp_comm_overlap_frac=0"]\n')
    assert load_spec(grid).stack_set == ("tp_comm_overlap_frac=0",)
    with pytest.raises(SpecError, match="no_such_field"):
        build(replace(SPEC, stack_set=("no_such_field=1",)))


def test_cli_stack_set_unknown_field_is_one_line_exit_2(tmp_path: Path) -> None:
    code = "from scalewall.cli.app import main; main()"
    argv = ["explore", "--out", str(tmp_path / "d"), "--stack-set", "tp_comm_overlap_frac=2"]
    run = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True)
    assert run.returncode == 2
    assert run.stderr == "error: tp_comm_overlap_frac=2.0 is invalid; a fraction between 0 and 1\n"
