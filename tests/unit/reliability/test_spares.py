"""The repair queue behind the spares count (`reliability.spares`)."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from scalewall.reliability import nodes_in_repair_tail, spares_for_risk


def test_unlimited_crews_is_poisson() -> None:
    # a = 1/h x 72 h = 72 nodes in repair on average (M/G/inf: Poisson(72))
    assert nodes_in_repair_tail(80, 1 / 3600, 72 * 3600) == pytest.approx(stats.poisson.sf(80, 72))


def test_mmc_matches_erlang_c_for_two_crews() -> None:
    """M/M/2 with a = 1: P0 = 1/3, P(N > 1) = 1 - P0 - P1 = 1/3 (Kleinrock 1975, Sec. 3.5)."""
    assert nodes_in_repair_tail(1, 1.0, 1.0, crews=2) == pytest.approx(1 / 3, rel=1e-12)
    # Geometric tail: P(N > n) = P(N > 1) rho^(n-1), rho = 1/2
    assert nodes_in_repair_tail(4, 1.0, 1.0, crews=2) == pytest.approx(1 / 3 / 8, rel=1e-12)


def test_fewer_crews_need_more_spares() -> None:
    lam, repair = 1 / 3600, 72 * 3600
    unlimited = spares_for_risk(lam, repair)
    assert spares_for_risk(lam, repair, crews=80) > unlimited
    assert spares_for_risk(lam, repair, crews=72) == -1  # repairs never catch up
    # Poisson(72)'s 99th percentile, plus the node the failure itself needs
    assert unlimited == stats.poisson.ppf(0.99, 72) + 1


def test_spares_grow_with_failures_and_repair_time() -> None:
    base = spares_for_risk(1 / 3600, 86400)
    assert spares_for_risk(2 / 3600, 86400) > base
    assert spares_for_risk(1 / 3600, 2 * 86400) > base
    assert spares_for_risk(0.0, 86400) == 0
    assert math.isfinite(base)
