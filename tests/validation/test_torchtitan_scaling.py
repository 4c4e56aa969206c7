"""torchtitan's FSDP weak scaling (Liang et al. 2024, arXiv 2410.06511; pytorch/torchtitan
docs/performance.md Tables 1 and 3): Llama 3.1 8B, local batch 2 at 8,192 tokens, on 8 and 128
H100. Out of sample: no constant was fitted to these rows. Only the per-GPU ratio is checked;
the runs' 96 GB, 500 W H100 is not in the catalog (absolute figures carry that difference)."""

from __future__ import annotations

import pytest

from scalewall.validation.harness import predict_case
from scalewall.validation.runs import Case, read_runs, torchtitan_runs_path

SCALING_TOLERANCE = 0.03
"""Points of per-GPU scaling from 8 to 128 GPUs, as the project's issue asks of FSDP runs."""


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return {c.id: c for c in read_runs(torchtitan_runs_path())}


@pytest.mark.parametrize("technique", ["eager", "compile"])
def test_torchtitan_fsdp_per_gpu_scaling(cases: dict[str, Case], technique: str) -> None:
    small = cases[f"torchtitan_h100_llama3.1-8b_{technique}_8gpu"]
    large = cases[f"torchtitan_h100_llama3.1-8b_{technique}_128gpu"]

    def predicted(case: Case) -> float:
        return predict_case(case).row["tokens_per_s"] / case.hardware["gpus"]

    measured = large.published["tokens_per_s_per_gpu"] / small.published["tokens_per_s_per_gpu"]
    assert predicted(large) / predicted(small) == pytest.approx(measured, abs=SCALING_TOLERANCE)
