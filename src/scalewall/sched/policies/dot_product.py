"""DotProd: the dot product of the node's free resources and the request (Tetris alignment).

Both vectors are (CPU, GPU) normalised by the node's capacity; the FGD authors' simulator ranks
a smaller dot product higher (Weng et al., ATC'23, baseline ``DotProd``, after Grandl et al.,
"Multi-resource packing for cluster schedulers", SIGCOMM'14), and so does this one.
"""

from __future__ import annotations

import numpy as np

from scalewall.sched.cluster import GPU_MILLI, Cluster, IntArray
from scalewall.sched.jobs import Request
from scalewall.sched.policies.base import FloatArray, ScoredPlacement, register_placement


@register_placement("dotprod")
class DotProductPlacement(ScoredPlacement):
    """Smallest normalised free-resources . request dot product."""

    name = "dotprod"

    def node_scores(self, cluster: Cluster, request: Request, cand: IntArray) -> FloatArray:
        cpu_cap = np.maximum(cluster.cpu_cap[cand], 1)
        gpu_cap = np.maximum(cluster.gpu_count[cand] * GPU_MILLI, 1)
        gpu_free = cluster.node_free_milli[cand]
        cpu_term = (cluster.cpu_free[cand] / cpu_cap) * (request.cpu_milli / cpu_cap)
        gpu_term = (gpu_free / gpu_cap) * (request.gpu_demand_milli / gpu_cap)
        return np.asarray((cpu_term + gpu_term) / 2.0)
