"""BestFit: the node left with the least free CPU and GPU after placement.

Score = w_cpu (cpu_free - cpu_req) / max_cpu + w_gpu (gpu_free - gpu_req) / max_gpu, lower is
better, with maxima over the cluster's nodes; the FGD paper's ``BestFit`` baseline (Weng et al.,
ATC'23, Sec. 5) with the equal weights its simulator uses.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from scalewall.sched.cluster import GPU_MILLI, Cluster, IntArray
from scalewall.sched.jobs import Request
from scalewall.sched.policies.base import FloatArray, ScoredPlacement, register_placement


@register_placement("bestfit")
class BestFitPlacement(ScoredPlacement):
    """Least weighted free CPU + GPU left on the node."""

    name = "bestfit"
    cpu_weight: ClassVar[float] = 0.5
    """Weight of the CPU term (the GPU term gets ``1 - cpu_weight``)."""

    def node_scores(self, cluster: Cluster, request: Request, cand: IntArray) -> FloatArray:
        max_cpu = max(cluster.max_cpu_milli, 1)
        max_gpu = max(cluster.gpu_slots * GPU_MILLI, 1)
        gpu_free = cluster.node_free_milli[cand]
        cpu_left = (cluster.cpu_free[cand] - request.cpu_milli) / max_cpu
        gpu_left = (gpu_free - request.gpu_demand_milli) / max_gpu
        return np.asarray(self.cpu_weight * cpu_left + (1 - self.cpu_weight) * gpu_left)
