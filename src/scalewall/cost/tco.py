"""Total cost of ownership and what it buys: cost per GPU-hour, per effective PFLOP-day, per
million training tokens, and the cost, energy and calendar time to train a token budget.

Owned cost rate (USD/s) = sum over capex categories of amortised capex + opex, where capex C
with lifetime T and continuous cost of capital r is paid at C r / (1 - e^{-rT}) (C / T at r = 0).
A training run is assumed to hold the whole cluster for its calendar time; goodput (the share of
that time that advances training) comes from the reliability model as a plain number.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from scalewall.cost.bom import CablingRules, NetworkBom, network_bom
from scalewall.cost.capex import CATEGORIES, Capex, StorageSpec, capex
from scalewall.cost.hardware import ClusterHardware
from scalewall.cost.opex import Opex, opex
from scalewall.cost.power import PowerDraw, PowerModel, power_draw
from scalewall.cost.specs import PriceBook
from scalewall.errors import SpecError
from scalewall.units import DAY_S, HOUR_S, PETA

PFLOP_DAY = PETA * DAY_S
"""FLOP in one PFLOP/s-day."""
MILLION = 1e6


@dataclass(frozen=True, kw_only=True)
class Throughput:
    """What the cluster achieves on the training job (from the step model and reliability)."""

    tokens_per_s: float
    """Training tokens per second of the whole cluster while it runs (no failures)."""
    mfu_frac: float | None = None
    """Model FLOP utilisation against the accelerators' dense BF16 peak (None: unknown, no
    cost per effective PFLOP-day)."""
    goodput_frac: float = 1.0
    """Share of calendar time that advances training (failures, restarts, checkpoints)."""

    def __post_init__(self) -> None:
        if not self.tokens_per_s > 0.0:
            raise SpecError("tokens_per_s", self.tokens_per_s, "must be > 0")
        for name in ("mfu_frac", "goodput_frac"):
            value = getattr(self, name)
            if value is not None and not 0.0 < value <= 1.0:
                raise SpecError(name, value, "a fraction in (0, 1]")

    @property
    def effective_tokens_per_s(self) -> float:
        return self.tokens_per_s * self.goodput_frac


@dataclass(frozen=True, kw_only=True)
class TcoOptions:
    """Choices that are not prices."""

    facility: str = "owned"
    """``owned`` (build the facility, amortise it) or ``colocation`` (rent per kW)."""
    utilisation_frac: float = 1.0
    """Average accelerator load for power: 1.0 prices energy at TDP (an upper bound)."""
    storage: StorageSpec | None = None
    """None: the default storage tier's servers for the cluster (`capex.storage_bought`)."""
    power_model: PowerModel = field(default_factory=PowerModel)
    cabling: CablingRules = field(default_factory=CablingRules)


def throughput_from_mfu(
    hw: ClusterHardware, flop_per_token: float, mfu_frac: float, goodput_frac: float = 1.0
) -> Throughput:
    """Tokens/s that ``mfu_frac`` of the cluster's BF16 peak buys at ``flop_per_token`` model
    FLOPs per trained token: T = MFU x peak x N / (FLOP per token)."""
    if not flop_per_token > 0.0:
        raise SpecError("flop_per_token", flop_per_token, "must be > 0")
    if not 0.0 < mfu_frac <= 1.0:
        raise SpecError("mfu_frac", mfu_frac, "a fraction in (0, 1]")
    peak = hw.accelerator.peak_16bit_flop_per_s * hw.gpus
    return Throughput(
        tokens_per_s=mfu_frac * peak / flop_per_token, mfu_frac=mfu_frac, goodput_frac=goodput_frac
    )


def mfu_from_tokens(hw: ClusterHardware, flop_per_token: float, tokens_per_s: float) -> float:
    """MFU implied by a measured throughput: tokens/s x FLOP per token / (peak x N)."""
    return tokens_per_s * flop_per_token / (hw.accelerator.peak_16bit_flop_per_s * hw.gpus)


def amortised_usd_per_s(capex_usd: float, lifetime_s: float, rate_per_s: float) -> float:
    """Level payment per second that repays ``capex_usd`` over ``lifetime_s`` at continuous
    rate ``rate_per_s``: C r / (1 - e^{-rT}); C / T when r = 0."""
    if rate_per_s == 0.0:
        return capex_usd / lifetime_s
    return capex_usd * rate_per_s / -math.expm1(-rate_per_s * lifetime_s)


def _lifetime_s(prices: PriceBook, category: str) -> float:
    """Amortisation life of a capex category (``CATEGORIES``)."""
    rates = prices.rates
    lives = {
        "servers": rates.server_lifetime_s,
        "network": rates.network_lifetime_s,
        "storage": rates.storage_lifetime_s,
        "facility": rates.facility_lifetime_s,
    }
    return lives[category].value


