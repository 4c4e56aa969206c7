"""The cluster's storage system: one description that `cost` prices and `reliability` writes
checkpoints to.

A tier (``catalog/data/storage/<id>.toml``) gives what is bought per GPU of the cluster (storage
servers, each with its bandwidth and capacity), what one client node can move (its storage NIC)
and any shared cap above both (an object store's request limits). A job of ``n`` writer nodes on
a cluster of ``G`` GPUs writes at

    per node = min(client, servers(G) * per_server / n, shared_cap / n)       (0 terms: no cap)
    servers(G) = ceil(G / gpus_per_server)

Kept free of numpy and scipy so that the cost model can import it without the reliability package.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

from scalewall.catalog import load_entry
from scalewall.errors import SpecError

STORAGE_KINDS = ("local_nvme", "parallel_fs", "object_store", "peer_memory")
DEFAULT_STORAGE = "parallel-fs"


@dataclass(frozen=True, kw_only=True)
class StorageTier:
    """Where checkpoints are written and read back from, and what of it the cluster buys.

    ``kind``: ``local_nvme`` (each node writes its own drives), ``parallel_fs`` (storage servers
    bought with the cluster, whose bandwidth all writers split), ``object_store`` (a rented
    service: per-client rate and a shared cap from its request limits) or ``peer_memory``
    (in-memory copies in peer nodes' host RAM). A rate or cap of 0 means no limit at that level.
    """

    id: str
    name: str
    kind: str
    write_bytes_per_s_per_node: float
    """What one client node can write, per direction (its storage NIC or drives)."""
    read_bytes_per_s_per_node: float
    write_bytes_per_s_aggregate: float
    """Shared cap over all writers whatever the servers bought (0: none)."""
    read_bytes_per_s_aggregate: float
    commit_latency_s: float
    """Fixed cost per checkpoint: metadata, file creation, commit of the manifest."""
    source: str
    gpus_per_server: float = 0.0
    """Cluster GPUs per storage server bought (0: no servers are bought)."""
    write_bytes_per_s_per_server: float = 0.0
    """Write bandwidth one storage server adds, per direction."""
    read_bytes_per_s_per_server: float = 0.0
    capacity_bytes_per_server: float = 0.0
    """Usable capacity of one storage server."""
    copies: int = 1
    """Copies written per byte (peer_memory keeps replicas in other nodes)."""
    uncertain: bool = False
    notes: str = ""
    sources: dict[str, str] = field(default_factory=dict)

    def servers(self, cluster_gpus: int) -> int:
        """Storage servers bought for a cluster of ``cluster_gpus`` GPUs."""
        if self.gpus_per_server <= 0:
            return 0
        return math.ceil(cluster_gpus / self.gpus_per_server)

    def aggregate_write_bytes_per_s(self, cluster_gpus: int) -> float:
        """What all writers together can write (inf: no shared limit)."""
        return self._aggregate(
            self.write_bytes_per_s_per_server, self.write_bytes_per_s_aggregate, cluster_gpus
        )

    def aggregate_read_bytes_per_s(self, cluster_gpus: int) -> float:
        return self._aggregate(
            self.read_bytes_per_s_per_server, self.read_bytes_per_s_aggregate, cluster_gpus
        )

    def _aggregate(self, per_server: float, cap: float, cluster_gpus: int) -> float:
        limits = [math.inf]
        if self.gpus_per_server > 0:
            limits.append(self.servers(cluster_gpus) * per_server)
        if cap > 0:
            limits.append(cap)
        return min(limits)

    def node_write_bytes_per_s(
        self, nodes: int, cluster_gpus: int, client_share: float = 1.0
    ) -> float:
        """Per-node write rate with ``nodes`` writing at once; ``client_share`` of the client
        link is free for it (an asynchronous drain shares the link with training traffic)."""
        aggregate = self.aggregate_write_bytes_per_s(cluster_gpus)
        return min(self.write_bytes_per_s_per_node * client_share, aggregate / nodes)

    def node_read_bytes_per_s(self, nodes: int, cluster_gpus: int) -> float:
        return min(
            self.read_bytes_per_s_per_node, self.aggregate_read_bytes_per_s(cluster_gpus) / nodes
        )


def _check_tier(entry: StorageTier) -> StorageTier:
    if entry.kind not in STORAGE_KINDS:
        raise SpecError("kind", entry.kind, f"valid: {', '.join(STORAGE_KINDS)}", where=entry.id)
    for name in ("write_bytes_per_s_per_node", "read_bytes_per_s_per_node"):
        if getattr(entry, name) <= 0:
            raise SpecError(name, getattr(entry, name), "must be > 0", where=entry.id)
    for name in (
        "write_bytes_per_s_aggregate",
        "read_bytes_per_s_aggregate",
        "commit_latency_s",
        "gpus_per_server",
        "write_bytes_per_s_per_server",
        "read_bytes_per_s_per_server",
        "capacity_bytes_per_server",
    ):
        if getattr(entry, name) < 0:
            raise SpecError(name, getattr(entry, name), "must be >= 0 (0: none)", where=entry.id)
    if (
        entry.gpus_per_server > 0
        and min(entry.write_bytes_per_s_per_server, entry.read_bytes_per_s_per_server) <= 0
    ):
        valid = "> 0 per-server write and read bandwidth when servers are bought"
        raise SpecError(
            "write_bytes_per_s_per_server",
            entry.write_bytes_per_s_per_server,
            valid,
            where=entry.id,
        )
    if entry.copies < 1:
        raise SpecError("copies", entry.copies, "must be >= 1", where=entry.id)
    return entry


@cache
def storage_tiers() -> dict[str, StorageTier]:
    """All built-in storage tiers, by id."""
    out: dict[str, StorageTier] = {}
    folder = Path(str(resources.files("scalewall.catalog") / "data" / "storage"))
    for path in sorted(folder.glob("*.toml")):
        entry = load_entry(path, StorageTier)
        if entry.id != path.stem:
            raise SpecError(
                "id", entry.id, f"must equal the file name {path.stem!r}", where=str(path)
            )
        out[entry.id] = _check_tier(entry)
    return out


def storage_tier(tier_id: str) -> StorageTier:
    """One storage tier by id; an unknown id lists the valid ones."""
    table = storage_tiers()
    if tier_id not in table:
        raise SpecError("storage", tier_id, f"valid: {', '.join(sorted(table))}")
    return table[tier_id]


def resolve_storage(tier: str | StorageTier) -> StorageTier:
    """A tier given by id or as an object."""
    return storage_tier(tier) if isinstance(tier, str) else tier
