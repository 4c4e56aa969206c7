"""The numbers behind a report: per cluster option a scale-wall sweep with goodput and cost at
every size, the best plan's memory, failures and checkpoints, the network bill of materials, the
largest candidate model that trains within the target time; and a staged growth path.

Everything here is language-neutral, JSON-ready data in SI units; `scalewall.report.content`
turns it into text and tables in one language.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scalewall.api import estimate
from scalewall.catalog.schema import ModelSpec
from scalewall.cost import (
    PriceBook,
    Tco,
    TcoOptions,
    Throughput,
    hardware_from_cluster,
    load_prices,
    tco,
    training_cost,
)
from scalewall.errors import ScalewallError
from scalewall.perf.assumptions import Stack
from scalewall.plan.plan import ParallelPlan
from scalewall.plan.topology import Cluster
from scalewall.reliability import GoodputResult, goodput, required_spares
from scalewall.reliability.adapter import goodput_inputs
from scalewall.report.advice import (
    growth_path,
    knee_vs_best,
    memory_bound,
    scheduling_needs,
)
from scalewall.report.decision import (
    choose,
    model_breakeven,
    outcome,
    scenario_breakeven,
)
from scalewall.report.scenario import SWEEP_HEADROOM, ClusterOption, Scenario
from scalewall.report.stages import StageInputs, growth_stages
from scalewall.search import search
from scalewall.stack import resolve_stack
from scalewall.sweep import (
    DEFAULT_KNEE_THRESHOLD,
    ClusterDesign,
    SerialExecutor,
    cluster_design,
    find_knee,
    wall,
)
from scalewall.units import DAY_S
from scalewall.workload import param_count
from scalewall.workload.user import model_from_args

SCHEMA = "scalewall-report/1"
J_PER_MWH = 3.6e9
YEAR_S = 365.25 * DAY_S


@dataclass(frozen=True, kw_only=True)
class Report:
    """A built report: the scenario and its numbers (``data``, JSON-ready, SI units)."""

    scenario: Scenario
    data: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class _Context:
    scenario: Scenario
    model: ModelSpec
    prices: PriceBook
    stack: Stack


def build_report(scenario: Scenario | None = None) -> Report:
    """Run every sweep, search, goodput and cost model the report shows."""
    scenario = scenario or Scenario()
    ctx = _Context(
        scenario=scenario,
        model=model_from_args(scenario.model),
        prices=load_prices(list(scenario.prices)),
        stack=resolve_stack(scenario.stack, scenario.stack_overrides, where="scenario"),
    )
    largest = scenario.largest
    options = [_option_data(ctx, o, growth=o is largest) for o in scenario.options]
    big = options[scenario.options.index(largest)]
    growth = growth_path(big["sweep"]["rows"], scenario.growth)
    data = {
        "schema": SCHEMA,
        "scenario": scenario.to_dict(),
        "model": {"id": ctx.model.id, "name": ctx.model.name, "params": param_count(ctx.model)},
        "options": options,
        "growth": growth,
    }
    data["decision"] = _decision(scenario, options)
    data["stages"] = _stages(ctx, largest, big, growth)
    return Report(scenario=scenario, data=data)


def _stages(
    ctx: _Context, option: ClusterOption, data: dict[str, Any], growth: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The four growth stages on the largest option's design (`report.stages`)."""
    design = _design(option)

    def goodput_at(row: dict[str, Any], rates: str) -> GoodputResult:
        plan = ParallelPlan(**row["plan"])
        return _goodput(ctx, design.at(row["gpus"]), plan, row, failure_rates=rates or None)

    inputs = StageInputs(
        model=ctx.model,
        rows=data["sweep"]["rows"],
        growth=growth,
        cluster_at=design.at,
        goodput_at=goodput_at,
        oversubscription=design.fabric.oversubscription,
        sched_jobs=ctx.scenario.sched_jobs,
    )
    return growth_stages(inputs)


def _outcome(scenario: Scenario, calendar_s: float, compute_usd: float) -> dict[str, Any]:
    return outcome(
        calendar_s,
        compute_usd,
        target_s=scenario.target_s,
        value_usd_per_day=scenario.value_of_time_usd_per_day,
        late_usd_per_day=scenario.late_penalty_usd_per_day,
    )


