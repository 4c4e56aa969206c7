"""The spec catalog: accelerators, systems, links, fabrics, clusters and models as TOML data."""

from __future__ import annotations

from scalewall.catalog.loader import (
    accelerator,
    accelerators,
    build,
    cluster_spec,
    entries,
    fabric,
    fabrics,
    link,
    links,
    load_entry,
    lookup,
    model,
    models,
    system,
    systems,
)
from scalewall.catalog.schema import Accelerator, ClusterSpec, Fabric, Link, ModelSpec, System

__all__ = [
    "Accelerator",
    "ClusterSpec",
    "Fabric",
    "Link",
    "ModelSpec",
    "System",
    "accelerator",
    "accelerators",
    "build",
    "cluster_spec",
    "entries",
    "fabric",
    "fabrics",
    "link",
    "links",
    "load_entry",
    "lookup",
    "model",
    "models",
    "system",
    "systems",
]
