"""The decision: which option meets the target date, at what total cost, and where the larger
option starts to pay off.

Total cost to train = compute + time. Compute is the owned cost rate (capex amortised plus
opex, `scalewall.cost.tco`) over the calendar time of the run; time is the calendar days times
the scenario's value of a day, plus a penalty per day past the target. An option whose run ends
after the target is infeasible: it is reported with how late it would be and is never chosen
as "cheaper" while a feasible option exists.

The break-even compares the largest option with the smallest, from the sweeps the report ran:
over model size (the candidate models, each searched on both), over the token budget and the
target (where the smaller one stops meeting the date) and over the value of time (the dollars
per day at which the faster one's shorter run pays for its higher compute cost). Between two
swept models the crossing is interpolated in log-log (run time and cost grow as a power of the
parameter count, about linearly at a fixed token budget: 6 N D FLOPs).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from scalewall.units import DAY_S


def outcome(
    calendar_s: float,
    compute_usd: float,
    *,
    target_s: float,
    value_usd_per_day: float,
    late_usd_per_day: float,
) -> dict[str, Any]:
    """One option's run against the target: feasibility, days late and total cost."""
    late_s = max(calendar_s - target_s, 0.0)
    time_usd = value_usd_per_day * calendar_s / DAY_S
    penalty_usd = late_usd_per_day * late_s / DAY_S
    return {
        "calendar_s": calendar_s,
        "feasible": bool(calendar_s <= target_s),
        "late_s": late_s,
        "compute_usd": compute_usd,
        "time_usd": time_usd,
        "penalty_usd": penalty_usd,
        "total_usd": compute_usd + time_usd + penalty_usd,
    }


def _rank_key(o: dict[str, Any]) -> tuple[bool, float]:
    """Feasible first, then by total cost; among infeasible ones the earliest finish first."""
    if o["feasible"]:
        return (False, o["total_usd"])
    return (True, o["calendar_s"])


def choose(outcomes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The chosen option's name, whether it meets the target, and the reasons as data."""
    ranked = sorted(outcomes, key=_rank_key)
    best = ranked[0]
    reasons: list[dict[str, Any]] = []
    others = ranked[1:]
    late = [o for o in others if not o["feasible"]]
    if best["feasible"] and late:
        reasons.append({"kind": "others_late", "names": [o["name"] for o in late]})
    rivals = [o for o in others if o["feasible"]]
    if rivals:
        rival = rivals[0]
        if best["compute_usd"] <= rival["compute_usd"]:
            reasons.append(
                {
                    "kind": "cheaper_compute",
                    "rival": rival["name"],
                    "saved_usd": rival["compute_usd"] - best["compute_usd"],
                    "effective_frac": best["effective_frac"],
                    "rival_effective_frac": rival["effective_frac"],
                }
            )
        else:
            reasons.append(
                {
                    "kind": "time_pays",
                    "rival": rival["name"],
                    "days_saved": (rival["calendar_s"] - best["calendar_s"]) / DAY_S,
                    "time_saved_usd": rival["time_usd"]
                    + rival["penalty_usd"]
                    - best["time_usd"]
                    - best["penalty_usd"],
                    "extra_compute_usd": best["compute_usd"] - rival["compute_usd"],
                }
            )
    if not best["feasible"]:
        reasons.append({"kind": "none_feasible"})
    return {"name": best["name"], "feasible": best["feasible"], "reasons": reasons[:2]}


def _wins(big: dict[str, Any], small: dict[str, Any]) -> bool:
    """The larger option is the cheaper way to meet the target."""
    if not big["feasible"]:
        return False
    return not small["feasible"] or big["total_usd"] < small["total_usd"]


def _log_cross(x0: float, x1: float, f0: float, f1: float) -> float:
    """Where a function linear in log x crosses zero between (x0, f0) and (x1, f1)."""
    if f0 == f1:
        return x1
    w = f0 / (f0 - f1)
    return math.exp(math.log(x0) + w * (math.log(x1) - math.log(x0)))


def _crossing(prev: dict[str, Any], cur: dict[str, Any], target_s: float) -> float:
    """The parameter count between two swept models at which the larger option takes over:
    where the smaller one's run reaches the target, or where the total costs are equal."""
    ps, cs = prev["small"], cur["small"]
    if ps["feasible"] and not cs["feasible"] and math.isfinite(cs["calendar_s"]):
        f0 = math.log(ps["calendar_s"] / target_s)
        f1 = math.log(cs["calendar_s"] / target_s)
    else:
        f0 = math.log(prev["big"]["total_usd"] / prev["small"]["total_usd"])
        f1 = math.log(cur["big"]["total_usd"] / cur["small"]["total_usd"])
    return _log_cross(prev["params"], cur["params"], f0, f1)


def model_breakeven(points: Sequence[dict[str, Any]], target_s: float) -> dict[str, Any]:
    """Over models sorted by size (each with ``small`` and ``big`` outcomes): the parameter
    count from which the larger option wins, or why there is none."""
    usable = [p for p in points if p["big"]["feasible"] or p["small"]["feasible"]]
    if not usable:
        return {"kind": "none_feasible", "params": None}
    wins = [_wins(p["big"], p["small"]) for p in usable]
    if all(wins):
        return {"kind": "always", "params": usable[0]["params"], "model": usable[0]["id"]}
    if not any(wins):
        return {"kind": "never", "params": usable[-1]["params"], "model": usable[-1]["id"]}
    i = next(i for i in range(1, len(wins)) if wins[i] and not wins[i - 1])
    prev, cur = usable[i - 1], usable[i]
    return {
        "kind": "cross",
        "params": _crossing(prev, cur, target_s),
        "between": [prev["id"], cur["id"]],
        "reason": "deadline"
        if prev["small"]["feasible"] and not cur["small"]["feasible"]
        else "cost",
    }


def value_breakeven(big: dict[str, Any], small: dict[str, Any]) -> float | None:
    """Dollars per day of earlier completion above which the larger option's total is lower:
    (compute_big - compute_small) / (days_small - days_big); 0 when it is cheaper anyway,
    None when it is not faster."""
    days = float(small["calendar_s"] - big["calendar_s"]) / DAY_S
    if not days > 0 or not math.isfinite(days):
        return None
    return max(float(big["compute_usd"]) - float(small["compute_usd"]), 0.0) / days


def scenario_breakeven(
    big: dict[str, Any], small: dict[str, Any], token_budget: float, target_s: float
) -> dict[str, Any]:
    """For the scenario's model: the token budget above which and the target below which the
    smaller option cannot meet the date (its throughput held at the sweep's), and the value of
    time at which the larger one is the cheaper."""
    rate = token_budget / small["calendar_s"]
    return {
        "token_budget": rate * target_s,
        "target_s": small["calendar_s"],
        "big_target_s": big["calendar_s"],
        "value_of_time_usd_per_day": value_breakeven(big, small),
    }
