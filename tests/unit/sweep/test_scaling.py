"""Published strong-scaling checks: the wall, re-searching the plan at each size, against what
the authors measured. Tolerance: 3 MFU points at each end, as the project's issue asks."""

from __future__ import annotations

from pathlib import Path

import pytest

from scalewall.search import SearchSpace
from scalewall.sweep import SerialExecutor, WallResult, find_knee, wall

MFU_TOLERANCE = 0.03


def _gpt3(path: Path, space: SearchSpace | None) -> WallResult:
    # Megatron-LM README, strong scaling: GPT-3 175B, batch 1,152 sequences of 2,048 tokens,
    # H100, 96 -> 4,608 GPUs, MFU about 47% -> 42%.
    return wall(
        "gpt3-175b",
        gpu="h100-sxm-80gb",
        sizes=[96, 4608],
        global_batch=1152,
        seq_len=2048,
        stack="megatron-core",
        space=space,
        executor=SerialExecutor(),
        results_path=path / "rows.jsonl",
    )


@pytest.fixture(scope="module")
def gpt3(tmp_path_factory: pytest.TempPathFactory) -> WallResult:
    # The plan that ran: the README's model table gives this model TP 8 x PP 6, and both sizes
    # are multiples of those 48 GPUs (96 is the smallest, DP 2). The rest of the plan (micro-batch,
    # virtual stages, recompute, optimizer sharding) is searched at each size.
    space = SearchSpace(tp_values=(8,), pp_values=(6,), cp_values=(1,))
    return _gpt3(tmp_path_factory.mktemp("gpt3"), space)


def test_gpt3_175b_at_96_gpus(gpt3: WallResult) -> None:
    assert gpt3.rows[0]["mfu"] == pytest.approx(0.47, abs=MFU_TOLERANCE)


def test_gpt3_175b_at_4608_gpus(gpt3: WallResult) -> None:
    assert gpt3.rows[1]["mfu"] == pytest.approx(0.42, abs=MFU_TOLERANCE)


def test_gpt3_175b_efficiency_falls(gpt3: WallResult) -> None:
    assert gpt3.rows[1]["mfu"] < gpt3.rows[0]["mfu"]


def test_gpt3_175b_full_search_finds_at_least_the_plan_that_ran(tmp_path: Path) -> None:
    # Over every plan the search may find better than the published TP 8 x PP 6 (the model
    # cannot say whether NVIDIA tried them), never worse than what ran, less the tolerance.
    free = _gpt3(tmp_path, None)
    for searched, published in zip(free.rows, (0.47, 0.42), strict=True):
        assert searched["mfu"] >= published - MFU_TOLERANCE


def _llama(tmp: Path, space: SearchSpace | None) -> WallResult:
    # Llama 3 405B (arXiv 2407.21783, Table 4): 16M tokens per step (2,048 x 8,192), 8,192 ->
    # 16,384 H100 on Meta's RoCE cluster: 43% -> 41% MFU, attributed to the smaller batch per
    # DP group at the larger size.
    return wall(
        "llama3.1-405b",
        "llama3-24k",
        sizes=[8192, 16384],
        global_batch=2048,
        seq_len=8192,
        stack="fsdp-2024",
        space=space,
        executor=SerialExecutor(),
        results_path=tmp / "rows.jsonl",
    )


def test_llama3_405b_mfu_at_both_sizes(tmp_path: Path) -> None:
    # Within the plan family Meta ran (TP 8, PP 16, no CP; the search picks vpp, micro-batch,
    # ZeRO and the uneven stage split), the sweep reproduces the published MFU at both sizes.
    family = SearchSpace(tp_values=(8,), pp_values=(16,), cp_values=(1,))
    result = _llama(tmp_path / "family", family)
    small, large = result.rows
    assert small["mfu"] == pytest.approx(0.43, abs=MFU_TOLERANCE)
    assert large["mfu"] == pytest.approx(0.41, abs=MFU_TOLERANCE)
    assert large["mfu"] < small["mfu"]
    # The unconstrained search may only find plans at least as good.
    free = _llama(tmp_path / "free", None)
    assert free.rows[0]["mfu"] >= small["mfu"] - 1e-9
    assert free.rows[1]["mfu"] >= large["mfu"] - 1e-9
    # fixed batch: each data-parallel replica gets a smaller share at the larger size
    assert 2048 / large["plan"]["dp"] < 2048 / small["plan"]["dp"]
    assert free.rows[1]["mfu"] < free.rows[0]["mfu"]


def test_llama3_405b_fall_comes_from_the_smaller_batch_per_dp_group(tmp_path: Path) -> None:
    # The published plan family (TP 8, PP 16, no CP): DP doubles, each replica's batch halves,
    # so the pipeline has half the micro-batches and its bubble grows the most.
    space = SearchSpace(tp_values=(8,), pp_values=(16,), cp_values=(1,))
    result = _llama(tmp_path, space)
    small, large = result.rows
    assert large["mfu"] < small["mfu"]
    assert large["plan"]["dp"] == 2 * small["plan"]["dp"]
    knee = find_knee(result.rows, threshold=1.0)  # any fall: name its cause
    assert knee is not None and knee.cause == "pipeline_bubble"
