"""The scale wall: the best plan at every cluster size, where efficiency stops scaling, and why.

At each size the full plan search runs again under the batch rule (a fixed global batch, or one
that grows with the GPUs up to a cap). Each size's step time is split into the MFU share and named
losses that add up to one: compute efficiency (achieved compute time minus the ideal time at
peak), recomputation, exposed TP/CP/PP/DP communication, pipeline bubble, optimizer, stragglers
and fixed overhead. Goodput (on by default) multiplies on top: its loss, 1 - goodput, is split by
cause into the interruption categories (hardware, software, network, infrastructure, user),
checkpoint stalls and planned maintenance (``goodput_loss_fracs``).

Scaling efficiency at size g is the per-GPU throughput over that of the smallest size with a
plan. Marginal efficiency between sizes g0 < g1 is (T1 - T0) / (g1 - g0), the tokens/s each added
GPU brings, over the smallest size's per-GPU throughput. The knee is the smallest size where it
drops below a threshold; its cause is the loss whose GPU-seconds per token grew the most from the
size before.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from scalewall import catalog
from scalewall._result import ResultDisplay
from scalewall.catalog.schema import Accelerator, ClusterSpec, Fabric, Link, ModelSpec, System
from scalewall.cluster import default_fabric, default_system
from scalewall.errors import ScalewallError, SpecError
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.perf.step import BREAKDOWN_PARTS
from scalewall.plan.plan import ParallelPlan
from scalewall.plan.topology import Cluster, Tier, make_cluster_from_parts
from scalewall.search.engine import resolve_batch, search
from scalewall.search.objective import DEFAULT_TOKEN_BUDGET, check_token_budget
from scalewall.search.space import SearchSpace
from scalewall.stack import StackSpec, resolve_stack
from scalewall.sweep import store
from scalewall.sweep.executor import Executor, ProcessExecutor
from scalewall.workload.user import model_from_args

DEFAULT_MODEL = "llama3-70b"
DEFAULT_GPU = "h100-sxm-80gb"
DEFAULT_MAX_GPUS = 32768
"""Largest default size: powers of two from one node up to this."""
DEFAULT_KNEE_THRESHOLD = 0.5
"""Marginal efficiency below which adding GPUs no longer pays (each added GPU brings less than
half the per-GPU throughput of the smallest size)."""

LOSS_PARTS = (
    "compute_efficiency",
    *(p for p in BREAKDOWN_PARTS if p != "compute"),
    "hash_collision",
    "goodput",
)
"""Loss attribution columns (``loss_<part>_frac``): the step model's breakdown parts with compute
replaced by its efficiency loss; ``hash_collision`` is the share of the communication parts that
ECMP hash collisions add (``hash_collision_s``); ``goodput`` is NaN when left out
(``goodput=False``)."""
COMM_KINDS = tuple(p for p in BREAKDOWN_PARTS if p.endswith("_comm"))


@dataclass(frozen=True, kw_only=True)
class ClusterDesign:
    """A cluster design that can be built at any size."""

    system: System
    fabric: Fabric
    link: Link
    accelerator: Accelerator
    name: str = ""

    def at(self, gpus: int) -> Cluster:
        return make_cluster_from_parts(
            system=self.system,
            fabric=self.fabric,
            link=self.link,
            accelerator=self.accelerator,
            num_gpus=gpus,
            name=f"{gpus}x {self.accelerator.id}" + (f" ({self.name})" if self.name else ""),
        )


def cluster_design(cluster: str | Path | Cluster | None, gpu: str | None) -> ClusterDesign:
    """A design from a catalog cluster id or TOML, a resolved Cluster, or an accelerator id."""
    if isinstance(cluster, Cluster):
        return ClusterDesign(
            system=cluster.system,
            fabric=cluster.fabric,
            link=cluster.link,
            accelerator=cluster.accelerator,
            name=cluster.name,
        )
    if cluster is not None:
        path = Path(cluster)
        if path.suffix == ".toml":
            spec = catalog.load_entry(path, ClusterSpec)
        else:
            spec = catalog.cluster_spec(str(cluster))
        system, fabric, name = catalog.system(spec.system), catalog.fabric(spec.fabric), spec.name
    else:
        gpu = gpu or DEFAULT_GPU
        systems = catalog.systems()
        system = systems.get(gpu) or systems.get(catalog.normal_name(gpu)) or default_system(gpu)
        fabric, name = default_fabric(system), ""
    return ClusterDesign(
        system=system,
        fabric=fabric,
        link=catalog.link(fabric.link),
        accelerator=catalog.accelerator(system.accelerator),
        name=name,
    )


@dataclass(frozen=True, kw_only=True)
class WallConfig:
    """Everything one size of the sweep depends on (picklable; hashed for the results file)."""

    model: ModelSpec
    design: ClusterDesign
    stack: Stack
    efficiency: Efficiency
    space: SearchSpace
    seq_len: int
    token_budget: float
    goodput: bool

    def __post_init__(self) -> None:
        check_token_budget(self.token_budget)


@dataclass(frozen=True, kw_only=True)
class SizeTask:
    config: WallConfig
    gpus: int
    global_batch: int
    key: str


def _outer_tier(tiers: Sequence[Tier], span: float) -> str:
    """The outermost tier a group spanning ``span`` consecutive ranks crosses."""
    for tier in tiers:
        if span <= tier.span_gpus:
            return tier.name
    return tiers[-1].name


def comm_tiers(cluster: Cluster, plan: ParallelPlan) -> dict[str, str]:
    """For each communication kind, the outermost network tier its group crosses.

    Rank order tp-cp-ep-dp-pp: TP spans tp ranks, CP tp x cp, EP tp x ep, DP tp x cp x dp;
    pipeline neighbours sit tp x cp x dp ranks apart, so their sends cross the tier that spans
    that distance + 1.
    """
    tiers = cluster.tiers
    inner = plan.tp * plan.cp * plan.dp
    return {
        "tp_comm": _outer_tier(tiers, plan.tp),
        "cp_comm": _outer_tier(tiers, plan.tp * plan.cp),
        "ep_comm": _outer_tier(tiers, plan.tp * plan.ep),
        "dp_comm": _outer_tier(tiers, inner),
        "fsdp_comm": _outer_tier(tiers, inner),
        "pp_comm": _outer_tier(tiers, inner + 1),
    }


def _goodput(
    config: WallConfig, cluster: Cluster, plan: ParallelPlan, step_s: float, run_s: float
) -> tuple[float, dict[str, float]]:
    """Goodput of the size's best plan over its time to train, and its loss by cause."""
    from scalewall.reliability.adapter import goodput_inputs
    from scalewall.reliability.api import MAX_RUN_S, goodput

    run_s = min(run_s, MAX_RUN_S)
    inputs = goodput_inputs(config.model, cluster, plan, run_s=run_s, step_s=min(step_s, run_s))
    result = goodput(inputs)
    return result.goodput_frac, result.loss_by_category


