"""GpuClustering: put requests with the same GPU share together.

A node's "affinity" is the set of per-GPU request sizes (``gpu_milli``) it runs. Tiers, best
first (the FGD paper's ``GpuClustering`` baseline): the node runs only this size; it runs this
size among others; it is idle; it runs only other sizes. Within a tier, less free GPU wins.
"""

from __future__ import annotations

import numpy as np

from scalewall.sched.cluster import GPU_MILLI, Cluster, IntArray, Placement
from scalewall.sched.jobs import JobTable, Request
from scalewall.sched.policies.base import FloatArray, ScoredPlacement, register_placement


@register_placement("clustering")
class GpuClusteringPlacement(ScoredPlacement):
    """Cluster equal GPU shares on the same nodes."""

    name = "clustering"

    def prepare(self, cluster: Cluster, jobs: JobTable | None, rng: np.random.Generator) -> None:
        super().prepare(cluster, jobs, rng)
        self.columns: dict[int, int] = {}
        self.counts = np.zeros((cluster.num_nodes, 4), dtype=np.int64)

    def _column(self, gpu_milli: int) -> int:
        if gpu_milli not in self.columns:
            self.columns[gpu_milli] = len(self.columns)
            if len(self.columns) > self.counts.shape[1]:
                grown = np.zeros((self.counts.shape[0], 2 * self.counts.shape[1]), np.int64)
                grown[:, : self.counts.shape[1]] = self.counts
                self.counts = grown
        return self.columns[gpu_milli]

    def allocated(self, placement: Placement, request: Request) -> None:
        if request.num_gpu:
            self.counts[list(placement.nodes), self._column(request.gpu_milli)] += 1

    def released(self, placement: Placement, request: Request) -> None:
        if request.num_gpu:
            self.counts[list(placement.nodes), self._column(request.gpu_milli)] -= 1

    def node_scores(self, cluster: Cluster, request: Request, cand: IntArray) -> FloatArray:
        if request.num_gpu == 0:
            return np.zeros(cand.size)
        column = self._column(request.gpu_milli)
        counts = self.counts[cand]
        mine = counts[:, column] > 0
        kinds = (counts > 0).sum(axis=1)
        tier = np.where(mine, np.where(kinds == 1, 0.0, 1.0), np.where(kinds == 0, 2.0, 3.0))
        span = max(cluster.gpu_slots * GPU_MILLI, 1)
        return np.asarray(tier + cluster.node_free_milli[cand] / (span + 1))