def _decision(scenario: Scenario, options: list[dict[str, Any]]) -> dict[str, Any]:
    """Feasibility and total cost per option, the choice and its reasons, the break-even of
    the largest option against the smallest over model size, tokens, target and time value."""
    outcomes = []
    for o in options:
        run = o["training"]
        entry = _outcome(scenario, run["calendar_s"], run["owned_usd"])
        effective = o["best"]["mfu"] * o["reliability"]["goodput_frac"]
        outcomes.append(
            {"name": o["name"], "gpus": o["gpus"], "effective_frac": effective, **entry}
        )
    out: dict[str, Any] = {
        "value_of_time_usd_per_day": scenario.value_of_time_usd_per_day,
        "late_penalty_usd_per_day": scenario.late_penalty_usd_per_day,
        "target_s": scenario.target_s,
        "options": outcomes,
        "choice": choose(outcomes),
        "breakeven": None,
    }
    small_i = min(range(len(options)), key=lambda i: options[i]["gpus"])
    big_i = max(range(len(options)), key=lambda i: options[i]["gpus"])
    if small_i == big_i:
        return out
    points = []
    for cs, cb in zip(options[small_i]["candidates"], options[big_i]["candidates"], strict=True):
        small = _outcome(scenario, cs["calendar_s"], cs["compute_usd"])
        big = _outcome(scenario, cb["calendar_s"], cb["compute_usd"])
        points.append({"id": cs["id"], "params": cs["params"], "small": small, "big": big})
    out["breakeven"] = {
        "small": options[small_i]["name"],
        "big": options[big_i]["name"],
        "models": points,
        "model": model_breakeven(points, scenario.target_s),
        **scenario_breakeven(
            outcomes[big_i], outcomes[small_i], scenario.token_budget, scenario.target_s
        ),
    }
    return out


def _design(option: ClusterOption) -> ClusterDesign:
    return cluster_design(option.cluster, option.gpu)


def _buildable(design: ClusterDesign, sizes: set[int]) -> list[int]:
    """The sizes the design's fabric can build (a 2-tier fabric stops at its capacity)."""
    out = []
    for gpus in sorted(sizes):
        try:
            design.at(gpus)
        except ScalewallError:
            continue
        out.append(gpus)
    return out


def _option_data(ctx: _Context, option: ClusterOption, *, growth: bool) -> dict[str, Any]:
    design = _design(option)
    design.at(option.gpus)  # an option its fabric cannot build is a user error
    wanted = {s for s in ctx.scenario.sizes if s <= SWEEP_HEADROOM * option.gpus}
    wanted |= {option.gpus} | (set(ctx.scenario.growth) if growth else set())
    sweep = _sweep(ctx, option, design, _buildable(design, wanted))
    row = next((r for r in sweep["rows"] if r["gpus"] == option.gpus), None)
    if row is None:
        raise ScalewallError(f"option {option.label!r}: no plan fits at {option.gpus} GPUs")
    cluster = design.at(option.gpus)
    plan = ParallelPlan(**row["plan"])
    result = _goodput(ctx, cluster, plan, row)
    cost = _tco(ctx, cluster, row, result.goodput_frac)
    run = training_cost(cost, ctx.scenario.token_budget)
    spares = required_spares(result.inputs)
    own = {
        "id": ctx.model.id,
        "params": param_count(ctx.model),
        "fits": True,
        "mfu": row["mfu"],
        "goodput_frac": result.goodput_frac,
        "calendar_s": run.calendar_s,
        "compute_usd": run.owned_usd,
        "memory_frac": row["memory_total_bytes"] / design.accelerator.hbm_capacity_bytes,
    }
    reliability = {**result.to_dict(), "loss_fracs": result.loss_fracs, "spare_nodes": spares}
    return {
        "name": option.label,
        "design": design.name or f"{design.system.id} + {design.fabric.id}",
        "accelerator": design.accelerator.id,
        "gpus": option.gpus,
        "nodes": cluster.num_nodes,
        "sweep": sweep,
        "best": _best(ctx, cluster, plan, row),
        "reliability": reliability,
        "cost": _cost_data(cost),
        "training": {
            "token_budget": ctx.scenario.token_budget,
            "calendar_s": run.calendar_s,
            "owned_usd": run.owned_usd,
            "rental_usd": run.rental_usd,
            "energy_mwh": run.energy_j / J_PER_MWH,
        },
        "bom": _bom_data(cost),
        "candidates": _candidates(ctx, cluster, own),
        "scheduling": scheduling_needs(cluster.num_nodes, cost.bom.switch_tiers, reliability),
    }


