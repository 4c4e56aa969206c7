"""A report's content in one language: summary, verdict, comparison, growth, failure and BOM
tables as text, next to the numbers (``data``). ``--json`` prints this; the HTML renders it."""

from __future__ import annotations

import math
from typing import Any

from scalewall.report.build import Report
from scalewall.report.strings import strings
from scalewall.units import DAY_S, HOUR_S

GIB = 2**30
TOP_CAUSES = 3


def money(usd: float | None) -> str:
    if usd is None or math.isnan(usd):
        return "-"
    for scale, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(usd) >= scale:
            return f"${usd / scale:,.2f}{suffix}"
    return f"${usd:,.2f}"


def count_text(n: float) -> str:
    """15e12 -> 15T, 1.6e9 -> 1.6B."""
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if abs(n) >= scale:
            return f"{n / scale:,.3g}{suffix}"
    return f"{n:,.0f}"


def pct(frac: float) -> str:
    return f"{frac:.1%}"


def bytes_text(n: float) -> str:
    return f"{n / 1e12:,.2f} TB" if n >= 1e12 else f"{n / GIB:,.1f} GiB"


def rate_text(bytes_per_s: float) -> str:
    return f"{bytes_per_s / 1e9:,.0f} GB/s"


def duration(t: dict[str, str], seconds: float) -> str:
    """Seconds in the largest unit that keeps the number readable."""
    if seconds >= 2 * DAY_S:
        return t["unit.days"].format(value=f"{seconds / DAY_S:,.1f}")
    if seconds >= 2 * HOUR_S:
        return t["unit.hours"].format(value=f"{seconds / HOUR_S:,.1f}")
    if seconds >= 120:
        return t["unit.minutes"].format(value=f"{seconds / 60:,.1f}")
    return t["unit.seconds"].format(value=f"{seconds:,.1f}")


def plan_text(plan: dict[str, Any]) -> str:
    return (
        f"TP{plan['tp']} PP{plan['pp']} CP{plan['cp']} DP{plan['dp']} "
        f"(v{plan['vpp']}, ZeRO-{plan['zero']}, recompute {plan['recompute']})"
    )


def loss_name(t: dict[str, str], part: str | None) -> str:
    return "-" if part is None else t.get(f"loss.{part}", part)


def advice_text(t: dict[str, str], item: dict[str, Any], prefix: str = "inv") -> str:
    """One investment (``inv``) or scheduling need (``need``) as a sentence."""
    kind = item["kind"]
    fields: dict[str, Any] = {
        "part": loss_name(t, item.get("part")),
        "tier": item.get("tier", ""),
        "switches": f"{item.get('switches_added', 0):,}",
        "usd": money(item.get("network_usd_added")),
        "per_replica": f"{item.get('per_replica', 0):g}",
        "goodput": pct(item.get("goodput_frac", 0.0)),
        "spare_nodes": item.get("spare_nodes", 0),
        "loss": pct(item.get("loss_frac", 0.0)),
        "bw": rate_text(item.get("bandwidth_bytes_per_s", 0.0)),
        "needed": rate_text(item.get("needed_bytes_per_s", 0.0)),
        "restart": duration(t, item.get("restart_s", 0.0)),
        "per_day": f"{item.get('per_day', 0.0):.1f}",
        "nodes": f"{item.get('nodes', 0):,}",
        "days": f"{item.get('days_between', 0.0):.1f}",
        "interval": duration(t, item.get("interval_s", 0.0)),
    }
    return t[f"{prefix}.{kind}"].format(**fields)


def _largest_model(t: dict[str, str], option: dict[str, Any]) -> str:
    inside = [c for c in option["candidates"] if c["in_target"]]
    if not inside:
        models = ", ".join(c["id"] for c in option["candidates"])
        return t["cell.no_model"].format(models=models)
    best = inside[-1]
    return t["cell.largest_model"].format(
        model=best["id"], days=f"{best['calendar_s'] / DAY_S:.0f}"
    )


