"""Rules that turn numbers into advice: the staged growth path (which loss dominates at each
stage, what to invest in before the next) and what a cluster needs from its scheduler.

Advice is data: a ``kind`` plus the numbers its sentence needs; `scalewall.report.strings`
holds one sentence per kind and language. Thresholds are named here with their reasons.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from scalewall.search.engine import MEMORY_WARN_FRAC
from scalewall.sweep import find_knee

CHECKPOINT_LOSS_LIMIT = 0.005
"""Checkpoint stalls above 0.5% of wall time are worth buying storage bandwidth for: at 16,384
GPUs a point of goodput is about 160 GPUs idle."""
RESTART_LOSS_LIMIT = 0.02
"""Restart overhead above 2% of wall time calls for faster restarts (warm spares, in-memory
checkpoint restore, pre-staged containers)."""
AUTOMATION_PER_DAY = 1.0
"""At one or more interruptions a day, no operator can be in the loop for each restart."""
NO_SPARES_NEEDED = 0

SCALE_UP_PARTS = ("tp_comm", "cp_comm")
SCALE_OUT_PARTS = ("dp_comm", "pp_comm")
DOMINANT_EXCLUDES = ("compute_efficiency",)
"""Kernel efficiency is a property of the accelerator and the model, not of the cluster size;
the dominant bottleneck is named among the other losses."""


def memory_bound(row: dict[str, Any], hbm_bytes: float) -> bool:
    """A size whose best plan uses more than `MEMORY_WARN_FRAC` of the HBM or recomputes every
    layer (the search only takes full recomputation when nothing lighter fits)."""
    frac = float(row["memory_total_bytes"]) / hbm_bytes
    return frac > MEMORY_WARN_FRAC or row["plan"]["recompute"] == "full"


def knee_vs_best(rows: Sequence[dict[str, Any]], threshold: float) -> dict[str, Any] | None:
    """The knee measured against the best per-GPU throughput of the sweep, not the smallest
    size's: from the size with the highest tokens/s per GPU on, the first size whose added GPUs
    each bring less than ``threshold`` of that best rate (a memory-bound smallest size has a low
    per-GPU rate and would hide the knee). Its cause is the loss that grew most
    (`sweep.find_knee`). The result carries the reference size and rate."""
    if not rows:
        return None
    peak = max(range(len(rows)), key=lambda i: rows[i]["tokens_per_s_per_gpu"])
    best = rows[peak]["tokens_per_s_per_gpu"]
    rescaled = []
    for r in rows[peak:]:
        added = r["marginal_efficiency_frac"] * rows[0]["tokens_per_s_per_gpu"]
        rescaled.append({**r, "marginal_efficiency_frac": added / best, "found": True})
    rescaled[0]["marginal_efficiency_frac"] = math.nan
    knee = find_knee(rescaled, threshold)
    out = {"best_gpus": rows[peak]["gpus"], "best_tokens_per_s_per_gpu": best, "knee": None}
    if knee is not None:
        out["knee"] = knee.to_dict()
    return out


def _gpu_s_per_token(row: dict[str, Any], part: str) -> float:
    frac = float(row["loss_fracs"].get(part, 0.0))
    return 0.0 if math.isnan(frac) else frac * row["gpus"] / row["tokens_per_s"]


def dominant_loss(row: dict[str, Any]) -> str:
    """The largest loss at one size, kernel efficiency aside."""
    losses = {k: v for k, v in row["loss_fracs"].items() if k not in DOMINANT_EXCLUDES}
    return str(max(losses, key=lambda k: float(losses[k])))


def rising_loss(row: dict[str, Any], following: dict[str, Any]) -> str:
    """The loss whose GPU-seconds per token grow most from ``row`` to ``following``."""
    parts = set(row["loss_fracs"]) | set(following["loss_fracs"])
    growth = {p: _gpu_s_per_token(following, p) - _gpu_s_per_token(row, p) for p in parts}
    return str(max(sorted(growth), key=lambda p: growth[p]))


def _loss_advice(part: str, following: dict[str, Any]) -> dict[str, Any]:
    if part in SCALE_UP_PARTS:
        return {"kind": "scale_up", "part": part}
    if part in SCALE_OUT_PARTS:
        return {"kind": "scale_out", "part": part, "tier": following["comm_tier"][part]}
    if part in ("pipeline_bubble", "compute_efficiency"):
        per_replica = following["global_batch"] / following["plan"]["dp"]
        return {"kind": "batch", "part": part, "per_replica": per_replica}
    if part == "goodput":
        return {"kind": "reliability", "goodput_frac": following["goodput_frac"]}
    if part == "straggler":
        return {"kind": "straggler"}
    if part == "recompute":
        return {"kind": "memory"}
    return {"kind": "software", "part": part}


def _network_advice(row: dict[str, Any], following: dict[str, Any]) -> dict[str, Any]:
    added = {
        "switches_added": following["switches"] - row["switches"],
        "network_usd_added": following["network_capex_usd"] - row["network_capex_usd"],
    }
    if following["switch_tiers"] > row["switch_tiers"]:
        new = following["bom_tiers"][len(row["bom_tiers"]) :]
        return {
            "kind": "network_tier",
            "tier": ", ".join(new),
            "tiers_to": following["switch_tiers"],
            **added,
        }
    return {"kind": "network_grow", **added}


def _storage_advice(following: dict[str, Any]) -> dict[str, Any] | None:
    """Young's approximation: the optimal-interval checkpoint loss grows as sqrt(2 stall / MTTF)
    (Young, CACM 1974), so cutting it from l to L needs the stall, hence the write time, cut by
    (l / L)^2 and the aggregate write bandwidth raised by the same factor."""
    loss = following["goodput_loss_fracs"].get("checkpoint", 0.0)
    if loss < CHECKPOINT_LOSS_LIMIT or following["checkpoint_write_s"] <= 0:
        return None
    bandwidth = following["checkpoint_bytes"] / following["checkpoint_write_s"]
    return {
        "kind": "storage",
        "loss_frac": loss,
        "bandwidth_bytes_per_s": bandwidth,
        "needed_bytes_per_s": bandwidth * (loss / CHECKPOINT_LOSS_LIMIT) ** 2,
    }


def _reliability_advice(following: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if following["spare_nodes"] > NO_SPARES_NEEDED:
        out.append({"kind": "spares", "spare_nodes": following["spare_nodes"]})
    storage = _storage_advice(following)
    if storage:
        out.append(storage)
    restart = following["goodput_loss_fracs"].get("restart", 0.0)
    if restart >= RESTART_LOSS_LIMIT:
        out.append({"kind": "restart", "loss_frac": restart, "restart_s": following["restart_s"]})
    if following["interruptions_per_day"] >= AUTOMATION_PER_DAY:
        out.append({"kind": "automation", "per_day": following["interruptions_per_day"]})
    return out


def _stage(row: dict[str, Any], following: dict[str, Any] | None) -> dict[str, Any]:
    keep = (
        "gpus", "nodes", "mfu", "goodput_frac", "tokens_per_s", "time_to_train_s",
        "usd_per_million_tokens", "capex_usd", "switch_tiers", "interruptions_per_day",
        "checkpoint_write_s", "spare_nodes", "plan",
    )  # fmt: skip
    stage = {k: row[k] for k in keep}
    stage["calendar_s"] = row["time_to_train_s"] / row["goodput_frac"]
    stage["dominant"] = dominant_loss(row)
    stage["dominant_frac"] = float(row["loss_fracs"][stage["dominant"]])
    stage["next_gpus"] = following["gpus"] if following else None
    stage["rising"] = rising_loss(row, following) if following else None
    invest: list[dict[str, Any]] = []
    if following is not None:
        invest.append(_network_advice(row, following))
        invest.append(_loss_advice(stage["rising"], following))
        invest.extend(_reliability_advice(following))
    stage["invest"] = _dedupe(invest)
    return stage


def _dedupe(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    out = []
    for item in items:
        if item["kind"] not in seen:
            seen.add(item["kind"])
            out.append(item)
    return out


def growth_path(rows: Sequence[dict[str, Any]], stages: Sequence[int]) -> list[dict[str, Any]]:
    """One entry per stage size that has a plan: its figures, the dominant loss, the loss that
    grows most on the way to the next stage and the investments to make before it."""
    by_gpus = {int(r["gpus"]): r for r in rows}
    present = [by_gpus[g] for g in sorted(stages) if g in by_gpus]
    out = []
    for i, row in enumerate(present):
        following = present[i + 1] if i + 1 < len(present) else _next_size(rows, row)
        out.append(_stage(row, following))
    return out


def _next_size(rows: Sequence[dict[str, Any]], row: dict[str, Any]) -> dict[str, Any] | None:
    """After the last stage, the next larger size the sweep has (what to fix to grow on)."""
    larger = [r for r in rows if r["gpus"] > row["gpus"]]
    return min(larger, key=lambda r: int(r["gpus"])) if larger else None


def scheduling_needs(
    nodes: int, switch_tiers: int, reliability: dict[str, Any]
) -> list[dict[str, Any]]:
    """What the cluster's scheduler must do for one job filling it."""
    needs: list[dict[str, Any]] = [{"kind": "gang", "nodes": nodes}]
    per_day = reliability["interruptions_per_day"]
    if per_day >= AUTOMATION_PER_DAY:
        needs.append({"kind": "auto_restart", "per_day": per_day})
    else:
        needs.append({"kind": "restart_rare", "days_between": 1.0 / per_day if per_day else 0.0})
    if reliability["spare_nodes"] > NO_SPARES_NEEDED:
        needs.append({"kind": "spares", "spare_nodes": reliability["spare_nodes"]})
    if switch_tiers >= 3:
        needs.append({"kind": "topology"})
    needs.append({"kind": "checkpoint_interval", "interval_s": reliability["interval_s"]})
    return needs
