"""The spec catalog: accelerators, systems, links, fabrics, clusters and models as TOML data."""

from __future__ import annotations

from scalewall.catalog.loader import (
    accelerator,
    build,
    cluster_spec,
    entries,
    fabric,
    link,
    load_entry,
    lookup,
    model,
    system,
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
    "build",
    "cluster_spec",
    "entries",
    "fabric",
    "link",
    "load_entry",
    "lookup",
    "model",
    "system",
]
