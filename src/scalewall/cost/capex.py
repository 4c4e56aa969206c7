"""Capital cost: servers, network bill of materials, storage and facility."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import pandas as pd

from scalewall.cost.bom import NetworkBom
from scalewall.cost.hardware import ClusterHardware
from scalewall.cost.power import PowerDraw
from scalewall.cost.specs import PriceBook
from scalewall.errors import SpecError
from scalewall.storage import DEFAULT_STORAGE, StorageTier, resolve_storage

CATEGORIES = ("servers", "network", "storage", "facility")
FACILITY_MODES = ("owned", "colocation")


@dataclass(frozen=True, kw_only=True)
class StorageSpec:
    """Shared training storage to buy."""

    capacity_bytes: float
    bandwidth_bytes_per_s: float
    """Aggregate read/write bandwidth."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            if not getattr(self, f.name) >= 0.0:
                raise SpecError(f.name, getattr(self, f.name), "must be >= 0")


def storage_bought(tier: str | StorageTier, gpus: int) -> StorageSpec:
    """The storage servers a cluster of ``gpus`` GPUs buys for ``tier``: the same description
    the reliability model writes checkpoints to (`scalewall.storage`). A rented tier (object
    store) or node-local drives buy none."""
    spec = resolve_storage(tier)
    servers = spec.servers(gpus)
    return StorageSpec(
        capacity_bytes=servers * spec.capacity_bytes_per_server,
        bandwidth_bytes_per_s=servers * spec.write_bytes_per_s_per_server,
    )


def default_storage(
    gpus: int, prices: PriceBook, tier: str | StorageTier = DEFAULT_STORAGE
) -> StorageSpec:
    """Storage bought with the cluster: the servers of ``tier`` (`storage_bought`); a tier that
    buys none falls back to the price book's per-accelerator sizing rates."""
    bought = storage_bought(tier, gpus)
    if bought.capacity_bytes > 0:
        return bought
    rates = prices.rates
    return StorageSpec(
        capacity_bytes=gpus * rates.storage_bytes_per_gpu.value,
        bandwidth_bytes_per_s=gpus * rates.storage_bytes_per_s_per_gpu.value,
    )


@dataclass(frozen=True, kw_only=True)
class CapexLine:
    """One bill-of-materials line."""

    category: str
    item: str
    quantity: float
    unit: str
    unit_usd: float
    price_key: str
    """``section.key`` of the quote used (its source and date are in the price book)."""

    @property
    def total_usd(self) -> float:
        return self.quantity * self.unit_usd


@dataclass(frozen=True, kw_only=True)
class Capex:
    """Capital cost as bill-of-materials lines."""

    lines: tuple[CapexLine, ...]

    def category_usd(self, category: str) -> float:
        return sum(line.total_usd for line in self.lines if line.category == category)

    @property
    def total_usd(self) -> float:
        return sum(line.total_usd for line in self.lines)

    @property
    def hardware_usd(self) -> float:
        """Servers, network and storage: what maintenance contracts cover."""
        return self.total_usd - self.category_usd("facility")

    def to_dict(self) -> dict[str, Any]:
        return {
            "total_usd": self.total_usd,
            "by_category_usd": {c: self.category_usd(c) for c in CATEGORIES},
            "lines": [{**dataclasses.asdict(x), "total_usd": x.total_usd} for x in self.lines],
        }

    def table(self) -> pd.DataFrame:
        """One row per line with its total."""
        return pd.DataFrame(self.to_dict()["lines"])


def _line(category: str, item: str, qty: float, unit: str, usd: float, key: str) -> CapexLine:
    return CapexLine(
        category=category, item=item, quantity=qty, unit=unit, unit_usd=usd, price_key=key
    )


def network_lines(hw: ClusterHardware, bom: NetworkBom, prices: PriceBook) -> list[CapexLine]:
    """Switches, NICs (when the server excludes them), transceivers and cables."""
    lid = hw.link.id
    optic = prices.optic(lid)
    lines = [
        _line(
            "network", "switches", bom.switches, "switch", prices.switch(lid).usd, f"switches.{lid}"
        )
    ]
    if not prices.server(hw.system.id).includes_nics:
        lines.append(_line("network", "NICs", bom.nics, "port", prices.nic(lid).usd, f"nics.{lid}"))
    lines += [
        _line(
            "network",
            "transceivers",
            bom.transceivers,
            "port end",
            optic.transceiver_usd,
            f"optics.{lid}",
        ),
        _line(
            "network", "fiber cables", bom.fiber_cables, "link", optic.fiber_usd, f"optics.{lid}"
        ),
        _line("network", "DAC cables", bom.dac_cables, "link", optic.dac_usd, f"optics.{lid}"),
    ]
    return lines


def capex(
    hw: ClusterHardware,
    bom: NetworkBom,
    power: PowerDraw,
    prices: PriceBook,
    *,
    storage: StorageSpec | None = None,
    facility: str = "owned",
) -> Capex:
    """Bill of materials priced from the price book. ``facility="colocation"`` buys no building
    (its rent is opex); ``owned`` builds for the installed IT capacity."""
    if facility not in FACILITY_MODES:
        raise SpecError("facility", facility, f"valid: {', '.join(FACILITY_MODES)}")
    server = prices.server(hw.system.id)
    per_node_usd = server.usd * (hw.system.gpus_per_node / server.gpus if server.gpus else 1.0)
    storage = storage or default_storage(hw.gpus, prices)
    rates = prices.rates
    lines = [
        _line(
            "servers",
            f"{hw.system.name} servers",
            hw.nodes,
            "node",
            per_node_usd,
            f"servers.{hw.system.id}",
        )
    ]
    lines += network_lines(hw, bom, prices)
    lines += [
        _line(
            "storage",
            "storage capacity",
            storage.capacity_bytes,
            "byte",
            rates.storage_usd_per_byte.value,
            "rates.storage_usd_per_byte",
        ),
        _line(
            "storage",
            "storage bandwidth",
            storage.bandwidth_bytes_per_s,
            "byte/s",
            rates.storage_usd_per_bytes_per_s.value,
            "rates.storage_usd_per_bytes_per_s",
        ),
    ]
    if facility == "owned":
        lines.append(
            _line(
                "facility",
                "facility (IT capacity)",
                power.it_capacity_w,
                "W",
                rates.facility_usd_per_w.value,
                "rates.facility_usd_per_w",
            )
        )
    return Capex(lines=tuple(lines))
