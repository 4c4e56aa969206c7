"""One chunk of points: each point's search and its cost, as rows of one fixed schema."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any

from scalewall.cost import PriceBook, hardware_from_cluster, load_prices, tco
from scalewall.errors import ScalewallError
from scalewall.explore.grid import BatchRule, ExploreConfig, Point
from scalewall.search.engine import resolve_batch, search

PLAN_COLUMNS = (
    "tp", "pp", "vpp", "cp", "dp", "ep", "micro_batch", "recompute", "zero",
    "sequence_parallel", "precision",
)  # fmt: skip
"""Plan fields copied into a row (``plan_<field>``)."""

COLUMNS: dict[str, str] = {
    "point_key": "string",
    "model": "string",
    "accelerator": "string",
    "design": "string",
    "fabric": "string",
    "gpus": "int64",
    "batch_rule": "string",
    "global_batch": "int64",
    "seq_len": "int64",
    "found": "bool",
    "reason": "string",
    **{f"plan_{c}": "string" if c in ("recompute", "precision") else "int64" for c in PLAN_COLUMNS},
    "plans_enumerated": "int64",
    "plans_evaluated": "int64",
    "step_time_s": "float64",
    "tokens_per_s": "float64",
    "mfu": "float64",
    "memory_total_bytes": "float64",
    "time_to_train_s": "float64",
    "limiter": "string",
    "cluster_usd_per_s": "float64",
    "tokens_per_usd": "float64",
}
"""Every row's columns and their Arrow types; ``model`` and ``accelerator`` partition the
dataset. ``tokens_per_usd`` is tokens/s over the cluster's owned cost in USD/s (amortised capex
plus opex, ``cost.tco``) at the catalog prices; NaN where the catalog has no price."""


@dataclass(frozen=True, kw_only=True)
class ChunkTask:
    config: ExploreConfig
    points: tuple[Point, ...]


@dataclass(frozen=True, kw_only=True)
class ChunkResult:
    rows: list[dict[str, Any]]
    failed: list[tuple[str, str]]
    """(point key, error) of points whose evaluation raised an unexpected error: not written,
    so a rerun tries them again."""


@cache
def _prices() -> PriceBook:
    return load_prices()


def _empty_row(config: ExploreConfig, point: Point) -> dict[str, Any]:
    design = config.designs[point.design]
    row: dict[str, Any] = {c: None for c in COLUMNS}
    row.update(
        point_key=point.key,
        model=point.model,
        accelerator=design.accelerator.id,
        design=point.design,
        fabric=design.fabric.id,
        gpus=point.gpus,
        batch_rule=point.batch,
        found=False,
        reason="",
    )
    for name, kind in COLUMNS.items():
        if kind == "float64" and row[name] is None:
            row[name] = math.nan
    return row


def _cost_usd_per_s(cluster: Any) -> float:
    try:
        return float(tco(hardware_from_cluster(cluster), _prices()).owned_usd_per_s)
    except ScalewallError:
        return math.nan


def run_point(config: ExploreConfig, point: Point) -> dict[str, Any]:
    """The row of one point: the best plan by tokens/s (a point without one has a reason)."""
    row = _empty_row(config, point)
    model = config.models[point.model]
    try:
        _, seq = resolve_batch(model, config.seq_len, None, None)
        batch = BatchRule.parse(point.batch).global_batch(point.gpus, seq)
        row.update(global_batch=batch, seq_len=seq)
        cluster = config.designs[point.design].at(point.gpus)
        result = search(
            model, cluster, global_batch=batch, seq_len=seq, space=config.space,
            stack=config.stack, efficiency=config.efficiency, top_k=1,
            token_budget=config.token_budget,
        )  # fmt: skip
    except ScalewallError as exc:
        row["reason"] = str(exc)
        return row
    row.update(plans_enumerated=result.counts.enumerated, plans_evaluated=result.counts.evaluated)
    best = result.best
    if best is None:
        row["reason"] = result.reason
        return row
    usd_per_s = _cost_usd_per_s(cluster)
    row.update(
        {f"plan_{c}": getattr(best.plan, c) for c in PLAN_COLUMNS},
        found=True,
        step_time_s=best.step_time_s,
        tokens_per_s=best.tokens_per_s,
        mfu=best.mfu,
        memory_total_bytes=best.memory_total_bytes,
        time_to_train_s=config.token_budget / best.tokens_per_s,
        limiter=best.limiter,
        cluster_usd_per_s=usd_per_s,
        tokens_per_usd=best.tokens_per_s / usd_per_s,
    )
    row["plan_sequence_parallel"] = int(best.plan.sequence_parallel)
    return row


def run_chunk(task: ChunkTask) -> ChunkResult:
    """Every point of a chunk; an unexpected error fails that point only."""
    rows, failed = [], []
    for point in task.points:
        try:
            rows.append(run_point(task.config, point))
        except Exception as exc:  # a bug in one point must not lose the chunk's other rows
            failed.append((point.key, f"{type(exc).__name__}: {exc}"))
    return ChunkResult(rows=rows, failed=failed)
