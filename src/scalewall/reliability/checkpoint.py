"""Checkpoint size from the model and its sharding, write and restore time by storage tier,
synchronous vs asynchronous saving, and the restart overhead after an interruption."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from scalewall.errors import SpecError
from scalewall.reliability.specs import StorageTier


@dataclass(frozen=True, kw_only=True)
class CheckpointSpec:
    """What a checkpoint holds per parameter and how it leaves the GPU.

    The defaults are mixed-precision Adam: BLOOM-176B's full checkpoint is 14 bytes per
    parameter (bf16 weights, fp32 master weights, fp32 Adam moments; Le Scao et al., arXiv
    2211.05100: 2.3 TB).
    """

    weight_bytes_per_param: float = 2.0
    """Working weights in bf16 (BLOOM checkpoint layout)."""
    master_bytes_per_param: float = 4.0
    """fp32 master weights (BLOOM checkpoint layout)."""
    optimizer_bytes_per_param: float = 8.0
    """Adam first and second moments in fp32 (BLOOM checkpoint layout)."""
    snapshot_bytes_per_s_per_gpu: float = 63e9
    """GPU-to-host copy rate when the system gives no host link
    (`System.host_link_bytes_per_s_per_gpu`): PCIe 5.0 x16, 63 GB/s per direction (PCI-SIG line
    rate less encoding, as tabulated in stas00/ml-engineering network/README.md)."""
    asynchronous: bool = False
    """True: only the GPU-to-host snapshot blocks training; the write to storage runs behind it
    (CheckFreq, Mohan et al., FAST 2021; MegaScale Sec. 4.4). False: training waits for the
    write."""
    drain_link_share_frac: float = 0.5
    """Share of a node's storage link an asynchronous drain gets while training traffic runs on
    the same NICs. Assumption: an even split of a saturated link between two flows (fair
    sharing); 1.0 when storage has links of its own."""

    def __post_init__(self) -> None:
        for name in ("weight", "master", "optimizer"):
            name = f"{name}_bytes_per_param"
            if getattr(self, name) < 0:
                raise SpecError(name, getattr(self, name), "must be >= 0")
        rate = self.snapshot_bytes_per_s_per_gpu
        if not rate > 0:
            raise SpecError("snapshot_bytes_per_s_per_gpu", rate, "must be > 0")
        if not 0 < self.drain_link_share_frac <= 1:
            raise SpecError(
                "drain_link_share_frac", self.drain_link_share_frac, "must be in (0, 1]"
            )

    @property
    def bytes_per_param(self) -> float:
        weights = self.weight_bytes_per_param + self.master_bytes_per_param
        return weights + self.optimizer_bytes_per_param


@dataclass(frozen=True, kw_only=True)
class CheckpointLayout:
    """How the job's state is sharded over ranks (from the parallel plan)."""

    params: float
    """Total parameters of the model."""
    gpus: int
    gpus_per_node: int
    tp: int = 1
    pp: int = 1
    fully_parallel_save: bool = True
    """Every rank writes a distinct slice (Megatron-core distributed checkpoint with the
    distributed optimizer, ZeRO >= 1). False: only data-parallel replica 0 (tp x pp ranks)
    writes."""
    cluster_gpus: int = 0
    """GPUs of the whole cluster, which the storage servers are bought for (0: the job's)."""
    host_link_bytes_per_s_per_gpu: float = 0.0
    """Each GPU's share of its host link (`System.host_link_bytes_per_s_per_gpu`; 0: not
    given, `CheckpointSpec.snapshot_bytes_per_s_per_gpu` applies)."""

    def __post_init__(self) -> None:
        if not self.params > 0:
            raise SpecError("params", self.params, "must be > 0")
        for name in ("gpus", "gpus_per_node", "tp", "pp"):
            if getattr(self, name) < 1:
                raise SpecError(name, getattr(self, name), "must be >= 1")
        for name in ("cluster_gpus", "host_link_bytes_per_s_per_gpu"):
            if getattr(self, name) < 0:
                raise SpecError(name, getattr(self, name), "must be >= 0")
        if self.tp * self.pp > self.gpus:
            raise SpecError("tp*pp", self.tp * self.pp, f"must be <= gpus ({self.gpus})")

    @property
    def writers(self) -> int:
        """Ranks that write a share of the checkpoint."""
        return self.gpus if self.fully_parallel_save else self.tp * self.pp

    @property
    def writer_nodes(self) -> int:
        return max(1, math.ceil(self.writers / self.gpus_per_node))

    @property
    def storage_gpus(self) -> int:
        """The GPUs storage is bought for: the cluster's, at least the job's."""
        return max(self.cluster_gpus, self.gpus)