def _sweep(
    ctx: _Context, option: ClusterOption, design: ClusterDesign, sizes: list[int]
) -> dict[str, Any]:
    """The scale-wall sweep with goodput (scenario storage and failure rates) and cost per
    token added at every size; the knee found with the goodput loss included; the sweep's
    prediction band (``calibrate.band.WallBand.to_dict()``: out-of-sample errors of the
    closest validation group per size, None when no size has a plan)."""
    result = wall(
        ctx.model,
        option.cluster,
        gpu=option.gpu,
        sizes=sizes,
        global_batch_tokens=ctx.scenario.global_batch_tokens,
        token_budget=ctx.scenario.token_budget,
        executor=SerialExecutor(),
        stack=ctx.stack,
    )
    rows = []
    for row in result.rows:
        if not row["found"]:
            continue
        cluster = design.at(row["gpus"])
        gp = _goodput(ctx, cluster, ParallelPlan(**row["plan"]), row)
        cost = _tco(ctx, cluster, row, gp.goodput_frac)
        loss = {**row["loss_fracs"], "goodput": 1.0 - gp.goodput_frac}
        rows.append(
            {
                **{k: v for k, v in row.items() if k not in ("loss_fracs", "limit_line")},
                "loss_fracs": loss,
                "goodput_frac": gp.goodput_frac,
                "goodput_loss_fracs": gp.loss_fracs,
                "interruptions_per_day": gp.interruptions_per_day,
                "checkpoint_write_s": gp.checkpoint.write_s,
                "checkpoint_bytes": gp.checkpoint.total_bytes,
                "restart_s": gp.restart_s,
                "spare_nodes": required_spares(gp.inputs),
                "nodes": cluster.num_nodes,
                "usd_per_million_tokens": cost.usd_per_million_tokens,
                "usd_per_effective_pflop_day": cost.usd_per_effective_pflop_day,
                "capex_usd": cost.capex.total_usd,
                "network_capex_usd": cost.capex.category_usd("network"),
                "switch_tiers": cost.bom.switch_tiers,
                "switches": cost.bom.switches,
                "bom_tiers": [t.name for t in cost.bom.tiers],
                "memory_bound": memory_bound(row, design.accelerator.hbm_capacity_bytes),
            }
        )
    knee = find_knee(rows, DEFAULT_KNEE_THRESHOLD)
    vs_best = knee_vs_best(rows, DEFAULT_KNEE_THRESHOLD)
    marginal = [r for r in rows if not math.isnan(r["marginal_efficiency_frac"])]
    weakest = min(marginal, key=lambda r: r["marginal_efficiency_frac"], default=None)
    return {
        "design": result.cluster,
        "settings": result.settings,
        "knee_threshold": DEFAULT_KNEE_THRESHOLD,
        "knee": knee.to_dict() if knee else None,
        "weakest": None
        if weakest is None
        else {
            "gpus": weakest["gpus"],
            "marginal_efficiency_frac": weakest["marginal_efficiency_frac"],
        },
        "knee_vs_best": vs_best,
        "memory_bound_gpus": [r["gpus"] for r in rows if r["memory_bound"]],
        "band": result.band,
        "rows": rows,
        "skipped": [
            {"gpus": r["gpus"], "reason": r["reason"]} for r in result.rows if not r["found"]
        ],
    }


def _goodput(
    ctx: _Context,
    cluster: Cluster,
    plan: ParallelPlan,
    row: dict[str, Any],
    *,
    failure_rates: str | None = None,
) -> GoodputResult:
    run_s = ctx.scenario.token_budget / row["tokens_per_s"]
    inputs = goodput_inputs(
        ctx.model,
        cluster,
        plan,
        run_s=run_s,
        step_s=min(row["step_time_s"], run_s),
        storage=ctx.scenario.storage,
        failure_rates=failure_rates or ctx.scenario.failure_rates,
    )
    return goodput(inputs)


