"""A job's interruption rate from the components it touches, by cause.

Each failure-rate profile gives events per unit-day, each cause with its own scaling law: per GPU,
per node, per NIC (and NIC-to-leaf link), per leaf and spine switch, per scale-out link the job's
collectives cross (none for a job inside one scale-up domain) and per job (size-independent).
A job is interrupted by cause ``c`` at

    lambda_c = r_c * n_basis(c) / DAY_S          [events per second]

Causes fall in five categories (`CATEGORIES`): hardware by component, software and framework,
network and collective timeouts, infrastructure and maintenance, user and data errors.

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
    gpus_per_scale_up: int = 0
    """GPUs of one scale-up (NVLink) domain; 0: one node. A job inside one domain runs its
    collectives without the scale-out network."""

    def __post_init__(self) -> None:
        for name in ("gpus", "gpus_per_node", "nics_per_node", "gpus_per_leaf"):
            if getattr(self, name) < 1:
                raise SpecError(name, getattr(self, name), "must be >= 1")
        for name in ("spines", "gpus_per_scale_up"):
            if getattr(self, name) < 0:
                raise SpecError(name, getattr(self, name), "must be >= 0")

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
    def links_crossed(self) -> int:
        """Scale-out links the job's collectives cross: every NIC link, or none when the job
        fits in one scale-up domain."""
        domain = self.gpus_per_scale_up or self.gpus_per_node
        return 0 if self.gpus <= domain else self.nics

    @property
    def nodes_per_leaf(self) -> int:
        """Nodes that lose their connection when one leaf fails."""
        if self.rail_optimized:
            return min(self.gpus_per_leaf, self.nodes)
        return min(max(self.gpus_per_leaf // self.gpus_per_node, 1), self.nodes)


CATEGORIES: tuple[str, ...] = ("hardware", "software", "network", "infrastructure", "user")
"""Cause categories: hardware by component; software and framework; network and collective
timeouts (switches, cables, watchdog timeouts); infrastructure and maintenance; user and data."""


@dataclass(frozen=True, kw_only=True)
class Cause:
    """One interruption cause: the profile field with its rate and what the rate is counted per."""

    name: str
    field: str
    basis: str
    """``gpu``, ``node``, ``nic``, ``link``, ``leaf``, ``spine``, ``link_crossed`` or ``job``."""
    category: str
    """One of `CATEGORIES`."""
    needs_new_node: bool
    """The failed hardware must be swapped out before the job restarts."""


def _cause(name: str, field: str, basis: str, category: str, new_node: bool) -> Cause:
    return Cause(name=name, field=field, basis=basis, category=category, needs_new_node=new_node)


CAUSES: tuple[Cause, ...] = (
    _cause("gpu", "gpu_per_gpu_day", "gpu", "hardware", True),
    _cause("hbm", "hbm_per_gpu_day", "gpu", "hardware", True),
    _cause("gpu_sram", "gpu_sram_per_gpu_day", "gpu", "hardware", True),
    _cause("nvlink", "nvlink_per_node_day", "node", "hardware", True),
    _cause("nic", "nic_per_nic_day", "nic", "hardware", True),
    _cause("host_cpu", "host_cpu_per_node_day", "node", "hardware", True),
    _cause("host_memory", "host_memory_per_node_day", "node", "hardware", True),
    _cause("host_psu", "host_psu_per_node_day", "node", "hardware", True),
    _cause("host_ssd", "host_ssd_per_node_day", "node", "hardware", True),
    _cause("host_other", "host_other_per_node_day", "node", "hardware", True),
    _cause("host_maintenance", "host_maintenance_per_node_day", "node", "infrastructure", True),
    _cause("leaf_switch", "switch_per_switch_day", "leaf", "network", True),
    _cause("spine_switch", "switch_per_switch_day", "spine", "network", False),
    _cause("cable", "cable_per_link_day", "link", "network", True),
    _cause(
        "collective_timeout", "collective_timeout_per_link_day", "link_crossed", "network", False
    ),
    _cause("software", "software_per_node_day", "node", "software", False),
    _cause("unknown", "unknown_per_node_day", "node", "software", False),
    _cause("user_data", "user_data_per_job_day", "job", "user", False),
)
CAUSE_NAMES: tuple[str, ...] = tuple(c.name for c in CAUSES)
CAUSE_CATEGORY: dict[str, str] = {c.name: c.category for c in CAUSES}


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
    def by_category_per_s(self) -> dict[str, float]:
        """Unexpected interruptions per second by cause category (`CATEGORIES`)."""
        out = dict.fromkeys(CATEGORIES, 0.0)
        for cause, rate in self.by_cause_per_s.items():
            out[CAUSE_CATEGORY[cause]] += rate
        return out

    @property
    def hardware_per_s(self) -> float:
        """Interruptions that need a node swapped (what a per-node fleet failure rate such as
        Kokolis et al.'s r_f counts)."""
        return sum(r for c, r in self.by_cause_per_s.items() if self.nodes_lost_by_cause[c] > 0)

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
        "link_crossed": job.links_crossed,
        "job": 1,
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
