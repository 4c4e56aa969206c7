"""`goodput(inputs)`: one job's reliability figures, from its footprint, sharding and storage."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from scalewall.errors import SpecError
from scalewall.reliability.catalog import (
    DEFAULT_FAILURE_RATES,
    DEFAULT_STORAGE,
    failure_rates,
    storage_tier,
)
from scalewall.reliability.checkpoint import (
    CheckpointCost,
    CheckpointLayout,
    CheckpointSpec,
    RestartSpec,
    checkpoint_cost,
)
from scalewall.reliability.ettr import GoodputModel, MonteCarloResult, gpu_hours_per_day, simulate
from scalewall.reliability.failures import (
    CATEGORIES,
    CAUSE_CATEGORY,
    InterruptionRates,
    JobFootprint,
    interruption_rates,
)
from scalewall.reliability.interval import daly_interval_s, optimal_interval_s, young_interval_s
from scalewall.reliability.spares import (
    MAX_SPARES,
    SPARE_RISK_FRAC,
    nodes_in_repair_tail,
    spares_for_risk,
)
from scalewall.reliability.specs import FailureRates, StorageTier
from scalewall.units import DAY_S

MIN_INTERVAL_S = 1.0
"""Shortest checkpoint interval the optimiser considers when the step time is not given."""


MAX_RUN_S = 100 * 365 * 86_400.0
"""Longest run the goodput model takes (a century: a small cluster's time to train a frontier
model can reach decades): a bound on the Monte Carlo's time."""


@dataclass(frozen=True, kw_only=True)
class GoodputInputs:
    """Everything `goodput` needs, in plain numbers and catalog ids."""

    job: JobFootprint
    layout: CheckpointLayout
    run_s: float
    """Wall-clock length of the run."""
    storage: str | StorageTier = DEFAULT_STORAGE
    failure_rates: str | FailureRates = DEFAULT_FAILURE_RATES
    checkpoint: CheckpointSpec = field(default_factory=CheckpointSpec)
    restart: RestartSpec = field(default_factory=RestartSpec)
    interval_s: float | None = None
    """Compute time between checkpoints; None: the numeric optimum."""
    step_s: float | None = None
    """Training step time: checkpoint at most once a step (None: `MIN_INTERVAL_S`)."""
    spare_nodes: int | None = None
    """Hot spares reserved for the job; None: a healthy node is always at hand."""
    rate_scale: float = 1.0
    """Multiplies every unexpected failure rate (what-if)."""
    bandwidth_scale: float = 1.0
    """Multiplies every storage rate (what-if)."""

    def __post_init__(self) -> None:
        if not 0 < self.run_s <= MAX_RUN_S:
            raise SpecError("run_s", self.run_s, f"must be in (0, {MAX_RUN_S:g}] s (a century)")
        if not 0 <= self.rate_scale < float("inf"):
            raise SpecError("rate_scale", self.rate_scale, "a finite factor >= 0 (0: no failures)")
        if not 0 < self.bandwidth_scale < float("inf"):
            raise SpecError("bandwidth_scale", self.bandwidth_scale, "a positive finite factor")
        if self.interval_s is not None and not 0 < self.interval_s <= self.run_s:
            raise SpecError("interval_s", self.interval_s, f"must be in (0, run_s={self.run_s:g}]")
        if self.step_s is not None and not 0 < self.step_s <= self.run_s:
            raise SpecError("step_s", self.step_s, f"must be in (0, run_s={self.run_s:g}]")
        if self.spare_nodes is not None and self.spare_nodes < 0:
            raise SpecError("spare_nodes", self.spare_nodes, "must be >= 0")
        if self.layout.gpus != self.job.gpus:
            raise SpecError("layout.gpus", self.layout.gpus, f"must equal job.gpus={self.job.gpus}")
        if self.layout.gpus_per_node != self.job.gpus_per_node:
            raise SpecError(
                "layout.gpus_per_node", self.layout.gpus_per_node, "must equal job.gpus_per_node"
            )


