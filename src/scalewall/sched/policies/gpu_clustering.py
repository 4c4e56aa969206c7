"""GpuClustering: put requests of the same GPU affinity together.

As the FGD authors' simulator defines its ``GpuClustering`` baseline (Weng et al., ATC'23,
Sec. 6.1; hkust-adsl/kubernetes-scheduler-simulator ``pkg/simulator/plugin/
gpu_clustering_score.go`` and ``GetGpuAffinityFromPodAnnotation`` in
``pkg/type/open-gpu-share/utils``).
A request's affinity is ``share`` for a fraction of one GPU and ``N-gpu`` for N whole GPUs; a
node's affinities are those of the GPU requests it runs. Integer score, highest wins:

    base = 25 * (G_max - gpu_free) // G_max          (fuller nodes first, G_max: largest node)
    +75  the node runs only this affinity            +50  this affinity among others
    +25  the node runs no GPU request                 +0  only other affinities

CPU-only requests score 0 everywhere (ties go to the run's node order).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from scalewall.sched.cluster import GPU_MILLI, Cluster, IntArray, Placement
from scalewall.sched.jobs import JobTable, Request
from scalewall.sched.policies.base import FloatArray, ScoredPlacement, register_placement


def affinity_key(request: Request) -> int:
    """0 for a shared fraction of one GPU (``share``), N for N whole GPUs (``N-gpu``)."""
    return 0 if request.gpu_milli < GPU_MILLI else request.num_gpu


@register_placement("clustering")
class GpuClusteringPlacement(ScoredPlacement):
    """Cluster equal GPU affinities on the same nodes."""

    name = "clustering"
    pure = False
    """It keeps per-node affinity counts from allocated/released."""
    tier_score: ClassVar[int] = 25
    """A quarter of Kubernetes' ``MaxNodeScore`` (100): the width of each affinity tier."""

    def prepare(self, cluster: Cluster, jobs: JobTable | None, rng: np.random.Generator) -> None:
        super().prepare(cluster, jobs, rng)
        self.columns: dict[int, int] = {}
        self.counts = np.zeros((cluster.num_nodes, 4), dtype=np.int64)

    def _column(self, key: int) -> int:
        if key not in self.columns:
            self.columns[key] = len(self.columns)
            if len(self.columns) > self.counts.shape[1]:
                grown = np.zeros((self.counts.shape[0], 2 * self.counts.shape[1]), np.int64)
                grown[:, : self.counts.shape[1]] = self.counts
                self.counts = grown
        return self.columns[key]

    def allocated(self, placement: Placement, request: Request) -> None:
        if request.num_gpu:
            column = self._column(affinity_key(request))  # may grow ``counts``: take it first
            self.counts[list(placement.nodes), column] += 1

    def released(self, placement: Placement, request: Request) -> None:
        if request.num_gpu:
            column = self._column(affinity_key(request))  # may grow ``counts``: take it first
            self.counts[list(placement.nodes), column] -= 1

    def node_scores(self, cluster: Cluster, request: Request, cand: IntArray) -> FloatArray:
        if request.num_gpu == 0:
            return np.zeros(cand.size)
        column = self._column(affinity_key(request))  # may grow ``counts``: take it first
        counts = self.counts[cand]
        mine = counts[:, column] > 0
        kinds = (counts > 0).sum(axis=1)
        tier = np.where(mine, np.where(kinds == 1, 3, 2), np.where(kinds == 0, 1, 0))
        span = max(cluster.gpu_slots * GPU_MILLI, 1)
        base = self.tier_score * (span - cluster.node_free_milli[cand]) // span
        return np.asarray(-(base + self.tier_score * tier), dtype=np.float64)