def _scaling(option: dict[str, Any]) -> tuple[float, int]:
    rows = option["sweep"]["rows"]
    row = next(r for r in rows if r["gpus"] == option["gpus"])
    return row["scaling_efficiency_frac"], rows[0]["gpus"]


def _comparison(t: dict[str, str], data: dict[str, Any]) -> dict[str, Any]:
    sc = data["scenario"]
    opts = data["options"]
    tokens = count_text(sc["token_budget"])
    days = f"{sc['target_days']:.0f}"
    rows: list[list[str]] = []

    def add(label: str, cell: Any) -> None:
        rows.append([label, *(cell(o) for o in opts)])

    add(
        t["dim.scale"],
        lambda o: t["cell.scale"].format(
            gpus=f"{o['gpus']:,}",
            nodes=f"{o['nodes']:,}",
            mw=f"{o['cost']['it_capacity_w'] / 1e6:,.1f}",
        ),
    )
    add(t["dim.plan"], lambda o: plan_text(o["best"]["plan"]))
    add(t["dim.largest_model"].format(days=days), lambda o: _largest_model(t, o))
    add(
        t["dim.network"],
        lambda o: t["cell.network"].format(
            tiers=o["bom"]["switch_tiers"],
            switches=f"{o['bom']['switches']:,}",
            transceivers=f"{o['bom']['transceivers']:,}",
            fabric=o["bom"]["fabric"],
        ),
    )
    add(
        t["dim.checkpoint"],
        lambda o: t["cell.checkpoint"].format(
            size=bytes_text(o["reliability"]["checkpoint_bytes"]),
            interval=duration(t, o["reliability"]["interval_s"]),
            write=duration(t, o["reliability"]["checkpoint_write_s"]),
            loss=pct(o["reliability"]["loss_fracs"]["checkpoint"]),
        ),
    )
    add(
        t["dim.failures"],
        lambda o: t["cell.failures"].format(
            per_day=f"{o['reliability']['interruptions_per_day']:.2f}",
            mttf=duration(t, o["reliability"]["mttf_s"]),
            expected=f"{o['reliability']['expected_interruptions']:,.0f}",
        ),
    )
    add(
        t["dim.scheduling"],
        lambda o: t["sep"].join(advice_text(t, n, "need") for n in o["scheduling"]),
    )
    add(t["dim.capex"], lambda o: money(o["cost"]["capex_usd"]))
    add(t["dim.opex"], lambda o: money(o["cost"]["opex_usd_per_year"]))
    add(t["dim.flop_cost"], lambda o: money(o["cost"]["usd_per_effective_pflop_day"]))
    add(
        t["dim.token_cost"],
        lambda o: (
            f"{money(o['cost']['usd_per_million_tokens'])} / "
            f"{money(o['cost']['rental_usd_per_million_tokens'])}"
        ),
    )
    add(
        t["dim.efficiency"],
        lambda o: t["cell.efficiency"].format(
            mfu=pct(o["best"]["mfu"]),
            goodput=pct(o["reliability"]["goodput_frac"]),
            scaling=f"{_scaling(o)[0]:.0%}",
            base=f"{_scaling(o)[1]:,}",
        ),
    )
    add(
        t["dim.train"].format(tokens=tokens),
        lambda o: t["cell.train"].format(
            days=f"{o['training']['calendar_s'] / DAY_S:,.1f}",
            owned=money(o["training"]["owned_usd"]),
            rented=money(o["training"]["rental_usd"]),
            mwh=f"{o['training']['energy_mwh']:,.0f}",
        ),
    )
    return {"columns": [t["col.dimension"], *(o["name"] for o in opts)], "rows": rows}


def _net_share(o: dict[str, Any]) -> str:
    return f"{o['bom']['network_capex_usd'] / o['cost']['capex_usd']:.0%}"


