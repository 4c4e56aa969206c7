"""DotProd: the dot product of the node's free resources and the request (Tetris alignment).

As the FGD authors' simulator defines its ``DotProd`` baseline (Weng et al., ATC'23, Sec. 6.1;
hkust-adsl/kubernetes-scheduler-simulator ``pkg/simulator/plugin/dot_product_score.go`` with
the run scripts' ``-dimext merge -norm max``, ``pkg/utils`` ``GenerateSchedulingMatchGroups``;
after Grandl et al., "Multi-resource packing for cluster schedulers", SIGCOMM'14):

    d = (cpu_free / C_max * cpu_req / C_max + gpu_free / G_max * gpu_req / G_max) / 2
    score = floor(100 * (1 - d)),   the highest score wins

with ``cpu_free`` and ``gpu_free`` the node's free CPU and total free milli-GPU ("merge": all its
GPUs as one dimension), ``C_max`` and ``G_max`` the largest node CPU and GPU capacity in the
cluster (one normaliser for every node, so a node with little free capacity, a small node among
them, gives a small product), and the integer score of a Kubernetes score plugin (equal scores
tie; ties go to the run's node order, as the scheduler picks among them at random).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from scalewall.sched.cluster import GPU_MILLI, Cluster, IntArray
from scalewall.sched.jobs import Request
from scalewall.sched.policies.base import FloatArray, ScoredPlacement, register_placement


@register_placement("dotprod")
class DotProductPlacement(ScoredPlacement):
    """Smallest free-resources . request dot product, both normalised by the largest node."""

    name = "dotprod"
    max_node_score: ClassVar[int] = 100
    """Kubernetes' ``framework.MaxNodeScore``: the integer score range the product maps to."""

    def node_scores(self, cluster: Cluster, request: Request, cand: IntArray) -> FloatArray:
        cpu_max = max(cluster.max_cpu_milli, 1)
        gpu_max = max(cluster.gpu_slots * GPU_MILLI, 1)
        cpu_term = (cluster.cpu_free[cand] / cpu_max) * (request.cpu_milli / cpu_max)
        gpu_term = (cluster.node_free_milli[cand] / gpu_max) * (request.gpu_demand_milli / gpu_max)
        product = (cpu_term + gpu_term) / 2.0
        # A cost (lower is better): minus the plugin's truncated integer score.
        return np.asarray(-np.floor(self.max_node_score * (1.0 - product)))
