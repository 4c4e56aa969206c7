"""Bus-bandwidth factors against the nccl-tests definitions (doc/PERFORMANCE.md)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scalewall.errors import SpecError
from scalewall.probe.busbw import COLLECTIVE_KINDS, bus_bandwidth_factor


def test_factors_on_eight_ranks() -> None:
    # exact fractions: 2*7/8, 7/8, 1
    assert bus_bandwidth_factor("all_reduce", 8) == 1.75
    assert bus_bandwidth_factor("all_gather", 8) == 0.875
    assert bus_bandwidth_factor("reduce_scatter", 8) == 0.875
    assert bus_bandwidth_factor("all_to_all", 8) == 0.875
    assert bus_bandwidth_factor("broadcast", 8) == 1.0


def test_one_rank_moves_nothing_over_a_bus() -> None:
    assert bus_bandwidth_factor("all_reduce", 1) == 0.0


@given(st.sampled_from(COLLECTIVE_KINDS), st.integers(min_value=1, max_value=1_000_000))
def test_factor_bounded_and_growing(kind: str, n: int) -> None:
    f = bus_bandwidth_factor(kind, n)
    assert 0.0 <= f <= 2.0
    assert bus_bandwidth_factor(kind, n + 1) >= f


def test_unknown_kind_and_bad_group() -> None:
    with pytest.raises(SpecError, match="kind"):
        bus_bandwidth_factor("all_scatter", 4)
    with pytest.raises(SpecError, match="group_size"):
        bus_bandwidth_factor("all_reduce", 0)
