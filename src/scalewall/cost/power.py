"""IT and facility power of a cluster: accelerators, hosts and network, times PUE."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from scalewall.cost.bom import NetworkBom
from scalewall.cost.hardware import ClusterHardware
from scalewall.cost.specs import PriceBook
from scalewall.errors import SpecError


@dataclass(frozen=True, kw_only=True)
class PowerModel:
    """How accelerator and host power follow from the catalog."""

    gpu_idle_power_frac: float = 0.10
    """Accelerator power at zero load as a share of TDP. Estimate: an idle H100 SXM draws about
    70 W of its 700 W TDP as reported by nvidia-smi (unverified; only matters below full load)."""
    host_to_gpu_power_ratio: float = 0.82
    """Host power (CPUs, memory, NICs, NVSwitches, fans) over the GPUs' TDP, for systems
    whose catalog entry has no nameplate power. From the DGX H100 datasheet: 10.2 kW max with
    8 x 700 W GPUs -> (10,200 - 5,600) / 5,600 = 0.82."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.gpu_idle_power_frac <= 1.0:
            raise SpecError("gpu_idle_power_frac", self.gpu_idle_power_frac, "a fraction in 0..1")
        if not self.host_to_gpu_power_ratio >= 0.0:
            raise SpecError("host_to_gpu_power_ratio", self.host_to_gpu_power_ratio, "must be >= 0")


@dataclass(frozen=True, kw_only=True)
class PowerDraw:
    """Average and installed power. ``it_w`` is the average IT load at the given utilisation;
    ``it_capacity_w`` the installed (nameplate) IT load the facility is sized for."""

    utilisation_frac: float
    gpus_w: float
    hosts_w: float
    network_w: float
    it_w: float
    it_capacity_w: float
    pue: float
    facility_w: float
    """Average draw from the grid: it_w x PUE."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def host_power_w(hw: ClusterHardware, model: PowerModel) -> float:
    """Power of one node besides its accelerators: nameplate minus GPU TDP, else a TDP share."""
    gpu_tdp_w = hw.system.gpus_per_node * hw.accelerator.tdp_w
    if hw.system.power_w > 0.0:
        return max(hw.system.power_w - gpu_tdp_w, 0.0)
    return gpu_tdp_w * model.host_to_gpu_power_ratio


def network_power_w(hw: ClusterHardware, bom: NetworkBom, prices: PriceBook) -> float:
    """Switches and optical transceivers, plus NICs where the server price excludes them
    (NICs inside a server are in its nameplate power)."""
    watts = bom.switches * prices.switch(hw.link.id).power_w
    watts += bom.transceivers * prices.optic(hw.link.id).transceiver_power_w
    if not prices.server(hw.system.id).includes_nics:
        watts += bom.nics * prices.nic(hw.link.id).power_w
    return watts


def power_draw(
    hw: ClusterHardware,
    bom: NetworkBom,
    prices: PriceBook,
    *,
    utilisation_frac: float = 1.0,
    model: PowerModel | None = None,
) -> PowerDraw:
    """P_gpu = N TDP (idle + (1 - idle) u); hosts and network at their full figure (upper bound);
    facility = IT x PUE."""
    if not 0.0 <= utilisation_frac <= 1.0:
        raise SpecError("utilisation_frac", utilisation_frac, "a fraction in 0..1")
    model = model or PowerModel()
    tdp_w = hw.gpus * hw.accelerator.tdp_w
    idle = model.gpu_idle_power_frac
    gpus_w = tdp_w * (idle + (1.0 - idle) * utilisation_frac)
    hosts_w = hw.nodes * host_power_w(hw, model)
    network_w = network_power_w(hw, bom, prices)
    it_w = gpus_w + hosts_w + network_w
    pue = prices.rates.pue.value
    return PowerDraw(
        utilisation_frac=utilisation_frac,
        gpus_w=gpus_w,
        hosts_w=hosts_w,
        network_w=network_w,
        it_w=it_w,
        it_capacity_w=tdp_w + hosts_w + network_w,
        pue=pue,
        facility_w=it_w * pue,
    )
