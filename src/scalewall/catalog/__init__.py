"""The spec catalog: accelerators, systems, links, fabrics, clusters, models and software stacks
as TOML data."""

from __future__ import annotations

from scalewall.catalog.loader import (
    accelerator,
    accelerator_id,
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
    normal_name,
    stacks,
    system,
    systems,
)
from scalewall.catalog.schema import (
    Accelerator,
    ClusterSpec,
    Fabric,
    Link,
    ModelSpec,
    Stack,
    System,
)

__all__ = [
    "Accelerator",
    "ClusterSpec",
    "Fabric",
    "Link",
    "ModelSpec",
    "Stack",
    "System",
    "accelerator",
    "accelerator_id",
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
    "normal_name",
    "stacks",
    "system",
    "systems",
]