@dataclass(frozen=True, kw_only=True)
class Tco:
    """Cost of one cluster, owned or rented, and what it buys."""

    cluster: str
    accelerator: str
    gpus: int
    nodes: int
    facility: str
    bom: NetworkBom
    power: PowerDraw
    capex: Capex
    opex: Opex
    amortised_usd_per_s: dict[str, float]
    """Amortised capex per second, by category."""
    owned_usd_per_s: float
    """Amortised capex + opex, per second of calendar time."""
    usd_per_gpu_hour: float
    """Owned cost of one accelerator for one hour."""
    rental_usd_per_gpu_hour: float | None
    rental_key: str
    throughput: Throughput | None
    effective_flop_per_s: float | None
    """MFU x peak x GPUs x goodput."""
    usd_per_effective_pflop_day: float | None
    usd_per_million_tokens: float | None
    rental_usd_per_million_tokens: float | None

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        for name in ("bom", "power", "capex", "opex"):
            out[name] = getattr(self, name).to_dict()
        out["throughput"] = dataclasses.asdict(self.throughput) if self.throughput else None
        return out

    def table(self) -> pd.DataFrame:
        """The headline figures, one per row (value in the unit its name carries)."""
        rows = {
            "gpus": self.gpus,
            "capex_usd": self.capex.total_usd,
            "opex_usd_per_year": self.opex.total_usd_per_s * (365.25 * DAY_S),
            "it_capacity_w": self.power.it_capacity_w,
            "facility_w": self.power.facility_w,
            "usd_per_gpu_hour": self.usd_per_gpu_hour,
            "rental_usd_per_gpu_hour": self.rental_usd_per_gpu_hour,
            "usd_per_effective_pflop_day": self.usd_per_effective_pflop_day,
            "usd_per_million_tokens": self.usd_per_million_tokens,
            "rental_usd_per_million_tokens": self.rental_usd_per_million_tokens,
        }
        return pd.DataFrame({"metric": list(rows), self.cluster: list(rows.values())})


def tco(
    hw: ClusterHardware,
    prices: PriceBook,
    throughput: Throughput | None = None,
    options: TcoOptions | None = None,
) -> Tco:
    """Price ``hw`` from ``prices``; per-token and per-FLOP figures need ``throughput``."""
    options = options or TcoOptions()
    bom = network_bom(hw, options.cabling)
    power = power_draw(
        hw, bom, prices, utilisation_frac=options.utilisation_frac, model=options.power_model
    )
    cap = capex(hw, bom, power, prices, storage=options.storage, facility=options.facility)
    ops = opex(hw, power, cap, prices, facility=options.facility)
    rate = prices.rates.cost_of_capital_per_s.value
    amortised = {
        c: amortised_usd_per_s(cap.category_usd(c), _lifetime_s(prices, c), rate)
        for c in CATEGORIES
    }
    owned = sum(amortised.values()) + ops.total_usd_per_s
    rental = prices.rental(hw.accelerator.id)
    rental_gpu_s = rental[1].usd_per_gpu_s if rental else None
    eff_flop = eff_tokens = None
    if throughput is not None:
        eff_tokens = throughput.effective_tokens_per_s
        if throughput.mfu_frac is not None:
            peak = hw.accelerator.peak_16bit_flop_per_s
            eff_flop = throughput.mfu_frac * peak * hw.gpus * throughput.goodput_frac
    return Tco(
        cluster=hw.name,
        accelerator=hw.accelerator.id,
        gpus=hw.gpus,
        nodes=hw.nodes,
        facility=options.facility,
        bom=bom,
        power=power,
        capex=cap,
        opex=ops,
        amortised_usd_per_s=amortised,
        owned_usd_per_s=owned,
        usd_per_gpu_hour=owned / hw.gpus * HOUR_S,
        rental_usd_per_gpu_hour=None if rental_gpu_s is None else rental_gpu_s * HOUR_S,
        rental_key=f"rentals.{rental[0]}" if rental else "",
        throughput=throughput,
        effective_flop_per_s=eff_flop,
        usd_per_effective_pflop_day=None if eff_flop is None else owned / eff_flop * PFLOP_DAY,
        usd_per_million_tokens=None if eff_tokens is None else owned / eff_tokens * MILLION,
        rental_usd_per_million_tokens=None
        if eff_tokens is None or rental_gpu_s is None
        else rental_gpu_s * hw.gpus / eff_tokens * MILLION,
    )


@dataclass(frozen=True, kw_only=True)
class TrainingCost:
    """Cost, energy and calendar time to train ``token_budget`` tokens on one cluster."""

    cluster: str
    token_budget: float
    calendar_s: float
    """token_budget / (tokens_per_s x goodput)."""
    owned_usd: float
    rental_usd: float | None
    energy_j: float
    """Average facility power x calendar time."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def training_cost(t: Tco, token_budget: float) -> TrainingCost:
    """Calendar time, owned and rented cost and facility energy to train ``token_budget``."""
    if t.throughput is None:
        raise SpecError("tokens_per_s", None, "a token budget needs the cluster's throughput")
    if not token_budget > 0.0:
        raise SpecError("token_budget", token_budget, "must be > 0")
    calendar_s = token_budget / t.throughput.effective_tokens_per_s
    rental = t.rental_usd_per_gpu_hour
    return TrainingCost(
        cluster=t.cluster,
        token_budget=token_budget,
        calendar_s=calendar_s,
        owned_usd=t.owned_usd_per_s * calendar_s,
        rental_usd=None if rental is None else rental / HOUR_S * t.gpus * calendar_s,
        energy_j=t.power.facility_w * calendar_s,
    )
