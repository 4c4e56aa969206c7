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


@dataclass(frozen=True, kw_only=True)
class StorageTier:
    """Where checkpoints are written and read back from.

    ``kind``: ``local_nvme`` (each node writes its own drives), ``parallel_fs`` (a shared file
    system whose aggregate bandwidth all writers split), ``object_store`` (per-node client rate,
    no shared cap in practice) or ``peer_memory`` (in-memory copies in peer nodes' host RAM).
    A cap of 0 means no cap at that level.
    """

    id: str
    name: str
    kind: str
    write_bytes_per_s_per_node: float
    """What one node can write, per direction."""
    read_bytes_per_s_per_node: float
    write_bytes_per_s_aggregate: float
    """Shared cap over all writers of the job (0: none)."""
    read_bytes_per_s_aggregate: float
    commit_latency_s: float
    """Fixed cost per checkpoint: metadata, file creation, commit of the manifest."""
    source: str
    copies: int = 1
    """Copies written per byte (peer_memory keeps replicas in other nodes)."""
    uncertain: bool = False
    notes: str = ""
    sources: dict[str, str] = field(default_factory=dict)


STORAGE_KINDS = ("local_nvme", "parallel_fs", "object_store", "peer_memory")
