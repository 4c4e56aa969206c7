"""Uncalibrated prediction intervals from the out-of-sample errors of the closest group."""

from __future__ import annotations

import math

import pytest

from scalewall.validation.error_bars import (
    EMPIRICAL_MIN,
    ErrorGroup,
    closest_group,
    error_quantiles,
    generation,
    read_groups,
    validation_interval,
)


def _group(name: str, **kw: object) -> ErrorGroup:
    base: dict[str, object] = {
        "stacks": ("megatron-core",),
        "generations": ("hopper",),
        "moe": (False,),
        "gpus_min": 64,
        "gpus_max": 1024,
        "step_log_errors": (0.0, 0.1),
    }
    return ErrorGroup(name=name, **{**base, **kw})  # type: ignore[arg-type]


def test_generation_of_catalog_ids() -> None:
    assert generation("h800") == generation("h100-sxm-80gb") == "hopper"
    assert generation("gb300") == "blackwell" and generation("a100-sxm-40gb") == "ampere"


def test_closest_group_prefers_matches_then_scale() -> None:
    groups = {
        "dense_h": _group("dense_h"),
        "moe_b": _group("moe_b", generations=("blackwell",), moe=(True,)),
        "dense_h_big": _group("dense_h_big", gpus_min=8192, gpus_max=16384),
    }
    pick = closest_group
    assert pick(groups, stack="megatron-core", accelerator="b200", moe=True, gpus=64).name == (
        "moe_b"
    )
    assert pick(groups, stack="x", accelerator="h100", moe=False, gpus=128).name == "dense_h"
    assert pick(groups, stack="x", accelerator="h100", moe=False, gpus=12000).name == (
        "dense_h_big"
    )


def test_interval_turns_the_error_sign() -> None:
    """A model that predicted 10% too slow on every run (error +log 1.1) puts the interval
    below its prediction."""
    errors = (math.log(1.1),) * EMPIRICAL_MIN
    band = validation_interval(
        1.0,
        stack="megatron-core",
        accelerator="h100-sxm-80gb",
        moe=False,
        gpus=128,
        groups={"g": _group("g", step_log_errors=errors)},
    )
    low, high = band.step_time_interval_s
    assert low == pytest.approx(1 / 1.1) and high == pytest.approx(1 / 1.1)
    assert "g" in band.basis and "not calibrated" in band.basis


def test_few_errors_use_a_normal() -> None:
    lo, hi = error_quantiles((-0.1, 0.1))
    # mean 0, sd 0.1414: +-1.645 sd.
    assert (lo, hi) == pytest.approx((-0.2326, 0.2326), rel=1e-3)


def test_shipped_groups_cover_every_validation_group() -> None:
    from scalewall.validation.runs import read_runs

    groups = read_groups()
    assert set(groups) == {c.group for c in read_runs()}
    for g in groups.values():
        assert g.step_log_errors and g.gpus_min <= g.gpus_max
        # No group's out-of-sample errors reach a factor of 2 in log terms on average.
        assert sum(abs(e) for e in g.step_log_errors) / len(g.step_log_errors) < math.log(2)
