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
    """24 rows: MAPE 11.3%, worst +24.5% (AutoModel's Super on 64 H100); 21 within 20%.
    The GB300 rows are +8% to +22% too fast, the GB200 rows -1.8% to +9.6%, the B300 rows
    -17% to +9%, AutoModel's two H100 rows +19.6% and +24.5%. The dispatcher's fixed time per
    routed row (``expert_dispatch_copy_s``) took the Blackwell rows down by up to 11 points
    (15.4% and 17 within 20% without it); the Mamba-2 backward's traffic counted kernel by
    kernel took 17.2% to 15.4% before that."""
    errors = [abs(_error(p)) for p in hybrid]
    assert sum(errors) / len(errors) <= 0.12
    assert max(errors) <= 0.25
    assert sum(e <= MOE_BOUND for e in errors) >= 21


@pytest.mark.xfail(
    strict=True,
    reason="two GB300 rows +20.1% and +21.7% (the GB200 ones within 10%) and AutoModel's Super "
    "+24.5%: no sourced mechanism yet",
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
