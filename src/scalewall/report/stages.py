"""The four growth stages of a cluster, each with numbers from the project's own models.

1. Bring-up (resource pool): the pool's failure rate while it is young, failures found by
   burn-in, nodes out for repair and the pool's availability (Little's law: nodes in repair =
   failure rate x repair time).
2. Unified scheduling and governance: the scheduler simulator (`scalewall.sched`) on a
   multi-tenant workload at the stage's size (`sched.workload.mixed_jobs`: GPU-sharing and
   small pods from Alibaba's openb pod list, multi-GPU training gangs with Acme's size mix,
   eight tenants with quotas, arrivals over three days at 80% offered load): queueing delay,
   utilisation (allocated share of GPUs), fragmentation (free GPU capacity stranded on
   partly used GPUs), per-tenant fairness and makespan under FIFO, quota, priority and fair
   share (DRF) with best-fit placement, and FIFO with FGD placement.
3. Network and data path: switch tiers, oversubscription, the checkpoint write bandwidth that
   keeps stalls under `advice.CHECKPOINT_LOSS_LIMIT` and the data-loading bandwidth of the
   training job (tokens/s x bytes per stored token).
4. Industrial operations: interruptions per day, the hot spares the repair queue requires
   (M/M/c, `reliability.required_spares`), the repair flow (nodes sent to repair per day and
   in repair at a time), the restart phases (detection to state load) and the storage tier's
   checkpoint write and restore times, restart time and its share of wall time, whether
   restarts must be automatic, and the goodput each investment buys (in-memory checkpoints,
   hot spares, faster storage, faster restarts).

Each stage carries its dominant measured loss and the investments to make before the next
(from `advice.growth_path`). All numbers are data (SI units); `content` words them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from scalewall.catalog.schema import ModelSpec
from scalewall.plan.topology import Cluster
from scalewall.reliability import GoodputInputs, GoodputResult, goodput, required_spares
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
SCHED_SPAN_S = 3 * DAY_S
"""Arrival window of the multi-tenant workload: a few days, so queues build and drain."""
SCHED_LOAD_FRAC = 0.8
"""Offered load: GPU-seconds asked per second over the arrival window, as a share of the
cluster's GPUs (a busy shared pool, below saturation)."""
SCHED_SAMPLE_S = 600.0
"""Utilisation and fragmentation sampled every ten minutes between the warm-up and the last
arrival."""
SCHED_POLICIES: tuple[tuple[str, str], ...] = (
    ("fifo", "bestfit"),
    ("quota", "bestfit"),
    ("priority", "bestfit"),
    ("drf", "bestfit"),
    ("fifo", "fgd"),
)
"""(queueing, placement) pairs compared: FIFO, quota, priority and fair share (DRF) with
best-fit placement, and FIFO with fragmentation-gradient-descent placement."""
LEVER_IN_MEMORY_STORAGE = "peer-memory"
"""The storage tier of the in-memory checkpoint investment (peers' host memory, as Gemini)."""
LEVER_BANDWIDTH_SCALE = 10.0
"""Faster storage: ten times the checkpoint tier's bandwidth (`goodput --what-if`'s step)."""
LEVER_RESTART_SCALE = 0.5
"""Faster restarts: every restart phase half as long (`goodput --what-if`'s step)."""
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
    """The scheduler simulator on the stage's cluster (`sched.workload.mixed_jobs`: openb pods
    and Acme-sized gangs at `SCHED_LOAD_FRAC`, per-tenant quotas): one row per policy pair,
    measured after the warm-up until the last arrival."""
    from scalewall.sched.api import simulate, topology_cluster_spec
    from scalewall.sched.cluster import GPU_MILLI, synthetic_cluster
    from scalewall.sched.engine import SimConfig
    from scalewall.sched.workload import MixedWorkloadSpec, mixed_jobs, tenant_weights

    layout = topology_cluster_spec(cluster)
    sim_cluster = synthetic_cluster(layout)
    gpus = sim_cluster.total_gpus
    spec = MixedWorkloadSpec(num_jobs=num_jobs, span_s=SCHED_SPAN_S, load_frac=SCHED_LOAD_FRAC)
    jobs = mixed_jobs(spec, gpus, layout.gpus_per_node, seed)
    weights = tenant_weights(spec.num_tenants)
    quota = {f"tenant-{i}": float(w * gpus) for i, w in enumerate(weights)}
    config = SimConfig(sample_interval_s=SCHED_SAMPLE_S, quota_gpus=quota)
    runs = []
    for queue, placement in SCHED_POLICIES:
        result = simulate(
            sim_cluster, jobs, queue=queue, placement=placement, seed=seed, config=config
        )
        runs.append({"queue": queue, "placement": placement, **_sched_figures(result, spec)})
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
        "gpus": gpus,
        "load_frac": offered_load(jobs, gpus, spec.span_s),
        "span_s": SCHED_SPAN_S,
        "tenants": spec.num_tenants,
        "sharing_job_frac": float((jobs["gpu_milli"] < GPU_MILLI).mean()),
        "multi_gpu_job_frac": float((jobs["num_gpu"] > 1).mean()),
        "like": "openb + " + spec.like,
        "runs": runs,
        "best": {"queue": best["queue"], "placement": best["placement"]},
    }


