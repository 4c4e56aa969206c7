"""Operating cost per second: energy, maintenance, staff, colocation rent."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import pandas as pd

from scalewall.cost.capex import FACILITY_MODES, Capex
from scalewall.cost.hardware import ClusterHardware
from scalewall.cost.power import PowerDraw
from scalewall.cost.specs import PriceBook
from scalewall.errors import SpecError

YEAR_S = 365.25 * 86400.0
"""Julian year, used only to show yearly figures in tables."""


@dataclass(frozen=True, kw_only=True)
class Opex:
    """Running costs of the cluster, per second of calendar time."""

    energy_usd_per_s: float
    """Average facility power x energy price."""
    maintenance_usd_per_s: float
    """Hardware capex x maintenance share."""
    staff_usd_per_s: float
    colocation_usd_per_s: float
    """Rent for installed IT capacity (0 for an owned facility)."""
    staff_fte: float

    @property
    def total_usd_per_s(self) -> float:
        return (
            self.energy_usd_per_s
            + self.maintenance_usd_per_s
            + self.staff_usd_per_s
            + self.colocation_usd_per_s
        )

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "total_usd_per_s": self.total_usd_per_s}

    def table(self) -> pd.DataFrame:
        """One row per item, per second and per year."""
        items = {
            "energy": self.energy_usd_per_s,
            "maintenance": self.maintenance_usd_per_s,
            "staff": self.staff_usd_per_s,
            "colocation": self.colocation_usd_per_s,
        }
        return pd.DataFrame(
            [{"item": k, "usd_per_s": v, "usd_per_year": v * YEAR_S} for k, v in items.items()]
        )


def opex(
    hw: ClusterHardware,
    power: PowerDraw,
    capex: Capex,
    prices: PriceBook,
    *,
    facility: str = "owned",
) -> Opex:
    """energy = P_facility x price; maintenance = hardware capex x share; staff = (GPUs x FTE per
    GPU + [owned] IT capacity x FTE per W) x cost per FTE; colocation = IT capacity x rent."""
    if facility not in FACILITY_MODES:
        raise SpecError("facility", facility, f"valid: {', '.join(FACILITY_MODES)}")
    rates = prices.rates
    owned = facility == "owned"
    fte = hw.gpus * rates.staff_fte_per_gpu.value
    if owned:
        fte += power.it_capacity_w * rates.facility_staff_fte_per_w.value
    return Opex(
        energy_usd_per_s=power.facility_w * rates.energy_usd_per_j.value,
        maintenance_usd_per_s=capex.hardware_usd * rates.maintenance_frac_per_s.value,
        staff_usd_per_s=fte * rates.staff_usd_per_fte_s.value,
        colocation_usd_per_s=0.0
        if owned
        else power.it_capacity_w * rates.colocation_usd_per_w_s.value,
        staff_fte=fte,
    )
