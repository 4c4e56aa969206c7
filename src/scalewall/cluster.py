"""Resolve a cluster from a catalog id, a TOML file, or an accelerator and a GPU count."""

from __future__ import annotations

from pathlib import Path

from scalewall import catalog
from scalewall.catalog.schema import ClusterSpec, Fabric, System
from scalewall.errors import SpecError
from scalewall.plan.topology import Cluster, cluster_from_spec, make_cluster

__all__ = ["Cluster", "default_fabric", "default_system", "resolve_cluster"]


def default_system(accelerator_id: str) -> System:
    """The catalog system built from an accelerator (the first by id if several are)."""
    canonical = catalog.accelerator_id(accelerator_id)
    if canonical is None:
        valid = sorted(set(catalog.accelerators()) | set(catalog.systems()))
        raise SpecError("gpu", accelerator_id, f"an accelerator or system id: {', '.join(valid)}")
    accelerator_id = canonical
    systems = [s for s in catalog.systems().values() if s.accelerator == accelerator_id]
    if not systems:
        raise SpecError("gpu", accelerator_id, "no catalog system uses this accelerator")
    return sorted(systems, key=lambda s: s.id)[0]


def default_fabric(system: System) -> Fabric:
    """The system's default fabric, or the 3-tier rail-optimized fabric of its NIC speed."""
    if system.default_fabric:
        return catalog.fabric(system.default_fabric)
    fabrics = sorted(catalog.fabrics().values(), key=lambda f: (-f.tiers, f.id))
    for fabric in fabrics:
        if catalog.link(fabric.link).bytes_per_s == system.nic_bytes_per_s:
            return fabric
    return fabrics[0]


def resolve_cluster(
    cluster: str | Path | None = None, *, gpu: str | None = None, gpus: int | None = None
) -> Cluster:
    """A cluster from a catalog id or TOML path, or from ``gpu`` (accelerator or system id) and
    ``gpus``. With both a cluster and ``gpus``, the cluster's design is resized to ``gpus``."""
    if cluster is not None:
        path = Path(cluster)
        if path.suffix == ".toml":
            spec = catalog.load_entry(path, ClusterSpec)
        else:
            spec = catalog.cluster_spec(str(cluster))
        if gpus is None:
            return cluster_from_spec(spec)
        system = catalog.system(spec.system)
        return make_cluster(
            system=system,
            fabric=catalog.fabric(spec.fabric),
            num_gpus=gpus,
            name=f"{spec.name} resized to {gpus} GPUs",
        )
    if gpu is None or gpus is None:
        raise SpecError("cluster", None, "give a cluster (catalog id or TOML) or --gpu and --gpus")
    system = catalog.system_named(gpu) or default_system(gpu)
    return make_cluster(system=system, fabric=default_fabric(system), num_gpus=gpus)
