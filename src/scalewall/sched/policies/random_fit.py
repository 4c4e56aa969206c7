"""Random placement: any feasible node, uniformly (the FGD paper's ``Random`` baseline)."""

from __future__ import annotations

from scalewall.sched.cluster import Cluster, IntArray
from scalewall.sched.jobs import Request
from scalewall.sched.policies.base import FloatArray, ScoredPlacement, register_placement


@register_placement("random")
class RandomPlacement(ScoredPlacement):
    """Each feasible node gets a fresh uniform score, drawn from the run's seeded generator."""

    name = "random"
    pure = False
    """It draws node scores from the run's generator."""

    def node_scores(self, cluster: Cluster, request: Request, cand: IntArray) -> FloatArray:
        return self.rng.random(cand.size)
