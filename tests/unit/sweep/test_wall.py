"""The scale-wall sweep: efficiency, knee and cause, batch rule, results file, executors, plot."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from scalewall.errors import SpecError
from scalewall.sweep import (
    LOSS_PARTS,
    ProcessExecutor,
    SerialExecutor,
    WallResult,
    batch_schedule,
    find_knee,
    wall,
    with_efficiency,
)
from scalewall.sweep.plot import write_wall_html


def _row(gpus: int, tokens_per_s: float, bubble: float, dp: int) -> dict[str, Any]:
    losses = dict.fromkeys(LOSS_PARTS, 0.0)
    losses["pipeline_bubble"] = bubble
    losses["compute_efficiency"] = 0.5 - bubble
    return {
        "gpus": gpus,
        "found": True,
        "tokens_per_s": tokens_per_s,
        "mfu": 0.5,
        "global_batch": 64,
        "plan": {"dp": dp},
        "loss_fracs": losses,
    }


def test_knee_is_the_first_size_below_threshold_with_its_cause() -> None:
    rows = with_efficiency(
        [
            _row(8, 800.0, 0.0, 1),
            _row(16, 1600.0, 0.0, 2),  # marginal 1.0
            _row(32, 2800.0, 0.1, 4),  # marginal 0.75
            _row(64, 3600.0, 0.3, 8),  # marginal 0.25: the knee, the bubble grew
        ]
    )
    assert [r["scaling_efficiency_frac"] for r in rows] == pytest.approx([1.0, 1.0, 0.875, 0.5625])
    assert math.isnan(rows[0]["marginal_efficiency_frac"])
    assert rows[2]["marginal_efficiency_frac"] == pytest.approx(0.75)
    knee = find_knee(rows, 0.5)
    assert knee is not None and knee.gpus == 64 and knee.previous_gpus == 32
    assert knee.cause == "pipeline_bubble"
    assert knee.marginal_efficiency_frac == pytest.approx(0.25)
    assert find_knee(rows, 0.2) is None


def test_sizes_without_a_plan_are_skipped_by_the_efficiency() -> None:
    rows = with_efficiency(
        [{"gpus": 8, "found": False, "reason": "no plan fits"}, _row(16, 1600.0, 0.0, 2)]
    )
    assert rows[1]["scaling_efficiency_frac"] == 1.0


def test_batch_rule() -> None:
    assert batch_schedule([8, 16, 32], 64, None) == {8: 64, 16: 64, 32: 64}
    assert batch_schedule([8, 16, 32], 64, 96) == {8: 64, 16: 96, 32: 96}
    with pytest.raises(SpecError, match="max_global_batch"):
        batch_schedule([8], 64, 32)


@pytest.fixture(scope="module")
def small_wall(tmp_path_factory: pytest.TempPathFactory) -> tuple[WallResult, Path]:
    path = tmp_path_factory.mktemp("wall") / "rows.jsonl"
    result = wall(
        "llama3-8b",
        gpu="h100-sxm-80gb",
        sizes=[8, 32, 128],
        global_batch=128,
        seq_len=4096,
        executor=SerialExecutor(),
        results_path=path,
    )
    return result, path


def test_rows_have_plans_and_losses_that_add_up(small_wall: tuple[WallResult, Path]) -> None:
    result, _ = small_wall
    assert [r["gpus"] for r in result.rows] == [8, 32, 128]
    for row in result.rows:
        assert row["found"], row["reason"]
        losses = [v for k, v in row["loss_fracs"].items() if k != "goodput"]
        # MFU plus the named losses is the whole step.
        assert row["mfu"] + sum(losses) == pytest.approx(1.0, rel=1e-9)
        assert math.isnan(row["goodput_frac"])
        assert row["time_to_train_s"] == pytest.approx(15e12 / row["tokens_per_s"])
        assert set(row["comm_tier"]) == {
            "tp_comm",
            "cp_comm",
            "ep_comm",
            "dp_comm",
            "fsdp_comm",
            "pp_comm",
        }
    assert result.rows[0]["scaling_efficiency_frac"] == 1.0


def test_rows_are_written_and_reused(small_wall: tuple[WallResult, Path]) -> None:
    result, path = small_wall
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert sorted(x["row"]["gpus"] for x in lines) == [8, 32, 128]
    seen: list[int] = []
    again = wall(
        "llama3-8b",
        gpu="h100-sxm-80gb",
        sizes=[8, 32, 128, 256],
        global_batch=128,
        seq_len=4096,
        executor=SerialExecutor(),
        results_path=path,
        on_row=lambda row: seen.append(row["gpus"]),
    )
    assert again.reused_rows == 3
    assert sorted(seen) == [8, 32, 128, 256]
    assert again.rows[1]["tokens_per_s"] == result.rows[1]["tokens_per_s"]
    # A changed argument (here the sequence length) does not reuse rows.
    other = wall(
        "llama3-8b",
        gpu="h100-sxm-80gb",
        sizes=[8],
        global_batch=128,
        seq_len=2048,
        executor=SerialExecutor(),
        results_path=path,
    )
    assert other.reused_rows == 0


def test_to_pandas_is_one_row_per_size(small_wall: tuple[WallResult, Path]) -> None:
    frame = small_wall[0].to_pandas()
    assert list(frame["gpus"]) == [8, 32, 128]
    for column in (
        "plan_tp",
        "mfu",
        "loss_pipeline_bubble_frac",
        "scaling_efficiency_frac",
        "marginal_efficiency_frac",
        "time_to_train_s",
    ):
        assert column in frame.columns


def test_process_executor_gives_the_serial_rows(tmp_path: Path) -> None:
    kw: dict[str, Any] = dict(gpu="h100-sxm-80gb", sizes=[8, 16], global_batch=64, seq_len=4096)
    serial = wall("llama3-8b", executor=SerialExecutor(), results_path=tmp_path / "a.jsonl", **kw)
    procs = wall(
        "llama3-8b",
        executor=ProcessExecutor(max_workers=2),
        results_path=tmp_path / "b.jsonl",
        **kw,
    )
    for a, b in zip(serial.rows, procs.rows, strict=True):
        assert a["plan"] == b["plan"] and a["tokens_per_s"] == b["tokens_per_s"]


def test_goodput_slot_is_filled_when_asked(tmp_path: Path) -> None:
    result = wall(
        "llama3-8b",
        gpu="h100-sxm-80gb",
        sizes=[64],
        global_batch=128,
        seq_len=4096,
        goodput=True,
        executor=SerialExecutor(),
        results_path=tmp_path / "g.jsonl",
    )
    row = result.rows[0]
    assert 0.0 < row["goodput_frac"] <= 1.0
    assert row["loss_fracs"]["goodput"] == pytest.approx(1.0 - row["goodput_frac"])


def test_a_size_with_no_plan_is_a_row_with_a_reason(tmp_path: Path) -> None:
    result = wall(
        "llama3-70b",
        gpu="h100-sxm-80gb",
        sizes=[8, 64],
        global_batch=64,
        seq_len=4096,
        executor=SerialExecutor(),
        results_path=tmp_path / "n.jsonl",
    )
    assert not result.rows[0]["found"] and "no plan fits" in result.rows[0]["reason"]
    assert result.rows[1]["found"]


def test_plot_marks_the_knee(tmp_path: Path) -> None:
    rows = with_efficiency([_row(8, 800.0, 0.0, 1), _row(16, 1000.0, 0.2, 2)])
    result = WallResult(
        model="m",
        cluster="c",
        rows=tuple(rows),
        knee=find_knee(rows, 0.5),
        knee_threshold=0.5,
        token_budget=1e12,
    )
    path = tmp_path / "wall.html"
    write_wall_html(result, path)
    text = path.read_text()
    assert "knee: pipeline_bubble" in text and "plotly" in text


def test_hash_collisions_are_attributed_where_traffic_crosses_hashed_tiers() -> None:
    """MegaScale's 175B plan (tp 8, pp 8) on its RoCE Clos: at 256 GPUs everything sits under
    one leaf (no hashed tier, no loss); at 12,288 the pipeline's neighbours are 1,536 GPUs apart
    and cross the hashed core on every transfer, while the DP ring, 32 ranks per leaf, leaves
    each leaf once and loads the spine too lightly to collide."""
    from types import SimpleNamespace

    from scalewall import catalog
    from scalewall.perf.assumptions import Efficiency
    from scalewall.plan.plan import ParallelPlan
    from scalewall.stack import preset
    from scalewall.sweep.wall import hash_collision_s
    from scalewall.validation.runs import case_cluster, read_runs, scaling_runs_path

    config = SimpleNamespace(
        model=catalog.model("gpt3-175b"), stack=preset("megatron-lm-2023"), efficiency=Efficiency()
    )
    cases = {c.hardware["gpus"]: c for c in read_runs(scaling_runs_path())}
    from scalewall.api import estimate

    for gpus, expect_loss in ((256, False), (12288, True)):
        cluster = case_cluster(cases[gpus].hardware)
        plan = ParallelPlan(
            tp=8, pp=8, dp=gpus // 64, micro_batch=1, global_batch=6144, seq_len=2048
        )
        breakdown = estimate(config.model, cluster, plan, stack=config.stack).breakdown
        lost = hash_collision_s(config, cluster, plan, breakdown)  # type: ignore[arg-type]
        assert lost["dp_comm"] == 0.0
        assert (lost["pp_comm"] > 0.0) is expect_loss
        assert sum(lost.values()) <= sum(v for k, v in breakdown.items() if k.endswith("_comm"))
