"""GpuPacking: fill GPUs already in use, then nodes already in use, then idle nodes.

Three tiers, best first (the FGD paper's ``GpuPacking`` baseline): (0) the request fits on a
partly used GPU (the fullest such GPU wins); (1) it needs whole free GPUs on a node that already
runs something (fewer whole GPUs used wins); (2) the node is idle (smaller node wins).
CPU-only requests score equally everywhere.
"""

from __future__ import annotations

import numpy as np

from scalewall.sched.cluster import GPU_MILLI, Cluster, IntArray
from scalewall.sched.jobs import Request
from scalewall.sched.policies.base import FloatArray, ScoredPlacement, register_placement


@register_placement("packing")
class GpuPackingPlacement(ScoredPlacement):
    """Tiered packing of GPU work."""

    name = "packing"

    def node_scores(self, cluster: Cluster, request: Request, cand: IntArray) -> FloatArray:
        if request.num_gpu == 0:
            return np.zeros(cand.size)
        free = cluster.gpu_free_milli[cand]
        count = cluster.gpu_count[cand]
        full = (free >= GPU_MILLI).sum(axis=1)
        idle = full == count
        partial_fit = np.where((free >= request.gpu_milli) & (free < GPU_MILLI), free, GPU_MILLI)
        best_partial = partial_fit.min(axis=1)
        width = cluster.gpu_slots + 1
        tier0 = best_partial / GPU_MILLI
        tier1 = 1.0 + request.num_gpu / width
        tier2 = 2.0 + count / width
        shared = (request.num_gpu == 1) & (best_partial < GPU_MILLI)
        return np.where(idle, tier2, np.where(shared, tier0, tier1))
