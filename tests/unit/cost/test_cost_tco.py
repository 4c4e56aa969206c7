"""Capex, opex, power and TCO: identities a cost model must keep, checked on catalog hardware."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scalewall.cost import (
    TcoOptions,
    Throughput,
    amortised_usd_per_s,
    hardware_from_catalog,
    load_prices,
    tco,
    training_cost,
)
from scalewall.cost.specs import PriceBook
from scalewall.errors import SpecError
from scalewall.units import DAY_S, HOUR_S

PRICES = load_prices()
HW = hardware_from_catalog("dgx-h100-superpod-1024")  # 128 DGX H100, 2-tier NDR
RUN = Throughput(tokens_per_s=3.0e6, mfu_frac=0.40, goodput_frac=0.90)


def _with_rate(book: PriceBook, name: str, value: float) -> PriceBook:
    rate = dataclasses.replace(getattr(book.rates, name), value=value)
    return dataclasses.replace(book, rates=dataclasses.replace(book.rates, **{name: rate}))


def test_amortisation_is_straight_line_without_interest_and_an_annuity_with_it() -> None:
    assert amortised_usd_per_s(1000.0, 10.0, 0.0) == 100.0
    # Continuous annuity C r / (1 - e^{-rT}): C = 1000, r = 0.1, T = 10 -> 158.198...
    assert amortised_usd_per_s(1000.0, 10.0, 0.1) == pytest.approx(
        1000.0 * 0.1 / (1.0 - math.exp(-1.0)), rel=1e-12
    )


def test_capex_lines_follow_the_bom_and_the_price_book() -> None:
    t = tco(HW, PRICES)
    assert t.capex.category_usd("servers") == 128 * PRICES.server("dgx-h100").usd
    switches = next(x for x in t.capex.lines if x.item == "switches")
    assert switches.quantity == t.bom.switches == 48
    assert switches.unit_usd == PRICES.switch("ib-ndr").usd
    assert t.capex.category_usd("facility") == pytest.approx(
        t.power.it_capacity_w * PRICES.rates.facility_usd_per_w.value, rel=1e-12
    )
    assert set(t.capex.table().columns) >= {"category", "item", "quantity", "total_usd"}


def test_power_is_tdp_plus_host_plus_network_times_pue() -> None:
    t = tco(HW, PRICES)
    # DGX H100: 10.2 kW nameplate, 8 x 700 W GPUs -> 4.6 kW of host per node.
    host_w = HW.system.power_w - 8 * HW.accelerator.tdp_w
    assert t.power.gpus_w == HW.gpus * HW.accelerator.tdp_w
    assert t.power.hosts_w == pytest.approx(128 * host_w, rel=1e-12)
    network_w = (
        48 * PRICES.switch("ib-ndr").power_w + 4096 * PRICES.optic("ib-ndr").transceiver_power_w
    )
    assert t.power.network_w == pytest.approx(network_w, rel=1e-12)
    assert t.power.facility_w == pytest.approx(t.power.it_w * PRICES.rates.pue.value, rel=1e-12)
    assert t.opex.energy_usd_per_s == pytest.approx(
        t.power.facility_w * PRICES.rates.energy_usd_per_j.value, rel=1e-12
    )


def test_colocation_rents_instead_of_building() -> None:
    owned = tco(HW, PRICES)
    rented = tco(HW, PRICES, options=TcoOptions(facility="colocation"))
    assert rented.capex.category_usd("facility") == 0.0
    assert rented.opex.colocation_usd_per_s > 0.0 == owned.opex.colocation_usd_per_s
    assert rented.opex.staff_fte < owned.opex.staff_fte
    with pytest.raises(SpecError, match="facility='cave'"):
        tco(HW, PRICES, options=TcoOptions(facility="cave"))


def test_headline_rates_are_consistent() -> None:
    t = tco(HW, PRICES, RUN)
    assert t.usd_per_gpu_hour * t.gpus / HOUR_S == pytest.approx(t.owned_usd_per_s, rel=1e-12)
    assert t.owned_usd_per_s == pytest.approx(
        sum(t.amortised_usd_per_s.values()) + t.opex.total_usd_per_s, rel=1e-12
    )
    eff_tokens = RUN.tokens_per_s * RUN.goodput_frac
    assert t.usd_per_million_tokens == pytest.approx(
        t.owned_usd_per_s / eff_tokens * 1e6, rel=1e-12
    )
    eff_flop = 0.40 * HW.accelerator.peak_bf16_flop_per_s * HW.gpus * 0.90
    assert t.usd_per_effective_pflop_day == pytest.approx(
        t.owned_usd_per_s * 1e15 * DAY_S / eff_flop, rel=1e-12
    )
    assert t.rental_key == "rentals.h100"
    assert t.rental_usd_per_gpu_hour == pytest.approx(
        PRICES.rentals["h100"].usd_per_gpu_s * HOUR_S, rel=1e-12
    )


def test_owning_a_busy_superpod_costs_less_per_gpu_hour_than_renting() -> None:
    # Sanity band, not a validation: public estimates put owned H100 cost near $1-2 per
    # GPU-hour against $2.5-3.5 on-demand rental.
    t = tco(HW, PRICES)
    assert t.rental_usd_per_gpu_hour is not None
    assert 1.0 < t.usd_per_gpu_hour < t.rental_usd_per_gpu_hour


def test_training_a_token_budget() -> None:
    t = tco(HW, PRICES, RUN)
    run = training_cost(t, 15e12)
    assert run.calendar_s == pytest.approx(15e12 / (3.0e6 * 0.90), rel=1e-12)
    assert run.owned_usd == pytest.approx(t.owned_usd_per_s * run.calendar_s, rel=1e-12)
    assert run.energy_j == pytest.approx(t.power.facility_w * run.calendar_s, rel=1e-12)
    assert run.rental_usd is not None and run.rental_usd > run.owned_usd
    with pytest.raises(SpecError, match="throughput"):
        training_cost(tco(HW, PRICES), 1e12)
    with pytest.raises(SpecError, match="token_budget"):
        training_cost(t, 0.0)


def test_bad_throughput_is_rejected() -> None:
    with pytest.raises(SpecError, match=r"goodput_frac=1\.5"):
        Throughput(tokens_per_s=1.0, mfu_frac=0.4, goodput_frac=1.5)
    with pytest.raises(SpecError, match=r"tokens_per_s=0\.0"):
        Throughput(tokens_per_s=0.0, mfu_frac=0.4)


def test_price_overrides_flow_through() -> None:
    base = tco(HW, PRICES)
    dear = tco(HW, _with_rate(PRICES, "energy_usd_per_j", 2 * PRICES.rates.energy_usd_per_j.value))
    assert dear.opex.energy_usd_per_s == pytest.approx(2 * base.opex.energy_usd_per_s, rel=1e-12)
    financed = tco(HW, _with_rate(PRICES, "cost_of_capital_per_s", 2.4e-9))
    assert financed.owned_usd_per_s > base.owned_usd_per_s


@settings(max_examples=30, deadline=None)
@given(
    goodput=st.floats(0.05, 1.0),
    more=st.floats(0.0, 0.5),
    util=st.floats(0.0, 1.0),
)
def test_more_goodput_or_less_load_never_costs_more(
    goodput: float, more: float, util: float
) -> None:
    hi = min(goodput + more, 1.0)
    a = tco(HW, PRICES, Throughput(tokens_per_s=3e6, mfu_frac=0.4, goodput_frac=goodput))
    b = tco(HW, PRICES, Throughput(tokens_per_s=3e6, mfu_frac=0.4, goodput_frac=hi))
    assert a.usd_per_million_tokens is not None and b.usd_per_million_tokens is not None
    assert b.usd_per_million_tokens <= a.usd_per_million_tokens
    idle = tco(HW, PRICES, options=TcoOptions(utilisation_frac=util))
    assert idle.power.facility_w <= tco(HW, PRICES).power.facility_w
