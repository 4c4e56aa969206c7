"""Topology-aware placement: as few scale-up domains, racks and pods as possible.

A gang that fits inside one scale-up domain (NVLink island / NVL72 rack) goes to the domain whose
free capacity fits it most tightly; else one rack; else one pod; else it spreads over the racks
with the most free GPUs first, so it crosses as few tiers as the cluster allows. Single-node jobs
pack into the racks that are already fullest, leaving whole racks free for big jobs.
"""

from __future__ import annotations

import numpy as np

from scalewall.sched.cluster import Cluster, IntArray, Placement
from scalewall.sched.jobs import Request
from scalewall.sched.policies.base import (
    FloatArray,
    ScoredPlacement,
    fill_gang,
    register_placement,
)


@register_placement("topology")
class TopologyPlacement(ScoredPlacement):
    """Fewest domains/racks/pods per job; contiguous blocks for big jobs."""

    name = "topology"

    def node_scores(self, cluster: Cluster, request: Request, cand: IntArray) -> FloatArray:
        node_free = cluster.node_free_milli
        rack_free = np.bincount(cluster.rack, weights=node_free * cluster.schedulable)
        scale = float(node_free.max(initial=0)) + 1.0
        return np.asarray(rack_free[cluster.rack[cand]] * scale + node_free[cand])

    def place_gang(self, cluster: Cluster, request: Request) -> Placement | None:
        cap = self.gang_capacity(cluster, request)
        need = request.num_gpu
        if int(cap.sum()) < need:
            return None
        for group in (cluster.domain, cluster.rack, cluster.pod):
            group_cap = np.bincount(group, weights=cap)
            fits = np.flatnonzero(group_cap >= need)
            if fits.size:
                best = int(fits[np.argmin(group_cap[fits])])
                cand = np.flatnonzero((group == best) & (cap > 0))
                order = self.gang_order(cluster, cap, cand, need)
                return fill_gang(cluster, request, cap, order)
        rack_cap = np.bincount(cluster.rack, weights=cap)
        cand = np.flatnonzero(cap > 0)
        order = cand[np.lexsort((self.rank[cand], -cap[cand], -rack_cap[cluster.rack[cand]]))]
        return fill_gang(cluster, request, cap, order)
