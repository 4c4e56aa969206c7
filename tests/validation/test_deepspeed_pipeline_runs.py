"""Megatron-DeepSpeed runs with DeepSpeed's pipeline engine on A100 (BLOOM 176B and its topology
search, MT-NLG 530B), in the fit (groups ``bloom`` and ``mtnlg``). Every run is laid out and
fits in memory with its stated plan; the training iterations are within 20%, and MT-NLG's per-GPU
scaling from 2,240 to 3,360 GPUs within 5 points. The model is too fast on all of them (5-16%;
7-18% before the framework tables joined the fit)."""

from __future__ import annotations

import numpy as np
import pytest

from scalewall.validation.harness import CasePrediction, predict_cases
from scalewall.validation.runs import deepspeed_pipeline_runs_path, read_runs


@pytest.fixture(scope="module")
def predictions() -> dict[str, CasePrediction]:
    cases = read_runs(deepspeed_pipeline_runs_path())
    out = predict_cases(cases)
    assert not any(isinstance(p, Exception) for p in out)
    return {p.case.id: p for p in out if isinstance(p, CasePrediction)}


def _error(p: CasePrediction) -> float:
    return p.row["step_time_s"] / float(p.case.published["step_time_s"]) - 1.0


def test_every_run_is_predicted_and_fits(predictions: dict[str, CasePrediction]) -> None:
    assert len(predictions) == 22
    assert all(p.fits for p in predictions.values())


def test_training_iterations_within_twenty_percent(
    predictions: dict[str, CasePrediction],
) -> None:
    runs = ["bloom_176b_384gpu", "mtnlg_530b_2240gpu", "mtnlg_530b_2800gpu", "mtnlg_530b_3360gpu"]
    errors = {k: _error(predictions[k]) for k in runs}
    assert all(abs(e) <= 0.20 for e in errors.values()), errors


def test_topology_search_mape(predictions: dict[str, CasePrediction]) -> None:
    errors = [abs(_error(p)) for k, p in predictions.items() if k.startswith("bloom_trial")]
    assert len(errors) == 17
    assert float(np.mean(errors)) <= 0.11, errors


def test_shapes_without_the_fused_softmax_fall_in_line(
    predictions: dict[str, CasePrediction],
) -> None:
    # Hidden 13312, 82 layers, TP4 PP12 MBS2: 104 heads (26 per GPU, 52 score rows per block
    # call, not a multiple of the swapped rule's 8) measured 123.71 s against 104.45 s with 64
    # heads; with the PyTorch softmax chain counted the two errors lie within 2 points.
    slow = _error(predictions["bloom_trial_L82_h13312_a104_dp8_tp4_pp12_mbs2"])
    fused = _error(predictions["bloom_trial_L82_h13312_a64_dp8_tp4_pp12_mbs2"])
    assert abs(slow - fused) <= 0.02, (slow, fused)


def test_mtnlg_per_gpu_scaling(predictions: dict[str, CasePrediction]) -> None:
    # Per-GPU throughput at 3,360 GPUs over 2,240 (same global batch): measured 0.902.
    def per_gpu(p: CasePrediction, step: float) -> float:
        return 1.0 / (step * float(p.case.hardware["gpus"]))

    small, large = predictions["mtnlg_530b_2240gpu"], predictions["mtnlg_530b_3360gpu"]
    measured = per_gpu(large, 44.4) / per_gpu(small, 60.1)
    model = per_gpu(large, large.row["step_time_s"]) / per_gpu(small, small.row["step_time_s"])
    assert measured == pytest.approx(0.902, abs=0.001)
    assert abs(model - measured) <= 0.05, model


@pytest.mark.xfail(
    strict=True,
    reason="one micro-batch per pipeline: predicted 28% too fast; the step's fixed costs "
    "measure about 7 s where the model has 3.3 (the BF16 optimizer's FP32 gradient "
    "all-reduce and the tied-embedding reduction counted; NCCL's rate over Omni-Path unknown)",
)
def test_rampup_iteration_within_twenty_percent(predictions: dict[str, CasePrediction]) -> None:
    assert abs(_error(predictions["bloom_176b_384gpu_rampup_gbs16"])) <= 0.20
