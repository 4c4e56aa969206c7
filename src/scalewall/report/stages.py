"""The four growth stages of a cluster, each with numbers from the project's own models.

1. Bring-up (resource pool): the pool's failure rate while it is young, failures found by
   burn-in, nodes out for repair and the pool's availability (Little's law: nodes in repair =
   failure rate x repair time).
2. Unified scheduling and governance: the scheduler simulator (`scalewall.sched`) on a
   synthetic multi-tenant trace with Acme's (Seren's) job mix, its arrivals compressed so the
   work offered per second equals the stage's GPUs: queueing delay, utilisation (allocated
   share of GPUs while jobs arrive), fragmentation and makespan under FIFO, quota,
   priority and fair share (DRF) with best-fit placement, and FIFO with FGD placement.
3. Network and data path: switch tiers, oversubscription, the checkpoint write bandwidth that
   keeps stalls under `advice.CHECKPOINT_LOSS_LIMIT` and the data-loading bandwidth of the
   training job (tokens/s x bytes per stored token).
4. Industrial operations: interruptions per day, hot spares, the repair flow (nodes sent to
   repair per day and in repair at a time), restart time and its share of wall time, and
   whether restarts must be automatic.

Each stage carries its dominant measured loss and the investments to make before the next
(from `advice.growth_path`). All numbers are data (SI units); `content` words them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from scalewall.catalog.schema import ModelSpec
from scalewall.plan.topology import Cluster
from scalewall.reliability import GoodputResult
from scalewall.reliability.failures import CAUSES
from scalewall.report.advice import AUTOMATION_PER_DAY, CHECKPOINT_LOSS_LIMIT
from scalewall.units import DAY_S

STAGES = ("bringup", "governance", "network", "operations")
BRINGUP_FAILURE_RATES = "kokolis-rsc1"
"""Failure rates of a young pool. No published early-life (infant-mortality) curve for GPU
nodes is in the catalog, so bring-up uses the highest measured fleet rate it holds: Meta's
RSC-1, 6.50 failures per 1,000 node-days (Kokolis et al., HPCA 2025), against Llama 3's
production run at about 3.8 (arXiv 2407.21783, Table 5 over 54 days on 2,048 nodes)."""
BURN_IN_S = 7 * DAY_S
"""Assumption: a week of burn-in before the pool takes jobs, long enough for a node that fails
at RSC-1's rate to show repeated faults at several times the fleet rate (lemon-node detection
in Kokolis et al. isolates nodes after repeated faults)."""
SCHED_SPAN_S = 2 * DAY_S
"""Arrival window of the synthetic trace before it is rescaled to the offered load."""
SCHED_LOAD_FRAC = 1.0
"""Offered load: GPU-seconds asked per second over the arrival window, as a share of the
cluster's GPUs (at capacity, so queueing and fragmentation show)."""
SCHED_SAMPLE_S = 60.0
"""Utilisation and fragmentation sampled every minute (the simulator's finest) while jobs
arrive (the compressed arrival window is about an hour)."""
SCHED_POLICIES: tuple[tuple[str, str], ...] = (
    ("fifo", "bestfit"),
    ("quota", "bestfit"),
    ("priority", "bestfit"),
    ("drf", "bestfit"),
    ("fifo", "fgd"),
)
"""(queueing, placement) pairs compared: FIFO, quota, priority and fair share (DRF) with
best-fit placement, and FIFO with fragmentation-gradient-descent placement."""
TOKEN_ID_BYTES_SMALL = 2
TOKEN_ID_BYTES_LARGE = 4
"""Stored token ids: 16-bit while the vocabulary fits (<= 65,536 entries), else 32-bit, as in
Megatron-LM's indexed datasets."""


@dataclass(frozen=True, kw_only=True)
class StageInputs:
    """What the stages need from the report's build: the sweep rows of the largest option,
    its design, the growth path and a goodput evaluator at any size and failure-rate set."""

    model: ModelSpec
    rows: Sequence[dict[str, Any]]
    growth: Sequence[dict[str, Any]]
    cluster_at: Callable[[int], Cluster]
    goodput_at: Callable[[dict[str, Any], str], GoodputResult]
    oversubscription: Sequence[float]
    sched_jobs: int


