"""A cluster's network as a tree of tiers, and the cluster object the step model takes.

Tier 0 is the scale-up domain (NVLink/XGMI). Above it come the scale-out switch tiers: leaf (or
rail group), spine (pod) and, for 3-tier fabrics, core. Each tier has the number of GPUs it spans,
the bandwidth one GPU gets when its traffic crosses that tier (per direction), and a one-hop
latency. A parallel group is placed by its stride in the rank order and costed on the tiers its
members span.
"""

from __future__ import annotations

from dataclasses import dataclass

from scalewall import catalog
from scalewall.catalog.schema import Accelerator, ClusterSpec, Fabric, Link, System
from scalewall.errors import SpecError


@dataclass(frozen=True, kw_only=True)
class Tier:
    """One level of the network tree."""

    name: str
    span_gpus: int
    """GPUs inside one domain of this tier (the whole cluster for the top tier)."""
    bytes_per_s_per_gpu: float
    """Per-GPU bandwidth per direction for traffic that must cross this tier."""
    hop_latency_s: float
    """Switch latency of one traversal up to this tier and back down."""
    in_network_reduction: bool
    scale_up: bool
    hashed_paths: int = 0
    """Equal-cost uplinks a flow is hashed over when it crosses this tier (static ECMP on
    Ethernet); 0 where the fabric routes adaptively (InfiniBand) or inside a switch."""
    alltoall_bytes_per_s_per_gpu: float = 0.0
    """Bus bandwidth per GPU of an all-to-all of grouped sends and receives where it is measured
    below the ring collectives' (``Accelerator.scale_up_alltoall_bytes_per_s``); 0: none."""


@dataclass(frozen=True, kw_only=True)
class Cluster:
    """A resolved cluster: hardware specs, size and network tiers."""

    name: str
    accelerator: Accelerator
    system: System
    link: Link
    fabric: Fabric
    num_gpus: int
    tiers: tuple[Tier, ...]

    @property
    def gpus_per_node(self) -> int:
        return self.system.gpus_per_node

    @property
    def num_nodes(self) -> int:
        return -(-self.num_gpus // self.system.gpus_per_node)


def _radix(fabric: Fabric, link: Link) -> int:
    return fabric.switch_radix or link.switch_radix


def leaf_span_gpus(system: System, fabric: Fabric, link: Link) -> int:
    """GPUs reachable through one leaf (ToR) or one rail group without crossing a spine.

    Rail-optimized: NIC k of each node goes to leaf k of the group, so one group of
    ``gpus_per_node`` leaves serves radix/2 nodes (the other half of the ports go up).
    Top-of-rack: one leaf's radix/2 down ports serve radix/2 NICs.
    """
    if fabric.leaf_gpus:
        return fabric.leaf_gpus
    down_ports = _radix(fabric, link) // 2
    if fabric.wiring == "rail-optimized":
        nodes = down_ports
    else:
        nodes = max(down_ports // max(system.nics_per_node, 1), 1)
    return max(nodes * system.gpus_per_node, system.scale_up_domain_gpus)


def pod_span_gpus(system: System, fabric: Fabric, link: Link) -> int:
    """GPUs under one spine plane: a full 2-tier fat tree of radix k has k^2/2 endpoints."""
    if fabric.pod_gpus:
        return fabric.pod_gpus
    radix = _radix(fabric, link)
    ports = radix * radix // 2
    return ports * system.gpus_per_node // max(system.nics_per_node, 1)


def build_tiers(
    system: System, fabric: Fabric, link: Link, accelerator: Accelerator, num_gpus: int
) -> tuple[Tier, ...]:
    """The tier list of a cluster of ``num_gpus``; tiers above what the cluster needs are dropped.

    Oversubscription divides the per-GPU bandwidth of traffic that crosses a tier; hop latency
    counts the switch traversals up to the tier and back (1, 3, 5 switches for leaf, spine, core).
    """
    per_gpu = system.nics_per_node * system.nic_bytes_per_s / system.gpus_per_node
    tiers = [
        Tier(
            name="scale-up",
            span_gpus=system.scale_up_domain_gpus,
            bytes_per_s_per_gpu=accelerator.scale_up_bytes_per_s,
            hop_latency_s=0.0,
            in_network_reduction=system.scale_up_in_network_reduction,
            scale_up=True,
            alltoall_bytes_per_s_per_gpu=accelerator.scale_up_alltoall_bytes_per_s,
        )
    ]
    spans = [leaf_span_gpus(system, fabric, link)]
    if fabric.tiers == 3:
        spans.append(pod_span_gpus(system, fabric, link))
    capacity = pod_span_gpus(system, fabric, link) if fabric.tiers == 2 else 2**62
    if num_gpus > capacity:
        raise SpecError(
            "gpus",
            num_gpus,
            f"fabric {fabric.id!r} ({fabric.tiers} tiers) spans at "
            f"most {capacity} GPUs; use a 3-tier fabric",
            where=fabric.id,
        )
    spans.append(num_gpus)
    oversub = 1.0
    for level, name in enumerate(["leaf", "spine", "core"][: fabric.tiers]):
        if tiers[-1].span_gpus >= num_gpus:
            break
        if level >= 1:
            oversub *= fabric.oversubscription[level - 1]
        hashed = 0
        if level >= 1 and link.transport == "roce":
            below = tiers[-1].span_gpus * system.nics_per_node / system.gpus_per_node
            hashed = max(int(below / fabric.oversubscription[level - 1]), 1)
        tiers.append(
            Tier(
                name=name,
                hashed_paths=hashed,
                span_gpus=max(min(spans[level], num_gpus), tiers[-1].span_gpus),
                bytes_per_s_per_gpu=per_gpu / oversub,
                hop_latency_s=2.0 * (2 * level + 1) * link.switch_latency_s,
                in_network_reduction=fabric.in_network_reduction,
                scale_up=False,
            )
        )
    return tuple(tiers)


def make_cluster(*, system: System, fabric: Fabric, num_gpus: int, name: str = "") -> Cluster:
    """Resolve a cluster from a system design, a fabric and a GPU count (catalog lookups)."""
    return make_cluster_from_parts(
        system=system,
        fabric=fabric,
        link=catalog.link(fabric.link),
        accelerator=catalog.accelerator(system.accelerator),
        num_gpus=num_gpus,
        name=name,
    )


def make_cluster_from_parts(
    *,
    system: System,
    fabric: Fabric,
    link: Link,
    accelerator: Accelerator,
    num_gpus: int,
    name: str = "",
) -> Cluster:
    """A cluster from explicit specs (none looked up in the catalog)."""
    if num_gpus < 1:
        raise SpecError("gpus", num_gpus, "must be a positive number of GPUs")
    if len(fabric.oversubscription) != fabric.tiers - 1:
        raise SpecError(
            "oversubscription",
            fabric.oversubscription,
            f"needs {fabric.tiers - 1} entries for a {fabric.tiers}-tier fabric",
            where=fabric.id,
        )
    tiers = build_tiers(system, fabric, link, accelerator, num_gpus)
    return Cluster(
        name=name or f"{num_gpus}x {accelerator.id}",
        accelerator=accelerator,
        system=system,
        link=link,
        fabric=fabric,
        num_gpus=num_gpus,
        tiers=tiers,
    )


def cluster_from_spec(spec: ClusterSpec) -> Cluster:
    """A catalog (or user TOML) cluster entry resolved into a Cluster."""
    system = catalog.system(spec.system)
    return make_cluster(
        system=system,
        fabric=catalog.fabric(spec.fabric),
        num_gpus=spec.nodes * system.gpus_per_node,
        name=spec.name,
    )
