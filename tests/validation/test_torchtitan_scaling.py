"""torchtitan's December 2024 benchmarks (Liang et al. 2024, arXiv 2410.06511; pytorch/torchtitan
docs/performance.md Tables 1-6) on Meta's Grand Teton H100 (96 GB HBM2e, 500 W), out of sample:
no constant was fitted to these rows. Every row is laid out and fits; FSDP's per-GPU scaling of
Llama 3.1 8B from 8 to 128 GPUs within 3 points; the rows without context parallelism within 13%
(MAPE <= 8%); interleaving the 405B's pipeline gains what was measured (1.28x) within 5 points,
with torchtitan's 2024 defaults of as many micro-batches as pipeline stages and two stages per
rank. Context parallelism from CP 4 on the 8B and CP 2 on the 405B is predicted 16-31% too fast,
with FlashAttention-2's rate as measured on an H200 at each length (the rows at 32K tokens
without it within 1%): a strict expected failure. The page's earlier edition, FSDP2 alone on 64
A100 80 GB, is checked too: six rows that ran and one that ran out of memory."""

from __future__ import annotations

import numpy as np
import pytest

from scalewall.validation.harness import CasePrediction, predict_cases
from scalewall.validation.runs import read_runs, torchtitan_runs_path

SCALING_TOLERANCE = 0.03
"""Points of per-GPU scaling from 8 to 128 GPUs, as the project's issue asks of FSDP runs."""


@pytest.fixture(scope="module")
def predictions() -> dict[str, CasePrediction]:
    out = predict_cases(read_runs(torchtitan_runs_path()))
    assert not any(isinstance(p, Exception) for p in out)
    return {p.case.id: p for p in out if isinstance(p, CasePrediction)}


def _rate(p: CasePrediction) -> tuple[float, float]:
    published = float(p.case.published["tokens_per_s_per_gpu"])
    return published, p.row["tokens_per_s"] / float(p.case.hardware["gpus"])


def _long_context(p: CasePrediction) -> bool:
    return bool(p.case.plan["cp"] > 1 or p.case.training["seq_len"] > 8192)


def _grand_teton(predictions: dict[str, CasePrediction]) -> list[CasePrediction]:
    """The December 2024 rows on Grand Teton H100 (the file also holds the A100 edition's)."""
    return [p for cid, p in predictions.items() if cid.startswith("torchtitan_h100_")]


def test_every_row_is_predicted_and_fits(predictions: dict[str, CasePrediction]) -> None:
    assert len(_grand_teton(predictions)) == 18
    ran = [p for p in predictions.values() if p.case.published.get("fits") is not False]
    assert len(ran) == 24
    assert all(p.fits for p in ran)


def test_a100_fsdp_rows(predictions: dict[str, CasePrediction]) -> None:
    """The page's earlier edition: FSDP2 alone on 64 A100 80 GB, Llama 3 8B and 70B and Llama 2
    13B and 70B, within 13% each and 8% on average (the issue's bound for dense runs); the
    local batch of 2 that ran out of memory with selective checkpointing does not fit."""
    rows = [p for cid, p in predictions.items() if cid.startswith("torchtitan_a100_")]
    ran = [p for p in rows if "tokens_per_s_per_gpu" in p.case.published]
    assert len(ran) == 6
    errors = [model / published - 1.0 for published, model in map(_rate, ran)]
    assert float(np.mean(np.abs(errors))) <= 0.08, errors
    assert max(abs(e) for e in errors) <= 0.13, errors
    (oom,) = [p for p in rows if p.case.published.get("fits") is False]
    assert not oom.fits


@pytest.mark.parametrize("technique", ["eager", "compile", "compile_float8"])
def test_torchtitan_fsdp_per_gpu_scaling(
    predictions: dict[str, CasePrediction], technique: str
) -> None:
    small = _rate(predictions[f"torchtitan_h100_llama3.1-8b_{technique}_8gpu"])
    large = _rate(predictions[f"torchtitan_h100_llama3.1-8b_{technique}_128gpu"])
    measured, predicted = large[0] / small[0], large[1] / small[1]
    assert predicted == pytest.approx(measured, abs=SCALING_TOLERANCE)


def test_rows_without_context_parallelism(predictions: dict[str, CasePrediction]) -> None:
    rows = [p for p in _grand_teton(predictions) if not _long_context(p)]
    assert len(rows) == 10
    errors = [model / published - 1.0 for published, model in map(_rate, rows)]
    assert float(np.mean(np.abs(errors))) <= 0.08, errors
    # The largest: the 70B 2D row without AsyncTP, 12% slow (its exposed TP collectives).
    assert max(abs(e) for e in errors) <= 0.13, errors


def test_interleaving_gain_of_the_405b_pipeline(predictions: dict[str, CasePrediction]) -> None:
    plain = _rate(predictions["torchtitan_h100_llama3.1-405b_3d_1f1b_512gpu"])
    looped = _rate(predictions["torchtitan_h100_llama3.1-405b_3d_interleaved_512gpu"])
    measured, predicted = looped[0] / plain[0], looped[1] / plain[1]
    assert predicted == pytest.approx(measured, abs=0.05)


@pytest.mark.xfail(
    strict=True,
    reason="context parallelism from CP 4 on Llama 3.1 8B and from CP 2 on the 405B (PyTorch's "
    "experimental ring attention, December 2024) is predicted 16-31% too fast; the measured "
    "8B rows lose twice the attention time per token from 64K to 128K tokens that they lose "
    "from 32K to 64K; not explained",
)
def test_context_parallel_rows_within_fifteen_percent(
    predictions: dict[str, CasePrediction],
) -> None:
    rows = [p for p in _grand_teton(predictions) if _long_context(p)]
    errors = [model / published - 1.0 for published, model in map(_rate, rows)]
    assert max(abs(e) for e in errors) <= 0.15, errors
