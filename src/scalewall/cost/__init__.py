"""Cost and energy: network bill of materials, capex, opex, TCO and cost per training token.

Prices are catalog data with a source and date (``catalog/data/prices``), overridable by user
TOML files (``load_prices([path])``). Throughput, MFU and goodput come in as plain numbers.
"""

from __future__ import annotations

from scalewall.cost.bom import BomTier, CablingRules, NetworkBom, network_bom, port_split
from scalewall.cost.capex import (
    Capex,
    CapexLine,
    StorageSpec,
    capex,
    default_storage,
    storage_bought,
)
from scalewall.cost.hardware import (
    ClusterHardware,
    hardware,
    hardware_for_gpus,
    hardware_from_catalog,
    hardware_from_cluster,
)
from scalewall.cost.opex import Opex, opex
from scalewall.cost.power import PowerDraw, PowerModel, power_draw
from scalewall.cost.specs import PriceBook, Quote, Rate, Rates, load_prices
from scalewall.cost.tco import (
    Tco,
    TcoOptions,
    Throughput,
    TrainingCost,
    amortised_usd_per_s,
    mfu_from_tokens,
    tco,
    throughput_from_mfu,
    training_cost,
)

__all__ = [
    "BomTier",
    "CablingRules",
    "Capex",
    "CapexLine",
    "ClusterHardware",
    "NetworkBom",
    "Opex",
    "PowerDraw",
    "PowerModel",
    "PriceBook",
    "Quote",
    "Rate",
    "Rates",
    "StorageSpec",
    "Tco",
    "TcoOptions",
    "Throughput",
    "TrainingCost",
    "amortised_usd_per_s",
    "capex",
    "default_storage",
    "hardware",
    "hardware_for_gpus",
    "hardware_from_catalog",
    "hardware_from_cluster",
    "load_prices",
    "mfu_from_tokens",
    "network_bom",
    "opex",
    "port_split",
    "power_draw",
    "storage_bought",
    "tco",
    "throughput_from_mfu",
    "training_cost",
]
