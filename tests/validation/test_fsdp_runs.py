"""MosaicML LLM Foundry's H100 BF16 tables (scripts/train/benchmarking/README.md, 2023): MPT
760M-70B under PyTorch FSDP on 8-64 H100 at 512 to 65,536 tokens, and 1B-70B on 128, 256 and
512 H100 at 2,048 tokens (the 'Large Scale' table). The group's MAPE, and per-GPU throughput
across each weak-scaling series at 2,048 tokens."""

from __future__ import annotations

import pytest

from scalewall.validation.harness import predict_case, validate_cases
from scalewall.validation.runs import Case, fsdp_runs_path, read_runs

MAPE_BOUND = 0.08
"""Group bound: 6.6% over its 140 metrics today (the
llm-foundry stack's attention rate fitted to the 12 rows at 16K tokens and more; the 40 shorter
rows are 7.4% out of that fit)."""
SCALING_TOLERANCE = 0.03
"""Points of per-GPU scaling, largest size over smallest, as the project's issue asks of FSDP
runs (128 -> 512 GPUs); the 8-64 GPU series are held to the same."""
LARGE = (128, 256, 512)
SERIES = {
    "mpt760m_s2048": (16, 32),
    "mpt1b_s2048": (16, 32, 64),
    "mpt3b_s2048": (32, 64),
    "mpt13b_s2048": (8, 16, 32, 64),
    "mpt30b_s2048": (16, 32),
    **{
        f"{m}_s2048_large": LARGE for m in ("mpt1b", "mpt3b", "mpt7b", "mpt13b", "mpt30b", "mpt70b")
    },
}
"""Weak-scaling series at fixed micro-batch and their sizes. The 'Large Scale' table's series
(128 -> 512 GPUs) fall 2.5% (13B) to 9.7% (1B) per GPU: the host stalls each per-layer FSDP
collective waits for (``perf/step.py`` ``sync_noise_s``) carry that fall."""


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return {c.id: c for c in read_runs(fsdp_runs_path())}


def test_llm_foundry_group_mape(cases: dict[str, Case]) -> None:
    groups = validate_cases(list(cases.values())).groups()
    assert groups["llmfoundry"]["metrics"] == 140
    assert groups["llmfoundry"]["mape"] <= MAPE_BOUND


@pytest.mark.parametrize("series", sorted(SERIES))
def test_fsdp_per_gpu_scaling(cases: dict[str, Case], series: str) -> None:
    sizes, tolerance = SERIES[series], SCALING_TOLERANCE
    prefix = series.removesuffix("_large")
    first = cases[f"llmfoundry_h100_{prefix}_{sizes[0]}gpu"]
    last = cases[f"llmfoundry_h100_{prefix}_{sizes[-1]}gpu"]

    def measured(case: Case) -> float:
        return float(case.published["tokens_per_s_per_gpu"])

    def predicted(case: Case) -> float:
        return predict_case(case).row["tokens_per_s"] / case.hardware["gpus"]

    ratio = measured(last) / measured(first)
    assert predicted(last) / predicted(first) == pytest.approx(ratio, abs=tolerance)