def hash_collision_s(
    config: WallConfig, cluster: Cluster, plan: ParallelPlan, breakdown: dict[str, float]
) -> dict[str, float]:
    """Seconds per step each part loses to ECMP hash collisions (``perf.collectives``
    ``hash_slowdown``): the part with the plan's flows hashed, less the same part with every
    path evenly loaded (adaptive routing), which is the plan evaluated once more with
    unbounded flows per path."""
    from scalewall.api import estimate

    even = config.efficiency.replace(ecmp_flows_per_path=math.inf)
    clean = estimate(config.model, cluster, plan, stack=config.stack, efficiency=even).breakdown
    return {k: max(v - clean.get(k, v), 0.0) for k, v in breakdown.items() if k != "compute"}


def run_size(task: SizeTask) -> dict[str, Any]:
    """One size of the sweep as a JSON-ready row (a size with no plan is a row with a reason)."""
    config = task.config
    row: dict[str, Any] = {
        "gpus": task.gpus,
        "global_batch": task.global_batch,
        "global_batch_tokens": task.global_batch * config.seq_len,
        "seq_len": config.seq_len,
        "found": False,
        "reason": "",
    }
    try:
        cluster = config.design.at(task.gpus)
        result = search(
            config.model,
            cluster,
            global_batch=task.global_batch,
            seq_len=config.seq_len,
            space=config.space,
            stack=config.stack,
            efficiency=config.efficiency,
            top_k=1,
            token_budget=config.token_budget,
        )
    except ScalewallError as exc:
        row["reason"] = str(exc)
        return row
    row.update(
        enumerated=result.counts.enumerated,
        evaluated=result.counts.evaluated,
        search_s=result.elapsed_s,
    )
    best = result.best
    if best is None:
        row["reason"] = result.reason
        return row
    step = best.step_time_s
    collisions = hash_collision_s(config, cluster, best.plan, best.breakdown)
    fracs = {k: (v - collisions.get(k, 0.0)) / step for k, v in best.breakdown.items()}
    fracs["hash_collision"] = sum(collisions.values()) / step
    losses = {k: fracs.get(k, 0.0) for k in LOSS_PARTS}
    losses["compute_efficiency"] = fracs["compute"] - best.mfu
    time_to_train_s = config.token_budget / best.tokens_per_s
    goodput_frac = math.nan
    goodput_losses: dict[str, float] = {}
    if config.goodput:
        goodput_frac, goodput_losses = _goodput(config, cluster, best.plan, step, time_to_train_s)
    losses["goodput"] = 1.0 - goodput_frac
    tiers = comm_tiers(cluster, best.plan)
    by_tier: dict[str, float] = {t.name: 0.0 for t in cluster.tiers}
    for kind, tier in tiers.items():
        by_tier[tier] += best.breakdown.get(kind, 0.0)
    row.update(
        found=True,
        plan={k: getattr(best.plan, k) for k in best.plan.__dataclass_fields__},
        recompute_modules=list(best.recompute_modules),
        step_time_s=step,
        tokens_per_s=best.tokens_per_s,
        mfu=best.mfu,
        hfu=best.hfu,
        memory_total_bytes=best.memory_total_bytes,
        time_to_train_s=time_to_train_s,
        goodput_frac=goodput_frac,
        loss_fracs=losses,
        goodput_loss_fracs=goodput_losses,
        comm_tier=tiers,
        comm_by_tier_s=by_tier,
        limiter=best.limiter,
        limit_line=best.limit_line,
    )
    return row