def _tco(ctx: _Context, cluster: Cluster, row: dict[str, Any], goodput_frac: float) -> Tco:
    throughput = Throughput(
        tokens_per_s=row["tokens_per_s"], mfu_frac=row["mfu"], goodput_frac=goodput_frac
    )
    options = TcoOptions(facility=ctx.scenario.facility)
    return tco(hardware_from_cluster(cluster), ctx.prices, throughput, options)


def _best(
    ctx: _Context, cluster: Cluster, plan: ParallelPlan, row: dict[str, Any]
) -> dict[str, Any]:
    est = estimate(ctx.model, cluster, plan, stack=ctx.stack)
    keep = ("plan", "step_time_s", "tokens_per_s", "mfu", "hfu", "limiter", "comm_tier")
    return {
        **{k: row[k] for k in keep},
        "memory_bytes": est.memory_bytes,
        "memory_total_bytes": est.memory_total_bytes,
        "hbm_bytes": est.hbm_bytes,
        "breakdown_s": est.breakdown_s,
    }


def _cost_data(t: Tco) -> dict[str, Any]:
    return {
        "capex_usd": t.capex.total_usd,
        "capex_by_category_usd": t.capex.to_dict()["by_category_usd"],
        "opex_usd_per_year": t.opex.total_usd_per_s * YEAR_S,
        "owned_usd_per_year": t.owned_usd_per_s * YEAR_S,
        "usd_per_gpu_hour": t.usd_per_gpu_hour,
        "rental_usd_per_gpu_hour": t.rental_usd_per_gpu_hour,
        "usd_per_effective_pflop_day": t.usd_per_effective_pflop_day,
        "usd_per_million_tokens": t.usd_per_million_tokens,
        "rental_usd_per_million_tokens": t.rental_usd_per_million_tokens,
        "it_capacity_w": t.power.it_capacity_w,
        "facility_w": t.power.facility_w,
    }


def _bom_data(t: Tco) -> dict[str, Any]:
    bom = t.bom
    return {
        "fabric": bom.fabric,
        "link": bom.link,
        "wiring": bom.wiring,
        "switch_tiers": bom.switch_tiers,
        "switches": bom.switches,
        "transceivers": bom.transceivers,
        "nics": bom.nics,
        "network_capex_usd": t.capex.category_usd("network"),
        "tiers": [dataclasses.asdict(tier) for tier in bom.tiers],
    }


def _candidates(ctx: _Context, cluster: Cluster, own: dict[str, Any]) -> list[dict[str, Any]]:
    """Each candidate model's best plan on the cluster and its days to train the token budget;
    sorted by parameter count."""
    ids = dict.fromkeys((*ctx.scenario.candidate_models, ctx.model.id))
    out = []
    for model_id in ids:
        if model_id == ctx.model.id:
            out.append(own)  # the option's own search, goodput and cost
            continue
        out.append(_candidate(ctx, model_from_args(model_id), cluster))
    out.sort(key=lambda c: c["params"])
    for c in out:
        c["in_target"] = c["fits"] and c["calendar_s"] <= ctx.scenario.target_s
    return out


def _candidate(ctx: _Context, spec: ModelSpec, cluster: Cluster) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": spec.id, "params": param_count(spec), "fits": False}
    entry["calendar_s"] = math.inf
    entry["compute_usd"] = math.inf
    try:
        result = search(
            spec,
            cluster,
            global_batch_tokens=ctx.scenario.global_batch_tokens,
            token_budget=ctx.scenario.token_budget,
            top_k=1,
            stack=ctx.stack,
        )
    except ScalewallError as exc:
        return {**entry, "reason": str(exc)}
    best = result.best
    if best is None:
        return {**entry, "reason": result.reason}
    row = {"tokens_per_s": best.tokens_per_s, "step_time_s": best.step_time_s, "mfu": best.mfu}
    gp = _goodput(ctx, cluster, best.plan, row).goodput_frac
    run = training_cost(_tco(ctx, cluster, row, gp), ctx.scenario.token_budget)
    return {
        **entry,
        "fits": True,
        "mfu": best.mfu,
        "goodput_frac": gp,
        "calendar_s": run.calendar_s,
        "compute_usd": run.owned_usd,
        "memory_frac": best.memory_total_bytes / best.hbm_bytes,
    }


def report_path_default() -> Path:
    return Path("report.html")
