"""MegaScale's Megatron-LM strong-scaling series (NSDI'24, arXiv 2402.15627, Table 2): per-GPU
throughput at 12,288 GPUs over 256 GPUs within 3 points of measured, and the group's MAPE."""

from __future__ import annotations

import pytest

from scalewall.validation.harness import predict_cases, validate_cases
from scalewall.validation.runs import read_runs, scaling_runs_path

SCALING_TOLERANCE = 0.03
"""Points of per-GPU scaling (largest over smallest size), as the project's issue asks."""
MAPE_BOUND = 0.06
"""Group bound: 2.3% today (the baseline as megatron-lm-2023: no overlap, unfused attention,
no distributed optimizer unless stated); slack as for the other groups."""


@pytest.fixture(scope="module")
def cases():  # type: ignore[no-untyped-def]
    return [c for c in read_runs(scaling_runs_path()) if c.group == "megascale"]


def test_megascale_group_mape(cases) -> None:  # type: ignore[no-untyped-def]
    assert validate_cases(cases).groups()["megascale"]["mape"] < MAPE_BOUND


def test_megascale_per_gpu_scaling(cases) -> None:  # type: ignore[no-untyped-def]
    small, large = cases[0], cases[-1]

    def per_gpu(case) -> float:  # type: ignore[no-untyped-def]
        return case.published["tokens_per_s"] / case.hardware["gpus"]

    # The series as validate predicts it: the unpublished micro-batch and schedule chosen once
    # for all eight sizes (``predict_cases``).
    preds = {p.case.id: p for p in predict_cases(cases) if not isinstance(p, Exception)}

    def predicted(case) -> float:  # type: ignore[no-untyped-def]
        return preds[case.id].row["tokens_per_s"] / case.hardware["gpus"]

    # Batch grows 8x between the two sizes; per-GPU throughput ratio is still the MFU ratio.
    measured = per_gpu(large) / per_gpu(small)
    model = predicted(large) / predicted(small)
    assert model == pytest.approx(measured, abs=SCALING_TOLERANCE)