def verdict(t: dict[str, str], data: dict[str, Any]) -> list[str]:
    """Which option is cheaper per token, which is faster, and why."""
    opts = data["options"]
    sc = data["scenario"]
    if len(opts) < 2:
        return []
    cost = sorted(opts, key=lambda o: o["cost"]["usd_per_million_tokens"])
    time = sorted(opts, key=lambda o: o["training"]["calendar_s"])
    cheap, dear = cost[0], cost[-1]
    fast, slow = time[0], time[-1]
    small, big = min(opts, key=lambda o: o["gpus"]), max(opts, key=lambda o: o["gpus"])
    ratio = dear["cost"]["usd_per_million_tokens"] / cheap["cost"]["usd_per_million_tokens"]
    lines = [
        t["verdict.cheaper"].format(
            cheap=cheap["name"],
            other=dear["name"],
            cheap_usd=money(cheap["cost"]["usd_per_million_tokens"]),
            other_usd=money(dear["cost"]["usd_per_million_tokens"]),
            ratio=f"{ratio - 1:.0%}",
        ),
        t["verdict.faster"].format(
            fast=fast["name"],
            tokens=count_text(sc["token_budget"]),
            speedup=f"{slow['training']['calendar_s'] / fast['training']['calendar_s']:.1f}x",
            fast_days=f"{fast['training']['calendar_s'] / DAY_S:,.1f}",
            slow_days=f"{slow['training']['calendar_s'] / DAY_S:,.1f}",
        ),
        t["verdict.why"].format(
            big=big["name"],
            big_mfu=pct(big["best"]["mfu"]),
            small_mfu=pct(small["best"]["mfu"]),
            big_goodput=pct(big["reliability"]["goodput_frac"]),
            small_goodput=pct(small["reliability"]["goodput_frac"]),
            big_tiers=big["bom"]["switch_tiers"],
            big_net=_net_share(big),
            small_net=_net_share(small),
        ),
        t["verdict.target"].format(
            days=f"{sc['target_days']:.0f}",
            lines=t["sep"].join(f"{o['name']}: {_largest_model(t, o)}" for o in opts),
        ),
    ]
    return lines


def _growth(t: dict[str, str], data: dict[str, Any]) -> dict[str, Any]:
    columns = [
        t["col.gpus"],
        t["col.mfu"],
        t["col.goodput"],
        t["col.days"],
        t["col.usd_per_mtok"],
        t["col.capex"],
        t["col.tiers"],
        t["col.dominant"],
        t["col.rising"],
        t["col.invest"],
    ]
    rows = []
    for s in data["growth"]:
        rows.append(
            [
                f"{s['gpus']:,}",
                pct(s["mfu"]),
                pct(s["goodput_frac"]),
                f"{s['calendar_s'] / DAY_S:,.1f}",
                money(s["usd_per_million_tokens"]),
                money(s["capex_usd"]),
                str(s["switch_tiers"]),
                loss_name(t, s["dominant"]),
                loss_name(t, s["rising"]),
                t["sep"].join(advice_text(t, i) for i in s["invest"]) or t["summary.none"],
            ]
        )
    return {"columns": columns, "rows": rows}


def _failures(t: dict[str, str], data: dict[str, Any]) -> dict[str, Any]:
    columns = [
        t["col.option"],
        t["col.mttf"],
        t["col.per_day"],
        t["col.expected"],
        t["col.ckpt_size"],
        t["col.ckpt_write"],
        t["col.interval"],
        t["col.restart"],
        t["col.goodput"],
        t["col.top_causes"],
    ]
    rows = []
    for o in data["options"]:
        r = o["reliability"]
        causes = sorted(r["interruptions_per_day_by_cause"].items(), key=lambda kv: -kv[1])
        top = ", ".join(f"{c} {v:.2f}" for c, v in causes[:TOP_CAUSES])
        rows.append(
            [
                o["name"],
                duration(t, r["mttf_s"]),
                f"{r['interruptions_per_day']:.2f}",
                f"{r['expected_interruptions']:,.0f}",
                bytes_text(r["checkpoint_bytes"]),
                duration(t, r["checkpoint_write_s"]),
                duration(t, r["interval_s"]),
                duration(t, r["restart_s"]),
                pct(r["goodput_frac"]),
                top,
            ]
        )
    return {"columns": columns, "rows": rows}