@dataclass(frozen=True, kw_only=True)
class CheckpointCost:
    """Size and time of one checkpoint of one job on one storage tier."""

    total_bytes: float
    bytes_per_writer: float
    bytes_per_writer_node: float
    writer_nodes: int
    snapshot_s: float
    """GPU-to-host copy."""
    write_s: float
    """Host to storage, all writers in parallel, incl. the commit latency."""
    blocking_s: float
    """Training stalls this long per checkpoint."""
    persist_s: float
    """After the stall, the checkpoint becomes durable this much later (0 when synchronous)."""
    restore_s: float
    """Read the last checkpoint back into all ranks after a restart."""
    asynchronous: bool


def checkpoint_cost(
    layout: CheckpointLayout,
    tier: StorageTier,
    spec: CheckpointSpec | None = None,
    *,
    bandwidth_scale: float = 1.0,
) -> CheckpointCost:
    """Checkpoint size, write, stall and restore times on the cluster's storage.

    snapshot_s = bytes_per_writer / host link (GPU to pinned host memory, every writer at once)
    write_s    = bytes_per_node * copies / node rate + commit, the node rate from
                 `StorageTier.node_write_bytes_per_s` (client link, the servers bought for the
                 cluster, shared caps); an asynchronous drain gets `drain_link_share_frac` of
                 the client link, training traffic the rest.
    Synchronous: stall = snapshot + write (staged through host memory, not pipelined).
    Asynchronous: stall = snapshot; durable ``write_s`` later.
    Restore reads the same shards back at the tier's read rate.
    ``bandwidth_scale`` multiplies every storage rate (what-if tables).
    """
    spec = spec or CheckpointSpec()
    if not bandwidth_scale > 0:
        raise SpecError("bandwidth_scale", bandwidth_scale, "must be > 0")
    total = layout.params * spec.bytes_per_param
    per_writer = total / layout.writers
    nodes = layout.writer_nodes
    per_node = total / nodes
    share = spec.drain_link_share_frac if spec.asynchronous else 1.0
    w_rate = tier.node_write_bytes_per_s(nodes, layout.storage_gpus, share) * bandwidth_scale
    r_rate = tier.node_read_bytes_per_s(nodes, layout.storage_gpus) * bandwidth_scale
    write_s = per_node * tier.copies / w_rate + tier.commit_latency_s
    host_link = layout.host_link_bytes_per_s_per_gpu or spec.snapshot_bytes_per_s_per_gpu
    snapshot_s = per_writer / host_link
    blocking = snapshot_s if spec.asynchronous else snapshot_s + write_s
    return CheckpointCost(
        total_bytes=total,
        bytes_per_writer=per_writer,
        bytes_per_writer_node=per_node,
        writer_nodes=nodes,
        snapshot_s=snapshot_s,
        write_s=write_s,
        blocking_s=blocking,
        persist_s=write_s if spec.asynchronous else 0.0,
        restore_s=per_node / r_rate + tier.commit_latency_s,
        asynchronous=spec.asynchronous,
    )


RESTART_PHASES = (
    "detection",
    "draining",
    "rescheduling",
    "process_start",
    "communicator_setup",
    "state_load",
    "warmup",
)
"""The phases of a restart, in order (`RestartSpec.phases`)."""
PHASE_FIELDS: tuple[str, ...] = (
    "detection_s",
    "drain_s",
    "drain_per_node_s",
    "reschedule_s",
    "process_start_s",
    "process_start_per_node_s",
    "comm_init_per_rank_s",
    "warmup_s",
)
"""The `RestartSpec` fields the phases are made of (what `RestartSpec.scaled` scales)."""


