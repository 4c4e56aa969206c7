"""The rows of NVIDIA's Megatron-Bridge performance tables (25.09, 25.11, 26.02) that the frontier
file does not hold, stated as a user reads the table (catalog model, the release's stack id, no
overrides; recompute, sequence parallelism, activation offloading and the pipeline split open), in
the fit (group ``mbtables``).

Dense rows: MAPE <= 9% (5.9% with the constants fitted over them, 7.4% held out of the fit). The
Llama 3 70B and 405B Megatron-FSDP rows on Grace-Blackwell trays ran with activations offloaded to
host memory (the recipes' ``cpu_offloading_num_layers``): without offloading the validator has to
recompute every layer and predicts them 22-30% slow; with the fewest offloaded layers that fit,
within 10%.

MoE rows: every one is laid out and predicted, but the release's recipes differ in settings the
table does not print (CUDA-graph scope, dispatcher, token dropping in 25.09), and the stated-only
form misses several by more than 20% (strict xfail below)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from tests.validation.predictions import predict_file

from scalewall.validation.harness import CasePrediction, predict_case
from scalewall.validation.runs import megatron_bridge_tables_runs_path

MOE = ("dsv3", "qwen3", "gptoss")


@pytest.fixture(scope="module")
def predictions() -> dict[str, CasePrediction]:
    return predict_file(megatron_bridge_tables_runs_path())


def _error(p: CasePrediction) -> float:
    return p.row["tokens_per_s"] / float(p.case.published["tokens_per_s"]) - 1.0


def _is_moe(case_id: str) -> bool:
    return any(f"_{m}" in case_id for m in MOE)


def test_every_row_is_predicted_and_fits(predictions: dict[str, CasePrediction]) -> None:
    assert len(predictions) == 41
    assert all(p.fits for p in predictions.values())


def test_dense_rows(predictions: dict[str, CasePrediction]) -> None:
    errors = [_error(p) for k, p in predictions.items() if not _is_moe(k)]
    assert len(errors) == 27
    assert float(np.mean(np.abs(errors))) <= 0.09, errors


def test_fsdp_rows_offload_activations(predictions: dict[str, CasePrediction]) -> None:
    fsdp = {k: p for k, p in predictions.items() if k.endswith("_fsdp") and "_gb" in k}
    assert len(fsdp) == 6
    for key, p in fsdp.items():
        assert p.plan.recompute == "none" and p.plan.offload_layers > 0, key
        assert abs(_error(p)) <= 0.10, (key, _error(p))
    # The same rows on a stack without activation offloading must recompute: the dense MLP
    # blocks at least (Megatron-Bridge's last selective module), and are then too slow.
    for key, p in fsdp.items():
        stuck = predict_case(replace(p.case, stack=replace(p.case.stack, activation_offload=False)))
        modules = stuck.chosen.get("recompute_modules", [])
        recomputes = stuck.plan.recompute == "full" or "mlp" in modules
        assert recomputes, key
        assert _error(stuck) < -0.10, (key, _error(stuck))


def test_moe_rows_regression_bound(predictions: dict[str, CasePrediction]) -> None:
    errors = [_error(p) for k, p in predictions.items() if _is_moe(k)]
    assert len(errors) == 14
    assert float(np.mean(np.abs(errors))) <= 0.25, errors


@pytest.mark.xfail(
    strict=True,
    reason="recipe settings the table does not print: 25.09's token-dropping Qwen3 rows "
    "(-68% to +43%), gpt-oss on B300 (+76%)",
)
def test_every_moe_row_within_20_percent(predictions: dict[str, CasePrediction]) -> None:
    errors = {k: _error(p) for k, p in predictions.items() if _is_moe(k)}
    assert all(abs(e) <= 0.20 for e in errors.values()), errors
