"""gpt-oss-120b rows of the Megatron-Bridge performance tables (25.11 and 26.02), out of sample:
no constant was fitted to them. Every row is laid out and fits in memory with its stated plan;
the 20% bound the project asks of MoE runs is not met yet (the model is too fast)."""

from __future__ import annotations

import pytest

from scalewall.validation.harness import CasePrediction, predict_case
from scalewall.validation.runs import gpt_oss_runs_path, read_runs

MOE_BOUND = 0.20
"""Largest |error| of tokens/s the project's issue asks of every MoE run."""


@pytest.fixture(scope="module")
def predictions() -> list[CasePrediction]:
    return [predict_case(case) for case in read_runs(gpt_oss_runs_path())]


def _error(p: CasePrediction) -> float:
    published = float(p.case.published["tokens_per_s"])
    return p.row["tokens_per_s"] / published - 1.0


def test_every_row_is_predicted_and_fits(predictions: list[CasePrediction]) -> None:
    assert len(predictions) == 8
    assert all(p.fits for p in predictions)


@pytest.mark.xfail(
    strict=True,
    reason="predicted -2% to +60% (MAPE 19.4%; B200 at EP 8 +60%, GB200 26.02 +31%, the other "
    "NVL72 rows at EP 64 +18-19%): no sourced mechanism explains it yet",
)
def test_every_row_within_the_moe_bound(predictions: list[CasePrediction]) -> None:
    worst = max(abs(_error(p)) for p in predictions)
    assert worst <= MOE_BOUND