@dataclass(frozen=True, kw_only=True)
class Knee:
    gpus: int
    previous_gpus: int
    marginal_efficiency_frac: float
    cause: str
    """The loss part whose GPU-seconds per token grew most from the size before."""
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, kw_only=True, repr=False)
class WallResult(ResultDisplay):
    """One row per size (dicts with a documented schema), the knee, and the configuration."""

    model: str
    cluster: str
    rows: tuple[dict[str, Any], ...]
    knee: Knee | None
    knee_threshold: float
    token_budget: float
    results_path: str = ""
    reused_rows: int = 0
    settings: dict[str, Any] = field(default_factory=dict)
    band: dict[str, Any] | None = None
    """The prediction band of every size (``calibrate.band.WallBand.to_dict()``): without a
    calibration, from the out-of-sample errors of the closest validation group."""

    def to_pandas(self) -> pd.DataFrame:
        """One row per size: plan fields (``plan_<field>``), metrics, ``loss_<part>_frac``,
        ``comm_<tier>_s``."""
        flat = []
        for row in self.rows:
            out = {k: v for k, v in row.items() if not isinstance(v, dict)}
            for k, v in (row.get("plan") or {}).items():
                out[f"plan_{k}"] = v
            for k, v in (row.get("loss_fracs") or {}).items():
                out[f"loss_{k}_frac"] = v
            for k, v in (row.get("comm_by_tier_s") or {}).items():
                out[f"comm_{k}_s"] = v
            flat.append(out)
        return pd.DataFrame(flat)

    def to_dict(self) -> dict[str, Any]:
        """The ``scalewall-wall/1`` document (``scalewall schema wall``)."""
        return {
            "format": "scalewall-wall/1",
            "model": self.model,
            "cluster": self.cluster,
            "knee_threshold": self.knee_threshold,
            "token_budget": self.token_budget,
            "settings": self.settings,
            "knee": self.knee.to_dict() if self.knee else None,
            "results_path": self.results_path,
            "reused_rows": self.reused_rows,
            "rows": list(self.rows),
            **({"band": self.band} if self.band is not None else {}),
        }