@dataclass(frozen=True, kw_only=True)
class RestartSpec:
    """Phases of a restart after an interruption, in order (`RESTART_PHASES`).

    Each phase is a fixed part plus, where it grows with the job, a per-node or per-rank part;
    state load is the checkpoint restore from the storage tier (from peers' host memory for a
    ``peer_memory`` tier, skipping the remote read). Phases without a published figure are
    marked as assumptions: they are the first knobs to set from a cluster's own logs.
    """

    detection_s: float = 150.0
    """Failure noticed: half the 5-minute health-check period of Kokolis et al. 2024 (arXiv
    2410.21680); checks run on every node in parallel, so it does not grow with the job.
    ByteRobust (arXiv 2509.16293) detects NIC faults in 30 s against a ~10 min default
    collective timeout; MegaScale (NSDI 2024) detects and diagnoses within 10 minutes."""
    drain_s: float = 30.0
    """Assumption: stop the surviving ranks and release the allocation."""
    drain_per_node_s: float = 0.005
    """Assumption: the scheduler's epilogue (process kill, node cleanup) fans out over nodes in
    a tree, mostly in parallel: 5 ms per node, 82 s at 16,384 nodes."""
    reschedule_s: float = 300.0
    """Swap the failed node for a spare and relaunch, for faults that need a new node: with
    detection this stays inside MegaScale's "detection and diagnosis < 10 min" (Jiang et al.,
    NSDI 2024, Sec. 4). A fault that leaves the nodes healthy restarts in place without it."""
    process_start_s: float = 60.0
    """Assumption: container start, Python and framework import, CUDA context, model build."""
    process_start_per_node_s: float = 0.01
    """Assumption: every node reads the same images and packages from shared storage, which
    serves them at a bounded rate: 10 ms per node, 164 s at 16,384 nodes."""
    comm_init_per_rank_s: float = 3e-3
    """Communicator set-up grows with ranks: MegaScale (Sec. 3.5) reports job initialisation of
    under 30 s beyond 10,000 GPUs after its fixes (recalled from the paper, not re-read): ~3 ms
    per rank."""
    warmup_s: float = 60.0
    """Assumption: first steps at reduced speed (compilation, allocator and data-loader warm-up)."""
    no_spare_wait_s: float = 4.0 * 3600.0
    """Assumption: wait for a repaired node (or a free one from the shared pool) when the job's
    spare pool is empty after a hardware failure."""
    node_repair_s: float = 3.0 * 86400.0
    """Assumption: a node sent to repair is out of the spare pool this long (diagnosis, part
    swap, burn-in)."""
    repair_crews: int = 0
    """Nodes repaired at once (the M/M/c queue's c, `reliability.spares`); 0: unlimited."""

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if value < 0:
                raise SpecError(name, value, "must be >= 0")

    def scaled(self, factor: float) -> RestartSpec:
        """Every restart phase (not the repair and spare waits) times ``factor`` (what-if)."""
        if not factor >= 0:
            raise SpecError("restart_scale", factor, "must be >= 0")
        scaled = {n: getattr(self, n) * factor for n in PHASE_FIELDS}
        return dataclasses.replace(self, **scaled)

    def phases(
        self, *, ranks: int, restore_s: float, nodes: int = 0, new_node: bool = True
    ) -> dict[str, float]:
        """Seconds per phase (`RESTART_PHASES`) of one restart of a ``ranks``-rank job."""
        return {
            "detection": self.detection_s,
            "draining": self.drain_s + self.drain_per_node_s * nodes,
            "rescheduling": self.reschedule_s if new_node else 0.0,
            "process_start": self.process_start_s + self.process_start_per_node_s * nodes,
            "communicator_setup": self.comm_init_per_rank_s * ranks,
            "state_load": restore_s,
            "warmup": self.warmup_s,
        }

    def restart_s(
        self, *, ranks: int, restore_s: float, nodes: int = 0, new_node: bool = True
    ) -> float:
        """Restart overhead when a spare is at hand (or none is needed): the phases' sum."""
        phases = self.phases(ranks=ranks, restore_s=restore_s, nodes=nodes, new_node=new_node)
        return sum(phases.values())

    def planned_restart_s(self, *, ranks: int, restore_s: float, nodes: int = 0) -> float:
        """Planned maintenance: no failure to detect; the rest of the restart is the same."""
        return self.restart_s(ranks=ranks, restore_s=restore_s, nodes=nodes) - self.detection_s
