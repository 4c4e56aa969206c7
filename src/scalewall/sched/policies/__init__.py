"""Scheduling policies: placement (where a job runs) and queueing (which job runs next).

One module per policy; each registers itself by name. Any queueing policy combines with any
placement policy.
"""

from __future__ import annotations

from scalewall.sched.policies import (  # noqa: F401  (imported to register)
    best_fit,
    dot_product,
    fgd,
    gpu_clustering,
    gpu_packing,
    random_fit,
    topology,
)
from scalewall.sched.policies.base import (
    PlacementPolicy,
    make_placement,
    placement_names,
)

__all__ = ["PlacementPolicy", "make_placement", "placement_names"]
