"""How long a job runs on the GPUs it got: a small Protocol, and a documented default.

The step model (``scalewall.perf``) can implement :class:`DurationModel` later; the scheduler only
needs a number of seconds for a job on a given placement, so ``sched`` never imports ``perf``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from scalewall.sched.cluster import Cluster, Placement


@dataclass(frozen=True, kw_only=True, slots=True)
class JobView:
    """What a duration model may know about a job."""

    job_index: int
    num_gpu: int
    gpu_milli: int
    base_run_s: float
    """Run time measured on the trace (or drawn by a generator) on a compact placement."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PlacementSummary:
    """How widely a placement spreads over the topology."""

    num_nodes: int
    num_domains: int
    num_racks: int
    num_pods: int

    @property
    def tiers_crossed(self) -> int:
        """Topology tiers above the node that the job spans (0: one node; up to 4: several
        pods): one each for more than one node, domain, rack and pod."""
        return sum(n > 1 for n in (self.num_nodes, self.num_domains, self.num_racks, self.num_pods))


def summarize(cluster: Cluster, placement: Placement) -> PlacementSummary:
    """Count the nodes, scale-up domains, racks and pods a placement touches."""
    if len(placement.nodes) == 1:
        return ONE_NODE
    nodes = np.asarray(placement.nodes, dtype=np.int64)
    return PlacementSummary(
        num_nodes=len(set(placement.nodes)),
        num_domains=int(np.unique(cluster.domain[nodes]).size),
        num_racks=int(np.unique(cluster.rack[nodes]).size),
        num_pods=int(np.unique(cluster.pod[nodes]).size),
    )


ONE_NODE = PlacementSummary(num_nodes=1, num_domains=1, num_racks=1, num_pods=1)


class DurationModel(Protocol):
    """Run time of a job on a placement, in seconds."""

    def run_time_s(self, job: JobView, placement: PlacementSummary) -> float:
        """Seconds the whole job takes on ``placement`` (at full speed, no interruptions)."""


@dataclass(frozen=True, kw_only=True)
class TierSlowdownModel:
    """Default: the trace's run time, stretched by a fixed fraction per topology tier crossed.

    run_time_s = base_run_s * (1 + slowdown_per_tier_frac * tiers_crossed). A stand-in for the
    step model: communication that leaves the NVLink island / rack / pod is slower, so a
    scattered gang runs longer. The default of 5% per tier is an assumption, not a measurement;
    set it to 0 to replay the trace's run times exactly.
    """

    slowdown_per_tier_frac: float = 0.05
    """Extra run time per tier crossed, as a fraction of the compact run time."""

    def run_time_s(self, job: JobView, placement: PlacementSummary) -> float:
        return job.base_run_s * (1.0 + self.slowdown_per_tier_frac * placement.tiers_crossed)
