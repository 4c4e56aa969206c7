"""What-it-would-take tables and the public names of the package."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

import scalewall.reliability as rel
from scalewall.reliability import (
    GoodputInputs,
    bandwidth_table,
    failure_rate_table,
    goodput,
    required_scale,
    required_spares,
    restart_table,
    spares_table,
)

Make = Callable[..., GoodputInputs]


def test_fewer_failures_more_goodput(llama3: Make) -> None:
    table = failure_rate_table(llama3())
    assert list(table["rate_scale"]) == [1.0, 0.5, 0.25, 0.1]
    assert table["goodput_frac"].is_monotonic_increasing
    assert table["mttf_s"].iloc[1] == pytest.approx(2 * table["mttf_s"].iloc[0])


def test_more_bandwidth_more_goodput(llama3: Make) -> None:
    table = bandwidth_table(llama3())
    assert table["goodput_frac"].is_monotonic_increasing
    assert table["checkpoint_write_s"].is_monotonic_decreasing


def test_spares_table(llama3: Make) -> None:
    """The grid, the count the repair queue requires, and a spare always at hand."""
    inputs = llama3()
    need = required_spares(inputs)
    table = spares_table(inputs, spares=(0, 16, 64))
    assert list(table["spare_nodes"].iloc[:-1]) == sorted({0, 16, 64, need})
    assert table["goodput_frac"].is_monotonic_increasing


def test_required_spares_close_the_gap_to_unlimited(llama3: Make) -> None:
    """With the required spares goodput is within a tenth of a point of a spare always at
    hand; with half of them it is not."""
    inputs = llama3()
    need = required_spares(inputs)
    ideal = goodput(inputs).goodput_frac
    assert goodput(llama3(spare_nodes=need)).goodput_frac == pytest.approx(ideal, abs=1e-3)
    assert goodput(llama3(spare_nodes=need // 2)).goodput_frac < ideal - 1e-3


def test_faster_restarts_more_goodput(llama3: Make) -> None:
    table = restart_table(llama3())
    assert table["goodput_frac"].is_monotonic_increasing
    assert table["restart_s"].is_monotonic_decreasing


def test_required_rate_scale_reaches_target(llama3: Make) -> None:
    inputs = llama3()
    scale = required_scale(inputs, 0.95, knob="rate_scale")
    assert 0 < scale < 1
    reached = goodput(llama3(rate_scale=scale)).goodput_frac
    assert reached == pytest.approx(0.95, abs=1e-3)


def test_required_scale_already_met_and_unreachable(llama3: Make) -> None:
    assert required_scale(llama3(), 0.5, knob="bandwidth_scale") == 1.0
    # restart overhead alone keeps goodput below 99.9% whatever the storage bandwidth
    assert math.isnan(required_scale(llama3(), 0.999, knob="bandwidth_scale"))


def test_public_names() -> None:
    assert sorted(rel.__all__) == rel.__all__
    for name in rel.__all__:
        assert hasattr(rel, name), name