def _gpu_s_per_token(row: dict[str, Any], part: str) -> float:
    frac = float(row["loss_fracs"].get(part, 0.0))
    return 0.0 if math.isnan(frac) else frac * row["gpus"] / row["tokens_per_s"]


def with_efficiency(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows sorted by size with per-GPU throughput, scaling and marginal efficiency added."""
    out = [dict(r) for r in sorted(rows, key=lambda r: int(r["gpus"]))]
    found = [r for r in out if r["found"]]
    if not found:
        return out
    base = found[0]["tokens_per_s"] / found[0]["gpus"]
    previous: dict[str, Any] | None = None
    for row in found:
        per_gpu = row["tokens_per_s"] / row["gpus"]
        row["tokens_per_s_per_gpu"] = per_gpu
        row["scaling_efficiency_frac"] = per_gpu / base
        row["marginal_efficiency_frac"] = math.nan
        if previous is not None:
            added = (row["tokens_per_s"] - previous["tokens_per_s"]) / (
                row["gpus"] - previous["gpus"]
            )
            row["marginal_efficiency_frac"] = added / base
        previous = row
    return out


def find_knee(rows: Sequence[dict[str, Any]], threshold: float) -> Knee | None:
    """The smallest size whose marginal efficiency is below ``threshold``, with its cause."""
    found = [r for r in rows if r["found"]]
    for previous, row in itertools.pairwise(found):
        marginal = row["marginal_efficiency_frac"]
        if not marginal < threshold:
            continue
        growth = {p: _gpu_s_per_token(row, p) - _gpu_s_per_token(previous, p) for p in LOSS_PARTS}
        cause = max(growth, key=lambda p: growth[p])
        total = (
            sum(_gpu_s_per_token(row, p) for p in LOSS_PARTS)
            + row["mfu"] * row["gpus"] / row["tokens_per_s"]
        )
        share = growth[cause] / total if total > 0 else 0.0
        per_replica_before = previous["global_batch"] / previous["plan"]["dp"]
        per_replica = row["global_batch"] / row["plan"]["dp"]
        detail = (
            f"{cause} grew by {share:.1%} of GPU time from {previous['gpus']} to "
            f"{row['gpus']} GPUs; batch per DP replica {per_replica_before:g} -> "
            f"{per_replica:g} sequences"
        )
        return Knee(
            gpus=int(row["gpus"]),
            previous_gpus=int(previous["gpus"]),
            marginal_efficiency_frac=float(marginal),
            cause=cause,
            detail=detail,
        )
    return None


def default_sizes(design: ClusterDesign, max_gpus: int = DEFAULT_MAX_GPUS) -> list[int]:
    """Powers of two from one node up to ``max_gpus``."""
    sizes, gpus = [], design.system.gpus_per_node
    while gpus <= max_gpus:
        sizes.append(gpus)
        gpus *= 2
    return sizes


def batch_schedule(
    sizes: Sequence[int], base_batch: int, max_global_batch: int | None
) -> dict[int, int]:
    """Sequences per step at each size: ``base_batch`` at every size (fixed), or growing in
    proportion to the GPUs from the smallest size up to ``max_global_batch``."""
    if max_global_batch is None:
        return dict.fromkeys(sizes, base_batch)
    if max_global_batch < base_batch:
        raise SpecError(
            "max_global_batch",
            max_global_batch,
            f"must be at least the starting global batch of {base_batch} sequences",
        )
    smallest = min(sizes)
    return {g: min(max_global_batch, base_batch * g // smallest) for g in sizes}


def _config_payload(config: WallConfig) -> dict[str, Any]:
    payload = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    payload = {
        k: asdict(v) if dataclasses.is_dataclass(v) and not isinstance(v, type) else v
        for k, v in payload.items()
    }
    payload["code"] = store.code_fingerprint()
    return payload


def wall(
    model: ModelSpec | str = DEFAULT_MODEL,
    cluster: str | Path | Cluster | None = None,
    *,
    gpu: str | None = None,
    sizes: Sequence[int] | None = None,
    global_batch: int | None = None,
    global_batch_tokens: int | None = None,
    max_global_batch: int | None = None,
    seq_len: int | None = None,
    space: SearchSpace | None = None,
    stack: StackSpec = None,
    efficiency: Efficiency | None = None,
    token_budget: float = DEFAULT_TOKEN_BUDGET,
    knee_threshold: float = DEFAULT_KNEE_THRESHOLD,
    goodput: bool = True,
    executor: Executor | None = None,
    results_path: Path | str | None = None,
    reuse: bool = True,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> WallResult:
    """Sweep cluster sizes, re-searching the best plan at each; find the knee and its cause.

    Defaults: Llama-3-70B on H100, powers of two from one node to 32,768 GPUs, a fixed batch of
    16M tokens. ``max_global_batch`` (sequences) lets the batch grow with the GPUs up to a cap.
    Rows are appended to ``results_path`` (default: a file per argument set under
    ``store.default_results_dir()``) as they finish; with ``reuse`` a rerun takes finished rows
    from it. ``on_row`` is called with each row as it is ready (for progress bars). ``goodput``
    (default on) adds each size's goodput over its time to train (default failure rates and
    storage) and its loss by cause; ``False`` leaves it out (NaN).
    """
    spec = model if isinstance(model, ModelSpec) else model_from_args(model)
    design = cluster_design(cluster, gpu)
    size_list = sorted(set(sizes)) if sizes else default_sizes(design)
    if not size_list or min(size_list) < 1:
        raise SpecError("sizes", sizes, "one or more positive GPU counts")
    check_token_budget(token_budget)
    if not 0.0 < knee_threshold <= 1.0:
        raise SpecError("knee_threshold", knee_threshold, "a fraction in (0, 1]")
    base, seq = resolve_batch(spec, seq_len, global_batch, global_batch_tokens)
    schedule = batch_schedule(size_list, base, max_global_batch)
    config = WallConfig(
        model=spec,
        design=design,
        stack=resolve_stack(stack),
        efficiency=efficiency or Efficiency(),
        space=space or SearchSpace(),
        seq_len=seq,
        token_budget=token_budget,
        goodput=goodput,
    )
    payload = _config_payload(config)
    tasks = [
        SizeTask(
            config=config,
            gpus=g,
            global_batch=schedule[g],
            key=store.key_of({"config": payload, "gpus": g, "global_batch": schedule[g]}),
        )
        for g in size_list
    ]
    path = (
        Path(results_path)
        if results_path
        else (store.default_results_dir() / f"wall-{store.key_of(payload)[:16]}.jsonl")
    )
    cached = store.read_rows(path) if reuse else {}
    rows: list[dict[str, Any]] = []
    for task in tasks:
        if task.key in cached:
            rows.append(cached[task.key])
            if on_row:
                on_row(cached[task.key])
    todo = [t for t in tasks if t.key not in cached]
    keys = {t.gpus: t.key for t in todo}
    for row in (executor or ProcessExecutor()).map_unordered(run_size, todo):
        store.append_row(path, keys[int(row["gpus"])], row)
        rows.append(row)
        if on_row:
            on_row(row)
    ordered = with_efficiency(rows)
    result = WallResult(
        model=spec.id,
        cluster=design.name or f"{design.system.id} + {design.fabric.id}",
        rows=tuple(ordered),
        knee=find_knee(ordered, knee_threshold),
        knee_threshold=knee_threshold,
        token_budget=token_budget,
        results_path=str(path),
        reused_rows=len(tasks) - len(todo),
        settings={
            "sizes": size_list,
            "seq_len": seq,
            "global_batch": base,
            "max_global_batch": max_global_batch,
            "stack": config.stack.id,
            "goodput": goodput,
        },
    )
    if not any(row["found"] for row in ordered):
        return result
    from scalewall.calibrate.band import validation_wall_band

    band = validation_wall_band(result, spec, design, config.stack)
    return dataclasses.replace(result, band=band.to_dict())
