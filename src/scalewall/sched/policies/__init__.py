"""Scheduling policies: placement (where a job runs) and queueing (which job runs next).

One module per policy; each registers itself by name. Any queueing policy combines with any
placement policy.
"""

from __future__ import annotations

from scalewall.sched.policies import (  # noqa: F401  (imported to register)
    backfill,
    best_fit,
    dot_product,
    drf,
    fgd,
    fifo,
    gpu_clustering,
    gpu_packing,
    priority,
    quota,
    random_fit,
    sjf,
    topology,
)
from scalewall.sched.policies.base import (
    PlacementPolicy,
    make_placement,
    placement_names,
)
from scalewall.sched.policies.queueing import (
    QueuePolicy,
    SchedulerView,
    make_queue,
    queue_names,
)

__all__ = [
    "PlacementPolicy",
    "QueuePolicy",
    "SchedulerView",
    "make_placement",
    "make_queue",
    "placement_names",
    "queue_names",
]
