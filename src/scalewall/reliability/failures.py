"""A job's interruption rate from the components it touches.

Each failure-rate profile gives events per component-day. A job touching ``n_gpu`` GPUs, ``n_node``
nodes, ``n_nic`` NICs (and as many NIC-to-leaf links), ``n_leaf`` leaf switches and ``n_spine``
spine switches is interrupted by cause ``c`` at

    lambda_c = r_c * n_basis(c) / DAY_S          [events per second]

and, with independent components, the time to the next interruption is exponential with rate
``sum_c lambda_c`` (job MTTF = 1 / that sum; Kokolis et al. 2024, arXiv 2410.21680, use the same
MTTF = 1 / (N_nodes * r_f)).

Correlated failures: a leaf switch failure takes down every node under it at once (the job is
interrupted once, but all those nodes need replacing before it restarts); a spine failure
interrupts the job (its flows break) but leaves the nodes usable once traffic is re-routed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scalewall.errors import SpecError
from scalewall.reliability.specs import FailureRates
from scalewall.units import DAY_S


@dataclass(frozen=True, kw_only=True)
class JobFootprint:
    """What a job touches: its GPUs, and the nodes, NICs and switches those GPUs sit on."""

    gpus: int
    gpus_per_node: int
    nics_per_node: int
    """Scale-out NICs per node (one cable to a leaf each)."""
    gpus_per_leaf: int
    """GPUs under one leaf switch (or one rail group's leaf)."""
    spines: int = 0
    """Spine (and upper-tier) switches on the job's paths; 0 when the job fits under one leaf."""
    rail_optimized: bool = False
    """Rail wiring: NIC k of every node goes to leaf k, so a leaf serves ``gpus_per_leaf``
    distinct nodes; top-of-rack wiring puts ``gpus_per_leaf / gpus_per_node`` whole nodes on it."""

    def __post_init__(self) -> None:
        for name in ("gpus", "gpus_per_node", "nics_per_node", "gpus_per_leaf"):
            if getattr(self, name) < 1:
                raise SpecError(name, getattr(self, name), "must be >= 1")
        if self.spines < 0:
            raise SpecError("spines", self.spines, "must be >= 0")

    @property
    def nodes(self) -> int:
        return math.ceil(self.gpus / self.gpus_per_node)

    @property
    def nics(self) -> int:
        return self.nodes * self.nics_per_node

    @property
    def leaves(self) -> int:
        return math.ceil(self.gpus / self.gpus_per_leaf)

    @property
    def nodes_per_leaf(self) -> int:
        """Nodes that lose their connection when one leaf fails."""
        if self.rail_optimized:
            return min(self.gpus_per_leaf, self.nodes)
        return min(max(self.gpus_per_leaf // self.gpus_per_node, 1), self.nodes)


@dataclass(frozen=True, kw_only=True)
class Cause:
    """One interruption cause: the profile field with its rate and what the rate is counted per."""

    name: str
    field: str
    basis: str
    """``gpu``, ``node``, ``nic``, ``link``, ``leaf`` or ``spine``."""
    needs_new_node: bool
    """The failed hardware must be swapped out before the job restarts."""


CAUSES: tuple[Cause, ...] = (
    Cause(name="gpu", field="gpu_per_gpu_day", basis="gpu", needs_new_node=True),
    Cause(name="hbm", field="hbm_per_gpu_day", basis="gpu", needs_new_node=True),
    Cause(name="gpu_sram", field="gpu_sram_per_gpu_day", basis="gpu", needs_new_node=True),
    Cause(name="nvlink", field="nvlink_per_node_day", basis="node", needs_new_node=True),
    Cause(name="nic", field="nic_per_nic_day", basis="nic", needs_new_node=True),
    Cause(name="host_cpu", field="host_cpu_per_node_day", basis="node", needs_new_node=True),
    Cause(name="host_memory", field="host_memory_per_node_day", basis="node", needs_new_node=True),
    Cause(name="host_psu", field="host_psu_per_node_day", basis="node", needs_new_node=True),
    Cause(name="host_ssd", field="host_ssd_per_node_day", basis="node", needs_new_node=True),
    Cause(name="host_other", field="host_other_per_node_day", basis="node", needs_new_node=True),
    Cause(
        name="host_maintenance",
        field="host_maintenance_per_node_day",
        basis="node",
        needs_new_node=True,
    ),
    Cause(name="leaf_switch", field="switch_per_switch_day", basis="leaf", needs_new_node=True),
    Cause(name="spine_switch", field="switch_per_switch_day", basis="spine", needs_new_node=False),
    Cause(name="cable", field="cable_per_link_day", basis="link", needs_new_node=True),
    Cause(name="software", field="software_per_node_day", basis="node", needs_new_node=False),
    Cause(name="unknown", field="unknown_per_node_day", basis="node", needs_new_node=False),
)
CAUSE_NAMES: tuple[str, ...] = tuple(c.name for c in CAUSES)


@dataclass(frozen=True, kw_only=True)
class InterruptionRates:
    """A job's interruption rates, by cause, in events per second."""

    by_cause_per_s: dict[str, float]
    """Unexpected interruptions by cause (names in `CAUSE_NAMES`)."""
    nodes_lost_by_cause: dict[str, int]
    """Nodes that must be replaced after one event of each cause (0: restart in place)."""
    planned_per_s: float
    """Planned maintenance: a checkpoint, then a restart, no lost work."""

    @property
    def unexpected_per_s(self) -> float:
        return sum(self.by_cause_per_s.values())

    @property
    def mttf_s(self) -> float:
        """Mean time to an unexpected interruption (inf when nothing can fail)."""
        total = self.unexpected_per_s
        return math.inf if total == 0 else 1.0 / total

    @property
    def interruptions_per_day(self) -> float:
        """Unexpected interruptions per day of wall time."""
        return self.unexpected_per_s * DAY_S

    @property
    def node_losses_per_s(self) -> float:
        """Nodes sent to repair per second (leaf failures count every node under the leaf)."""
        return sum(r * self.nodes_lost_by_cause[c] for c, r in self.by_cause_per_s.items())


def _exposure(job: JobFootprint, basis: str) -> int:
    counts = {
        "gpu": job.gpus,
        "node": job.nodes,
        "nic": job.nics,
        "link": job.nics,
        "leaf": job.leaves,
        "spine": job.spines,
    }
    return counts[basis]


def _nodes_lost(job: JobFootprint, cause: Cause) -> int:
    if not cause.needs_new_node:
        return 0
    return job.nodes_per_leaf if cause.basis == "leaf" else 1


def interruption_rates(
    rates: FailureRates, job: JobFootprint, *, rate_scale: float = 1.0
) -> InterruptionRates:
    """The job's interruption rates by cause (events/s) from a profile and its footprint.

    ``rate_scale`` multiplies every unexpected rate (what-if: a fleet with fewer failures).
    """
    if rate_scale < 0:
        raise SpecError("rate_scale", rate_scale, "must be >= 0")
    by_cause: dict[str, float] = {}
    for cause in CAUSES:
        per_day = getattr(rates, cause.field)
        if per_day < 0:
            raise SpecError(cause.field, per_day, "a failure rate must be >= 0")
        by_cause[cause.name] = rate_scale * per_day * _exposure(job, cause.basis) / DAY_S
    if rates.planned_per_node_day < 0:
        raise SpecError("planned_per_node_day", rates.planned_per_node_day, "must be >= 0")
    return InterruptionRates(
        by_cause_per_s=by_cause,
        nodes_lost_by_cause={c.name: _nodes_lost(job, c) for c in CAUSES},
        planned_per_s=rates.planned_per_node_day * job.nodes / DAY_S,
    )


def node_mttf_s(rate_per_node_day: float, nodes: int) -> float:
    """MTTF of a job on ``nodes`` nodes failing at ``r_f`` per node-day: 1 / (N r_f).

    Kokolis et al. 2024 (arXiv 2410.21680), Sec. on the r_f model.
    """
    if rate_per_node_day < 0:
        raise SpecError("rate_per_node_day", rate_per_node_day, "must be >= 0")
    if nodes < 1:
        raise SpecError("nodes", nodes, "must be >= 1")
    if rate_per_node_day == 0:
        return math.inf
    return DAY_S / (nodes * rate_per_node_day)
