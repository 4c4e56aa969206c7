"""The hardware a cost is computed for: a system design, a fabric and a node count.

A thin adapter over the catalog. When ``scalewall.cluster.Cluster`` lands, a cluster resolves
to this record (system, accelerator, fabric, link, nodes) and the cost model is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from scalewall import catalog
from scalewall.catalog import Accelerator, Fabric, Link, System
from scalewall.errors import SpecError
from scalewall.plan.topology import Cluster


@dataclass(frozen=True, kw_only=True)
class ClusterHardware:
    """What is bought: ``nodes`` servers of ``system`` joined by ``fabric`` over ``link``."""

    name: str
    system: System
    accelerator: Accelerator
    fabric: Fabric
    link: Link
    nodes: int

    @property
    def gpus(self) -> int:
        return self.nodes * self.system.gpus_per_node

    @property
    def switch_radix(self) -> int:
        return self.fabric.switch_radix or self.link.switch_radix


def hardware(system_id: str, fabric_id: str, nodes: int, *, name: str = "") -> ClusterHardware:
    """Resolve catalog ids into a ``ClusterHardware`` of ``nodes`` servers."""
    if nodes < 1:
        raise SpecError("nodes", nodes, "a cluster has at least one node")
    system = catalog.system(system_id)
    fabric = catalog.fabric(fabric_id)
    return ClusterHardware(
        name=name or f"{nodes} x {system_id} on {fabric_id}",
        system=system,
        accelerator=catalog.accelerator(system.accelerator),
        fabric=fabric,
        link=catalog.link(fabric.link),
        nodes=nodes,
    )


def hardware_from_catalog(cluster_id: str) -> ClusterHardware:
    """A built-in cluster (``catalog/data/clusters``) as ``ClusterHardware``."""
    spec = catalog.cluster_spec(cluster_id)
    return hardware(spec.system, spec.fabric, spec.nodes, name=spec.id)


def hardware_for_gpus(system_id: str, fabric_id: str, gpus: int) -> ClusterHardware:
    """Enough whole nodes of ``system_id`` for ``gpus`` accelerators (rounded up)."""
    per_node = catalog.system(system_id).gpus_per_node
    if gpus < 1:
        raise SpecError("gpus", gpus, "at least one accelerator")
    return hardware(system_id, fabric_id, -(-gpus // per_node))


def hardware_from_cluster(cluster: Cluster) -> ClusterHardware:
    """The hardware of a resolved ``scalewall.cluster.Cluster`` (whole nodes)."""
    return ClusterHardware(
        name=cluster.name,
        system=cluster.system,
        accelerator=cluster.accelerator,
        fabric=cluster.fabric,
        link=cluster.link,
        nodes=cluster.num_nodes,
    )
