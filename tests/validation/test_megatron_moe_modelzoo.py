"""Qwen3-235B-A22B under Megatron-Core 2025 (yanring/Megatron-MoE-ModelZoo, NVIDIA's MoE team):
the H100 table at 4K tokens (step times), the H100 long-context table at 16K-128K tokens (each
length dropless and with forced load balancing) and
the GB200 and GB300 tables (TFLOPS, counted with the causal half of the attention), stated
with the catalog model, the tables' plans, the recompute modules the commands list and the
dispatcher, CUDA graph scope and forced balance as stack overrides; out of sample. Every row
is laid out and fits. Rows within 20%, the issue's bound for MoE runs, are listed; one is
missed and held as a strict expected failure: with TP 4 and 16 local experts per GPU and no
CUDA graphs the host model issues 26 s of a 44 s step where 29 s were measured (+53%). The
Megatron-FSDP row runs as the megatron-fsdp stack (+14%). The GB200 MXFP8 row
(+19%) offloads the expert activations to host memory, which the model does not count, and
is left out of the bound's list."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.validation.predictions import predict_file

from scalewall.validation.harness import CasePrediction, compare, predict_case
from scalewall.validation.runs import megatron_moe_modelzoo_runs_path, read_runs


@pytest.fixture(scope="module")
def predictions() -> dict[str, CasePrediction]:
    return predict_file(megatron_moe_modelzoo_runs_path())


def _error(p: CasePrediction) -> float:
    return compare(p)[0].error_frac


WITHIN = [
    "mcore_qwen3_235b_deepep_tp2ep32pp8vpp4",
    "mcore_qwen3_235b_deepep_tp2ep32pp8vpp4_a2aoverlap",
    "mcore_qwen3_235b_a2a_tp2ep8pp32vpp3",
    "mcore_qwen3_235b_h100_long_16k_tp4cp1",
    "mcore_qwen3_235b_h100_long_32k_tp4cp2",
    "mcore_qwen3_235b_h100_long_64k_tp4cp4",
    "mcore_qwen3_235b_h100_long_128k_tp4cp8",
    "mcore_qwen3_235b_h100_long_16k_tp4cp1_forced",
    "mcore_qwen3_235b_h100_long_32k_tp4cp2_forced",
    "mcore_qwen3_235b_h100_long_64k_tp4cp4_forced",
    "mcore_qwen3_235b_h100_long_128k_tp4cp8_forced",
    "mcore_qwen3_235b_gb200_bf16_pp8ep8",
    "mcore_qwen3_235b_gb300_mxfp8_pp4ep32",
    "mcore_qwen3_235b_gb300_mxfp8_128k",
]


def test_every_row_is_predicted_and_fits(predictions: dict[str, CasePrediction]) -> None:
    assert len(predictions) == 17
    assert all(p.fits for p in predictions.values())


@pytest.mark.parametrize("case_id", WITHIN)
def test_rows_within_twenty_percent(predictions: dict[str, CasePrediction], case_id: str) -> None:
    assert abs(_error(predictions[case_id])) <= 0.20


@pytest.mark.xfail(
    strict=True,
    reason="TP 4, EP 8 (16 local experts), micro-batch 1, no CUDA graphs: the host model "
    "(host_op_s over a tally of unfused operations) issues 26 s of the predicted 44 s step; "
    "29 s measured. The runs fuse the router and the permutation (--moe-router-fusion, "
    "--moe-permute-fusion), which the tally does not count; not modelled",
)
def test_tp4_row_within_twenty_percent(predictions: dict[str, CasePrediction]) -> None:
    assert abs(_error(predictions["mcore_qwen3_235b_deepep_tp4ep8pp8vpp4"])) <= 0.20


def test_fsdp_row_within_twenty_percent(predictions: dict[str, CasePrediction]) -> None:
    # Megatron-FSDP (stack megatron-fsdp) reduce-scatters every micro-batch's gradients in
    # BF16, as NVIDIA's Megatron-FSDP example sets (--grad-reduce-in-bf16); in FP32, as
    # megatron-core-0.13 reduces, the row is 25% slow.
    fsdp = predictions["mcore_qwen3_235b_deepep_tp2ep8_fsdp"]
    assert fsdp.case.stack.id.startswith("megatron-fsdp")
    assert abs(_error(fsdp)) <= 0.20


def test_one_dropless_imbalance_gives_the_forced_balance_gain_at_every_length(
    tmp_path: Path,
) -> None:
    """The long-context table measures each length twice, dropless (aux-loss routing) and with
    forced balance: 24.5%, 20.9%, 15.0% and 9.0% more TFLOPS forced at 16K, 32K, 64K and 128K
    tokens. The busiest expert-parallel rank's load (``Stack.moe_load_imbalance``) sets the
    expert GEMMs and all-to-all of the whole group while attention grows with the length, so
    one load factor must give all four gains: 1.5 does, each within 2 points."""
    data = json.loads(megatron_moe_modelzoo_runs_path().read_text())
    rows = {c["id"]: c for c in data["cases"] if "_long_" in c["id"]}
    for case_id in [k for k in rows if not k.endswith("_forced")]:
        forced = rows[case_id + "_forced"]
        measured = (
            forced["published"]["tflops_per_gpu"] / rows[case_id]["published"]["tflops_per_gpu"]
        )
        dropless = json.loads(json.dumps(forced))
        dropless["id"] += "_at_1.5"
        dropless["plan"]["stack"]["overrides"]["moe_load_imbalance"] = 1.5
        path = tmp_path / "runs.json"
        path.write_text(json.dumps({"format": "scalewall-runs/1", "cases": [forced, dropless]}))
        at_mean, at_busiest = (compare(predict_case(c))[0].predicted for c in read_runs(path))
        assert at_mean / at_busiest == pytest.approx(measured, abs=0.02), case_id