def offered_load(jobs: Any, gpus: int, span_s: float) -> float:
    """GPU-seconds the jobs ask for per second of the arrival window, per GPU of the pool
    (the target `SCHED_LOAD_FRAC` unless too few jobs to reach it within `max_run_s` each)."""
    gpu_s = jobs["num_gpu"] * jobs["gpu_milli"] / 1000.0 * jobs["run_s"]
    return float(gpu_s.sum()) / gpus / span_s


def _sched_figures(result: Any, spec: Any) -> dict[str, Any]:
    """Queueing delay, utilisation and fragmentation between the warm-up and the last
    arrival, and per-tenant fairness: Jain's index of the tenants' mean slowdown (JCT / run
    time; 1: every tenant waits alike relative to its jobs' lengths)."""
    summary = result.summary
    series = result.timeseries
    window = series[(series["time_s"] >= spec.warmup_s) & (series["time_s"] <= spec.span_s)]
    done = result.jobs[result.jobs["finished"]]
    by_tenant = done.groupby("tenant")
    slowdown = by_tenant["slowdown"].mean().to_numpy(dtype=float)
    jain = float(slowdown.sum() ** 2 / (slowdown.size * (slowdown**2).sum()))
    delay = by_tenant["queue_delay_s"].mean()
    return {
        "queue_delay_mean_s": summary["queue_delay_s"]["mean"],
        "queue_delay_p95_s": summary["queue_delay_s"]["p95"],
        "makespan_s": summary["makespan_s"],
        "utilisation_frac": float(window["gpu_alloc_frac"].mean()),
        "fragmentation_frac": float(window["partial_gpu_free_frac"].mean()),
        "fairness_jain": jain,
        "worst_tenant_queue_delay_s": float(delay.max()),
        "tenant_queue_delay_mean_s": {str(t): float(v) for t, v in delay.items()},
        "unfinished": summary["unfinished"],
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
    """Interruptions, the hot spares the repair queue requires (`required_spares`), the
    repair flow, the restart phases and the checkpoint write and restore times of the
    storage tier; the dominant restart phase and each investment's goodput gain from the
    `goodput --what-if` levers (`operations_levers`)."""
    row = _row(inputs, stage["gpus"])
    result = inputs.goodput_at(row, "")
    hardware = _hardware_per_day(result)
    losses = result.loss_fracs
    repair_s = result.inputs.restart.node_repair_s
    worst = max(losses, key=lambda k: losses[k])
    phases = result.restart_phases_s
    spares = required_spares(result.inputs)
    return {
        "loss": {"kind": f"gp.{worst}", "frac": losses[worst]},
        "interruptions_per_day": result.interruptions_per_day,
        "spare_nodes": spares,
        "repairs_per_day": hardware,
        "nodes_in_repair": hardware * repair_s / DAY_S,
        "repair_s": repair_s,
        "restart_s": result.restart_s,
        "restart_phases_s": phases,
        "dominant_restart_phase": max(phases, key=lambda k: phases[k]),
        "storage": result.storage_id,
        "checkpoint_write_s": result.checkpoint.write_s,
        "checkpoint_restore_s": result.checkpoint.restore_s,
        "restart_loss_frac": losses.get("restart", 0.0),
        "automatic_restarts": result.interruptions_per_day >= AUTOMATION_PER_DAY,
        "goodput_frac": result.goodput_frac,
        "levers": operations_levers(result.inputs, spares),
    }


def operations_levers(inputs: GoodputInputs, spares: int) -> list[dict[str, Any]]:
    """Goodput with each operations investment against the baseline, best first: in-memory
    checkpoints (`LEVER_IN_MEMORY_STORAGE`), the required hot spares against none,
    `LEVER_BANDWIDTH_SCALE` times the storage bandwidth, restarts `LEVER_RESTART_SCALE` as
    long (automation, warm pools, cached images)."""
    base = goodput(inputs).goodput_frac
    spared = max(spares, 0)
    cases = {
        "in_memory": dataclasses.replace(inputs, storage=LEVER_IN_MEMORY_STORAGE),
        "spares": dataclasses.replace(inputs, spare_nodes=spared),
        "storage": dataclasses.replace(inputs, bandwidth_scale=LEVER_BANDWIDTH_SCALE),
        "restart": dataclasses.replace(inputs, restart=inputs.restart.scaled(LEVER_RESTART_SCALE)),
    }
    no_spares = goodput(dataclasses.replace(inputs, spare_nodes=0)).goodput_frac
    out: list[dict[str, Any]] = []
    for lever, case in cases.items():
        after = goodput(case).goodput_frac
        before = no_spares if lever == "spares" else base
        out.append({"lever": lever, "goodput_frac": after, "gain_frac": after - before})
    out.sort(key=lambda r: -r["gain_frac"])
    return out


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
