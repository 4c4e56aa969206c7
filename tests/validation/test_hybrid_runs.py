"""Held-out hybrid Mamba-2 runs no constant is fitted to: NVIDIA's published pre-training
throughput of Nemotron 3 Nano (30B-A3B) and Super (120B-A12B, LatentMoE), each model stated by
its config.json, the stack by the framework's id and the plan fields the tables leave open
left open. Every case reads, is laid out and fits; the bounds are today's measured figures
(published step time or tokens/s, the first metric each case states), so a change that makes
them worse fails here."""

from __future__ import annotations

import pytest

from scalewall.validation.harness import CasePrediction, compare, predict_case
from scalewall.validation.runs import (
    held_out_runs_paths,
    nemotron_hybrid_runs_path,
    qwen3_next_runs_path,
    read_runs_file,
    shipped_runs_paths,
)

MOE_BOUND = 0.20
"""Largest |error| the project's issue asks of every MoE run."""


@pytest.fixture(scope="module")
def hybrid() -> list[CasePrediction]:
    read = read_runs_file(nemotron_hybrid_runs_path())
    assert not read.errors
    return [predict_case(case) for case in read.cases]


def _error(p: CasePrediction) -> float:
    return compare(p)[0].error_frac


def test_the_files_are_held_out() -> None:
    for path in (nemotron_hybrid_runs_path(), qwen3_next_runs_path()):
        assert path in held_out_runs_paths()
        assert path not in shipped_runs_paths()


def test_every_run_is_predicted_and_fits(hybrid: list[CasePrediction]) -> None:
    assert len(hybrid) == 24
    assert all(p.fits for p in hybrid)
    assert all(p.case.model.layer_pattern for p in hybrid)
    assert sum(p.case.model.moe_latent > 0 for p in hybrid) == 13


def test_hybrid_error_as_measured(hybrid: list[CasePrediction]) -> None:
    """24 rows: MAPE 7.8%, worst +24.5% (AutoModel's Super on 64 H100); 22 within 20%.
    The GB300 rows are -1.6% to +10.5%, the GB200 rows -7.4% to -0.3%, the B300 rows -21% to
    -1%, the Megatron-Bridge H100 rows +13.8% and +16.8%, AutoModel's two +19.5% and +24.5%.
    The SSD kernels at a rate per SM (``ssd_bytes_per_s_per_sm``) took the Blackwell rows down
    by about 10 points (11.3%, 21 within 20% at 0.45 of each part's bandwidth); before that
    the dispatcher's fixed time per routed row (``expert_dispatch_copy_s``, 15.4% and 17
    without it) and the Mamba-2 backward's traffic counted kernel by kernel (17.2% before)."""
    errors = [abs(_error(p)) for p in hybrid]
    assert sum(errors) / len(errors) <= 0.09
    assert max(errors) <= 0.25
    assert sum(e <= MOE_BOUND for e in errors) >= 22


@pytest.mark.xfail(
    strict=True,
    reason="B300's Super MXFP8 row -20.8% (its clock is held, FIXED_CLOCKS) and AutoModel's "
    "Super +24.5% on H100: no sourced mechanism yet",
)
def test_hybrid_rows_within_the_moe_bound(hybrid: list[CasePrediction]) -> None:
    assert all(abs(_error(p)) <= MOE_BOUND for p in hybrid)


def test_gated_deltanet_rows() -> None:
    """Qwen3-Next-80B-A3B on 128 H100 (EP 32, PP 4): -13.4% step time; Qwen3.5-35B-A3B on 16
    H100 (EP 16, experts by torch.grouped_mm: one launch per projection): -1.1%."""
    read = read_runs_file(qwen3_next_runs_path())
    assert not read.errors
    predictions = [predict_case(case) for case in read.cases]
    assert len(predictions) == 2
    for p in predictions:
        assert p.fits
        assert "L" in p.case.model.mixer_pattern
        assert abs(_error(p)) <= 0.14
