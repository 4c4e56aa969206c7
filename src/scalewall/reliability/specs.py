"""Spec dataclasses for the reliability catalog kinds: failure-rate profiles and storage tiers.

Entries live in ``catalog/data/failure_rates/<id>.toml`` and ``catalog/data/storage/<id>.toml`` and
are read with the catalog's strict loader (`scalewall.catalog.build`), so an unknown or missing key
is an error naming the file and the key.

Rates are events per component-day, as the sources count them (per GPU-day, per node-day, per
NIC-day, per switch-day); `scalewall.reliability.failures` turns them into events per second for
one job.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scalewall.storage import STORAGE_KINDS, StorageTier

__all__ = ["STORAGE_KINDS", "FailureRates", "StorageTier"]


@dataclass(frozen=True, kw_only=True)
class FailureRates:
    """Failure rates by component: unexpected interruptions, plus planned maintenance apart."""

    id: str
    name: str
    source: str
    gpu_per_gpu_day: float
    """Faulty GPU, GPU system processor, silent data corruption, thermal interface and sensor."""
    hbm_per_gpu_day: float
    """GPU HBM memory errors that stop the job."""
    gpu_sram_per_gpu_day: float
    """GPU on-chip SRAM errors."""
    nvlink_per_node_day: float
    """NVLink / NVSwitch faults inside one scale-up domain, counted per node."""
    nic_per_nic_day: float
    """Scale-out NIC failures, per NIC."""
    host_cpu_per_node_day: float
    host_memory_per_node_day: float
    host_psu_per_node_day: float
    host_ssd_per_node_day: float
    host_other_per_node_day: float
    """Chassis, IO expansion board and other host parts."""
    host_maintenance_per_node_day: float
    """Unplanned host maintenance (a node pulled out of service without notice)."""
    switch_per_switch_day: float
    """A network switch failure. A leaf failure takes down every node under it."""
    cable_per_link_day: float
    """A NIC-to-leaf cable or transceiver failure, per link (one per NIC)."""
    software_per_node_day: float
    """Software bugs and dependency failures; more ranks, more chances."""
    unknown_per_node_day: float
    """Unattributed interruptions with no root cause, per node."""
    planned_per_node_day: float
    """Planned maintenance (firmware upgrades, configuration or data updates): the job
    checkpoints first, so it loses a restart but no work."""
    collective_timeout_per_link_day: float = 0.0
    """Network and collective timeouts (NCCL watchdog, link flaps that stall a collective), per
    scale-out link the job's collectives cross; a job inside one scale-up domain crosses none."""
    user_data_per_job_day: float = 0.0
    """User-code, data-pipeline and framework errors that stop a job whatever its size, per job."""
    notes: str = ""
    sources: dict[str, str] = field(default_factory=dict)