@dataclass(frozen=True, kw_only=True)
class GoodputResult:
    """One job's reliability figures (SI units; fractions 0..1)."""

    inputs: GoodputInputs
    failure_rates_id: str
    storage_id: str
    rates: InterruptionRates
    checkpoint: CheckpointCost
    restart_s: float
    """Mean restart overhead per unexpected interruption, incl. waits for a spare."""
    planned_restart_s: float
    interval_s: float
    """Interval used (the optimum unless one was given)."""
    optimal_interval_s: float
    young_interval_s: float
    daly_interval_s: float
    goodput_frac: float
    """Analytic goodput at ``interval_s``."""
    loss_fracs: dict[str, float]
    """Analytic fraction of wall time lost, by kind."""
    monte_carlo: MonteCarloResult | None
    failure_loss_by_cause: dict[str, float] = field(default_factory=dict)
    """Fraction of wall time lost to interruptions (failed work and restarts), by cause."""

    @property
    def loss_by_category(self) -> dict[str, float]:
        """Goodput loss (1 - goodput) split into the interruption categories (`CATEGORIES`),
        checkpoint stalls and planned maintenance."""
        out = dict.fromkeys(CATEGORIES, 0.0)
        for cause, frac in self.failure_loss_by_cause.items():
            out[CAUSE_CATEGORY[cause]] += frac
        out["checkpoint"] = self.loss_fracs["checkpoint"]
        out["planned"] = self.loss_fracs["planned"]
        return out

    @property
    def mttf_s(self) -> float:
        return self.rates.mttf_s

    @property
    def restart_phases_s(self) -> dict[str, float]:
        """Seconds per restart phase (`RESTART_PHASES`) after a fault that needs a new node."""
        job = self.inputs.job
        return self.inputs.restart.phases(
            ranks=job.gpus, restore_s=self.checkpoint.restore_s, nodes=job.nodes
        )

    @property
    def interruptions_per_day(self) -> float:
        return self.rates.interruptions_per_day

    @property
    def expected_interruptions(self) -> float:
        """Unexpected interruptions expected over the run."""
        return self.rates.unexpected_per_s * self.inputs.run_s

    @property
    def lost_gpu_hours_per_day(self) -> dict[str, float]:
        return gpu_hours_per_day(self.loss_fracs, self.inputs.job.gpus)

    @property
    def lost_gpu_hours_per_day_by_cause(self) -> dict[str, float]:
        """Failed work and restarts by cause (`GoodputModel.failure_loss_by_cause`)."""
        return gpu_hours_per_day(self.failure_loss_by_cause, self.inputs.job.gpus)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary; key names are a stable schema."""
        mc = self.monte_carlo
        return {
            "gpus": self.inputs.job.gpus,
            "nodes": self.inputs.job.nodes,
            "run_s": self.inputs.run_s,
            "failure_rates": self.failure_rates_id,
            "storage": self.storage_id,
            "mttf_s": self.mttf_s,
            "interruptions_per_day": self.interruptions_per_day,
            "planned_interruptions_per_day": self.rates.planned_per_s * DAY_S,
            "expected_interruptions": self.expected_interruptions,
            "interruptions_per_day_by_cause": {
                c: r * DAY_S for c, r in self.rates.by_cause_per_s.items()
            },
            "interruptions_per_day_by_category": {
                c: r * DAY_S for c, r in self.rates.by_category_per_s.items()
            },
            "checkpoint_bytes": self.checkpoint.total_bytes,
            "checkpoint_write_s": self.checkpoint.write_s,
            "checkpoint_stall_s": self.checkpoint.blocking_s,
            "checkpoint_restore_s": self.checkpoint.restore_s,
            "checkpoint_asynchronous": self.checkpoint.asynchronous,
            "restart_s": self.restart_s,
            "restart_phases_s": self.restart_phases_s,
            "interval_s": self.interval_s,
            "optimal_interval_s": self.optimal_interval_s,
            "young_interval_s": self.young_interval_s,
            "daly_interval_s": self.daly_interval_s,
            "goodput_frac": self.goodput_frac,
            "goodput_mc_frac": mc.goodput_frac if mc else None,
            "goodput_ci": list(mc.goodput_ci) if mc else None,
            "monte_carlo_runs": mc.runs if mc else 0,
            "lost_gpu_hours_per_day": self.lost_gpu_hours_per_day,
            "lost_gpu_hours_per_day_by_cause": self.lost_gpu_hours_per_day_by_cause,
            "goodput_loss_by_category": self.loss_by_category,
        }


def _resolve(inputs: GoodputInputs) -> tuple[FailureRates, StorageTier]:
    rates = inputs.failure_rates
    tier = inputs.storage
    return (
        failure_rates(rates) if isinstance(rates, str) else rates,
        storage_tier(tier) if isinstance(tier, str) else tier,
    )


def no_spare_frac(
    rates: InterruptionRates, spare_nodes: int | None, repair_s: float, crews: int = 0
) -> dict[str, float]:
    """Probability, by cause, that the spare pool cannot cover the nodes a failure takes out.

    Nodes in repair follow the repair queue of `reliability.spares` (Poisson for unlimited
    crews, M/M/c otherwise); an event needing k nodes finds no spare when N > S - k.
    """
    if spare_nodes is None:
        return dict.fromkeys(rates.by_cause_per_s, 0.0)
    lam = rates.node_losses_per_s
    return {
        c: 0.0 if k == 0 else nodes_in_repair_tail(spare_nodes - k, lam, repair_s, crews)
        for c, k in rates.nodes_lost_by_cause.items()
    }


SPARE_GOODPUT_TOLERANCE_FRAC = 1e-3
"""Spares are enough when goodput is within this of a spare always being at hand."""


def required_spares(
    inputs: GoodputInputs,
    *,
    risk_frac: float = SPARE_RISK_FRAC,
    goodput_tolerance_frac: float = SPARE_GOODPUT_TOLERANCE_FRAC,
) -> int:
    """Hot-spare nodes the job needs, from its node losses and the repair queue
    (`RestartSpec.node_repair_s`, `repair_crews`; `reliability.spares`).

    The fewest spares with which a hardware failure finds none with probability at most
    ``risk_frac`` and goodput is within ``goodput_tolerance_frac`` of a spare always at hand
    (each miss costs `RestartSpec.no_spare_wait_s`). -1 when no count suffices (repairs slower
    than failures).
    """
    if not 0 < risk_frac < 1:
        raise SpecError("risk_frac", risk_frac, "must be in (0, 1)")
    profile, _ = _resolve(inputs)
    rates = interruption_rates(profile, inputs.job, rate_scale=inputs.rate_scale)
    restart = inputs.restart
    lam = rates.node_losses_per_s
    if lam == 0:
        return 0
    if restart.repair_crews and lam * restart.node_repair_s >= restart.repair_crews:
        return -1
    ideal = _goodput_at(inputs, None) - goodput_tolerance_frac
    low = max(
        spares_for_risk(
            lam, restart.node_repair_s, crews=restart.repair_crews, risk_frac=risk_frac
        ),
        0,
    )
    high = max(low, 1)
    while _goodput_at(inputs, high) < ideal:
        if high >= MAX_SPARES:
            return -1
        low, high = high + 1, min(2 * high, MAX_SPARES)
    if _goodput_at(inputs, low) >= ideal:
        return low
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if _goodput_at(inputs, mid) >= ideal else (mid, high)
    return high


def _goodput_at(inputs: GoodputInputs, spare_nodes: int | None) -> float:
    return goodput(dataclasses.replace(inputs, spare_nodes=spare_nodes)).goodput_frac


def goodput_model(inputs: GoodputInputs) -> tuple[GoodputModel, CheckpointCost, str, str]:
    """The plain-number goodput model of a job, with its checkpoint cost and catalog ids."""
    profile, tier = _resolve(inputs)
    rates = interruption_rates(profile, inputs.job, rate_scale=inputs.rate_scale)
    cost = checkpoint_cost(
        inputs.layout, tier, inputs.checkpoint, bandwidth_scale=inputs.bandwidth_scale
    )
    ranks, nodes = inputs.job.gpus, inputs.job.nodes
    restart = {
        c: inputs.restart.restart_s(
            ranks=ranks, restore_s=cost.restore_s, nodes=nodes, new_node=lost > 0
        )
        for c, lost in rates.nodes_lost_by_cause.items()
    }
    model = GoodputModel(
        rates=rates,
        restart_s=restart,
        no_spare_frac=no_spare_frac(
            rates, inputs.spare_nodes, inputs.restart.node_repair_s, inputs.restart.repair_crews
        ),
        no_spare_wait_s=inputs.restart.no_spare_wait_s,
        blocking_s=cost.blocking_s,
        persist_s=cost.persist_s,
        planned_restart_s=inputs.restart.planned_restart_s(
            ranks=ranks, restore_s=cost.restore_s, nodes=nodes
        ),
        gpus=inputs.job.gpus,
    )
    return model, cost, profile.id, tier.id


def goodput(inputs: GoodputInputs, *, monte_carlo_runs: int = 0, seed: int = 0) -> GoodputResult:
    """Job MTTF, checkpoint cost, intervals, goodput and lost GPU-hours.

    The optimum interval maximises the analytic goodput; the Monte Carlo (``monte_carlo_runs`` > 0)
    re-estimates goodput at the interval used, seeded for byte-identical repeats.
    """
    if seed < 0:
        raise SpecError("seed", seed, "must be a non-negative integer")
    model, cost, profile_id, tier_id = goodput_model(inputs)
    shortest = inputs.step_s if inputs.step_s is not None else MIN_INTERVAL_S
    lower = min(max(shortest, cost.persist_s), inputs.run_s)
    best = optimal_interval_s(model.goodput_frac, lower_s=lower, upper_s=inputs.run_s)
    tau = inputs.interval_s if inputs.interval_s is not None else best
    mttf = model.rates.mttf_s
    stall = max(cost.blocking_s, 1e-9)
    young = young_interval_s(stall, mttf) if mttf < float("inf") else inputs.run_s
    daly = daly_interval_s(stall, mttf) if mttf < float("inf") else inputs.run_s
    mc = None
    if monte_carlo_runs > 0:
        mc = simulate(model, interval_s=tau, run_s=inputs.run_s, runs=monte_carlo_runs, seed=seed)
    return GoodputResult(
        inputs=inputs,
        failure_rates_id=profile_id,
        storage_id=tier_id,
        rates=model.rates,
        checkpoint=cost,
        restart_s=model.mean_restart_s(),
        planned_restart_s=model.planned_restart_s,
        interval_s=tau,
        optimal_interval_s=best,
        young_interval_s=young,
        daly_interval_s=daly,
        goodput_frac=model.goodput_frac(tau),
        loss_fracs=model.loss_fracs(tau),
        monte_carlo=mc,
        failure_loss_by_cause=model.failure_loss_by_cause(tau),
    )
