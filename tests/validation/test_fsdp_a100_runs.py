"""LLM Foundry's A100 tables and its H100 FP8 table under PyTorch FSDP, in the fit (groups
``llmfoundry_a100`` and ``llmfoundry_h100_fp8``). Every row is laid out and fits;
A100 throughput within 8% MAPE; per-GPU scaling from 16 (or 32) to 128 A100 40GB within 3.5
points for each model but MPT-70B, whose 64-GPU row measures 27% below its 128-GPU row per GPU;
the FP8 rows within 10% MAPE."""

from __future__ import annotations

import numpy as np
import pytest

from scalewall.validation.harness import CasePrediction, predict_cases
from scalewall.validation.runs import fsdp_a100_runs_path, fsdp_h100_fp8_runs_path, read_runs


@pytest.fixture(scope="module")
def predictions() -> dict[str, CasePrediction]:
    out = predict_cases(read_runs(fsdp_a100_runs_path()))
    assert not any(isinstance(p, Exception) for p in out)
    return {p.case.id: p for p in out if isinstance(p, CasePrediction)}


def _rate(p: CasePrediction) -> tuple[float, float]:
    published = float(p.case.published["tokens_per_s_per_gpu"])
    return published, p.row["tokens_per_s"] / float(p.case.hardware["gpus"])


def test_every_row_is_predicted_and_fits(predictions: dict[str, CasePrediction]) -> None:
    assert len(predictions) == 36
    assert all(p.fits for p in predictions.values())


def test_throughput_mape(predictions: dict[str, CasePrediction]) -> None:
    errors = [abs(model / published - 1.0) for published, model in map(_rate, predictions.values())]
    assert float(np.mean(errors)) <= 0.08, float(np.mean(errors))


SERIES = [("125m", 16), ("350m", 16), ("760m", 16), ("1b", 16), ("3b", 16), ("7b", 16)]
SERIES += [("13b", 32), ("30b", 32)]


@pytest.mark.parametrize(("model", "small"), SERIES)
def test_per_gpu_scaling_to_128(
    predictions: dict[str, CasePrediction], model: str, small: int
) -> None:
    a = _rate(predictions[f"llmfoundry_a10040_mpt{model}_s2048_{small}gpu"])
    b = _rate(predictions[f"llmfoundry_a10040_mpt{model}_s2048_128gpu"])
    measured, predicted = b[0] / a[0], b[1] / a[1]
    assert abs(predicted - measured) <= 0.035, (measured, predicted)


@pytest.mark.xfail(
    strict=True,
    reason="MPT-70B on 64 A100 40GB measures 276 tokens/s/GPU against 376 on 128: the model "
    "predicts 41% more at 64 GPUs (micro-batch 2, no gradient accumulation); not explained",
)
def test_mpt70b_per_gpu_scaling(predictions: dict[str, CasePrediction]) -> None:
    a = _rate(predictions["llmfoundry_a10040_mpt70b_s2048_64gpu"])
    b = _rate(predictions["llmfoundry_a10040_mpt70b_s2048_128gpu"])
    assert abs(b[1] / a[1] - b[0] / a[0]) <= 0.035


def test_h100_fp8_rows_within_ten_percent() -> None:
    # MPT-1B and 3B at 512-32K tokens on 8 H100 with FP8 linears: every row predicted 4-10%
    # too fast, MAPE 6.8%.
    out = predict_cases(read_runs(fsdp_h100_fp8_runs_path()))
    preds = [p for p in out if isinstance(p, CasePrediction)]
    assert len(preds) == 7 and all(p.fits for p in preds)
    errors = [model / published - 1.0 for published, model in map(_rate, preds)]
    assert float(np.mean(np.abs(errors))) <= 0.10, errors
    assert max(abs(e) for e in errors) <= 0.15, errors