def _bom(t: dict[str, str], data: dict[str, Any]) -> dict[str, Any]:
    columns = [
        t["col.option"],
        t["col.tier"],
        t["col.switches"],
        t["col.links"],
        t["col.medium"],
        t["col.transceivers"],
        t["col.cables"],
    ]
    rows = []
    for o in data["options"]:
        for tier in o["bom"]["tiers"]:
            cables = tier["fiber_cables"] + tier["dac_cables"]
            rows.append(
                [
                    f"{o['name']} ({money(o['bom']['network_capex_usd'])})",
                    tier["name"],
                    f"{tier['switches']:,}",
                    f"{tier['links']:,}",
                    tier["medium"],
                    f"{tier['transceivers']:,}",
                    f"{cables:,}",
                ]
            )
    return {"columns": columns, "rows": rows}


def knee_lines(t: dict[str, str], data: dict[str, Any]) -> list[str]:
    lines = []
    for o in data["options"]:
        sweep = o["sweep"]
        knee, weak = sweep["knee"], sweep["weakest"]
        if knee is not None:
            lines.append(
                t["knee"].format(
                    name=o["name"],
                    gpus=f"{knee['gpus']:,}",
                    marginal=pct(knee["marginal_efficiency_frac"]),
                    cause=loss_name(t, knee["cause"]),
                )
            )
        elif weak is not None:
            lines.append(
                t["no_knee"].format(
                    name=o["name"],
                    max_gpus=f"{sweep['rows'][-1]['gpus']:,}",
                    marginal=pct(weak["marginal_efficiency_frac"]),
                    gpus=f"{weak['gpus']:,}",
                )
            )
    return lines


def summary_lines(report: Report, lang: str = "en") -> list[str]:
    """The headline of each option, the verdict, the knees and the growth path."""
    t = strings(lang)
    data = report.data
    tokens = count_text(data["scenario"]["token_budget"])
    lines = [t["title"].format(model=data["model"]["id"])]
    for o in data["options"]:
        lines.append(
            t["summary.option"].format(
                name=o["name"],
                plan=plan_text(o["best"]["plan"]),
                mfu=pct(o["best"]["mfu"]),
                goodput=pct(o["reliability"]["goodput_frac"]),
                tokens=tokens,
                days=f"{o['training']['calendar_s'] / DAY_S:,.1f}",
                usd_mtok=money(o["cost"]["usd_per_million_tokens"]),
                capex=money(o["cost"]["capex_usd"]),
                train_usd=money(o["training"]["owned_usd"]),
            )
        )
    lines += verdict(t, data) + knee_lines(t, data)
    for s in data["growth"]:
        invest = t["sep"].join(advice_text(t, i) for i in s["invest"])
        key = "summary.growth" if s["next_gpus"] else "summary.growth_last"
        lines.append(
            t[key].format(
                gpus=f"{s['gpus']:,}",
                dominant=loss_name(t, s["dominant"]),
                next=f"{s['next_gpus']:,}" if s["next_gpus"] else "",
                invest=invest or t["summary.none"],
            )
        )
    return lines


def content(report: Report, lang: str = "en") -> dict[str, Any]:
    """Everything the HTML page shows, as text in ``lang`` plus the numbers (``data``)."""
    t = strings(lang)
    data = report.data
    return {
        "schema": data["schema"],
        "lang": lang,
        "title": t["title"].format(model=data["model"]["id"]),
        "summary": summary_lines(report, lang),
        "verdict": verdict(t, data),
        "knees": knee_lines(t, data),
        "comparison": _comparison(t, data),
        "growth": _growth(t, data),
        "failures": _failures(t, data),
        "bom": _bom(t, data),
        "data": data,
    }