def stage_sizes(growth: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The growth-path entry for each of the four stages: the k-th of four spread evenly
    over the growth sizes (the four default sizes map one to one)."""
    n = len(growth)
    return [growth[min(round(k * (n - 1) / 3), n - 1)] for k in range(len(STAGES))]


def _hardware_per_day(result: GoodputResult) -> float:
    hardware = {c.name for c in CAUSES if c.needs_new_node}
    return sum(r * DAY_S for c, r in result.rates.by_cause_per_s.items() if c in hardware)


def bringup(inputs: StageInputs, stage: dict[str, Any]) -> dict[str, Any]:
    row = _row(inputs, stage["gpus"])
    young = inputs.goodput_at(row, BRINGUP_FAILURE_RATES)
    per_day = _hardware_per_day(young)
    in_repair = per_day * young.inputs.restart.node_repair_s / DAY_S
    return {
        "loss": {"kind": "repair", "frac": in_repair / row["nodes"]},
        "failure_rates": BRINGUP_FAILURE_RATES,
        "interruptions_per_day": young.interruptions_per_day,
        "hardware_failures_per_day": per_day,
        "burn_in_s": BURN_IN_S,
        "burn_in_failures": per_day * BURN_IN_S / DAY_S,
        "nodes_in_repair": in_repair,
        "availability_frac": 1.0 - in_repair / row["nodes"],
        "goodput_frac": young.goodput_frac,
    }


def governance(cluster: Cluster, num_jobs: int, seed: int = 0) -> dict[str, Any]:
    """The scheduler simulator on the stage's cluster: one row per policy pair."""
    from scalewall.sched.api import scale_demand, simulate, topology_cluster_spec
    from scalewall.sched.cluster import synthetic_cluster
    from scalewall.sched.engine import SimConfig
    from scalewall.sched.workload import WorkloadSpec, synthetic_jobs

    sim_cluster = synthetic_cluster(topology_cluster_spec(cluster))
    jobs = synthetic_jobs(WorkloadSpec(num_jobs=num_jobs, span_s=SCHED_SPAN_S), seed)
    jobs = jobs[jobs["num_gpu"] <= sim_cluster.total_gpus]
    jobs = scale_demand(jobs, sim_cluster.total_gpus, SCHED_LOAD_FRAC)
    last_arrival = float(jobs["submit_s"].max())
    config = SimConfig(sample_interval_s=SCHED_SAMPLE_S)
    runs = []
    for queue, placement in SCHED_POLICIES:
        result = simulate(
            sim_cluster, jobs, queue=queue, placement=placement, seed=seed, config=config
        )
        summary = result.summary
        series = result.timeseries[result.timeseries["time_s"] <= last_arrival]
        runs.append(
            {
                "queue": queue,
                "placement": placement,
                "queue_delay_mean_s": summary["queue_delay_s"]["mean"],
                "queue_delay_p95_s": summary["queue_delay_s"]["p95"],
                "makespan_s": summary["makespan_s"],
                "utilisation_frac": float(series["gpu_alloc_frac"].mean()),
                "fragmentation_frac": float(series["partial_gpu_free_frac"].mean()),
                "unfinished": summary["unfinished"],
            }
        )
    best = min(runs, key=lambda r: (r["queue_delay_mean_s"], -r["utilisation_frac"]))
    fifo = runs[0]
    idle = 1.0 - fifo["utilisation_frac"]
    frag = fifo["fragmentation_frac"]
    loss = (
        {"kind": "fragmentation", "frac": frag} if frag > idle else {"kind": "idle", "frac": idle}
    )
    return {
        "loss": loss,
        "jobs": len(jobs),
        "gpus": sim_cluster.total_gpus,
        "load_frac": SCHED_LOAD_FRAC,
        "like": "Seren",
        "runs": runs,
        "best": {"queue": best["queue"], "placement": best["placement"]},
    }


def network(inputs: StageInputs, stage: dict[str, Any]) -> dict[str, Any]:
    row = _row(inputs, stage["gpus"])
    loss = row["goodput_loss_fracs"].get("checkpoint", 0.0)
    write_bw = row["checkpoint_bytes"] / row["checkpoint_write_s"]
    # Young: checkpoint loss ~ sqrt(2 stall / MTTF), so the bandwidth to reach the limit
    # scales as (loss / limit)^2 (as `advice._storage_advice`)
    needed = write_bw * max(loss / CHECKPOINT_LOSS_LIMIT, 1.0) ** 2
    per_token = TOKEN_ID_BYTES_SMALL if inputs.model.vocab <= 2**16 else TOKEN_ID_BYTES_LARGE
    return {
        "loss": {"kind": f"loss.{stage['dominant']}", "frac": stage["dominant_frac"]},
        "switch_tiers": row["switch_tiers"],
        "switches": row["switches"],
        "oversubscription": list(inputs.oversubscription),
        "checkpoint_loss_frac": loss,
        "checkpoint_bytes": row["checkpoint_bytes"],
        "checkpoint_write_bytes_per_s": write_bw,
        "checkpoint_needed_bytes_per_s": needed,
        "data_bytes_per_token": per_token,
        "data_loading_bytes_per_s": row["tokens_per_s"] * per_token,
    }


def operations(inputs: StageInputs, stage: dict[str, Any]) -> dict[str, Any]:
    row = _row(inputs, stage["gpus"])
    result = inputs.goodput_at(row, "")
    hardware = _hardware_per_day(result)
    losses = result.loss_fracs
    repair_s = result.inputs.restart.node_repair_s
    worst = max(losses, key=lambda k: losses[k])
    return {
        "loss": {"kind": f"gp.{worst}", "frac": losses[worst]},
        "interruptions_per_day": result.interruptions_per_day,
        "spare_nodes": row["spare_nodes"],
        "repairs_per_day": hardware,
        "nodes_in_repair": hardware * repair_s / DAY_S,
        "repair_s": repair_s,
        "restart_s": result.restart_s,
        "restart_loss_frac": losses.get("restart", 0.0),
        "automatic_restarts": result.interruptions_per_day >= AUTOMATION_PER_DAY,
        "goodput_frac": result.goodput_frac,
    }


def _row(inputs: StageInputs, gpus: int) -> dict[str, Any]:
    return next(r for r in inputs.rows if r["gpus"] == gpus)


def growth_stages(inputs: StageInputs) -> list[dict[str, Any]]:
    """The four stages in order, each with its size, numbers, the dominant step loss at that
    size and the investments to make before the next stage."""
    if not inputs.growth:
        return []
    out = []
    for kind, stage in zip(STAGES, stage_sizes(inputs.growth), strict=True):
        if kind == "bringup":
            numbers = bringup(inputs, stage)
        elif kind == "governance":
            numbers = governance(inputs.cluster_at(stage["gpus"]), inputs.sched_jobs)
        elif kind == "network":
            numbers = network(inputs, stage)
        else:
            numbers = operations(inputs, stage)
        out.append(
            {
                "stage": kind,
                "gpus": stage["gpus"],
                "nodes": stage["nodes"],
                "dominant": stage["dominant"],
                "dominant_frac": stage["dominant_frac"],
                "invest": stage["invest"],
                "next_gpus": stage["next_gpus"],
                **numbers,
            }
        )
    return out
