"""The report's plotly figures, built from a report's data with labels in one language."""

from __future__ import annotations

import math
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from scalewall.sweep import LOSS_PARTS

GIB = 2**30
TEMPLATE = "plotly_white"


def _clean(values: list[float]) -> list[float]:
    return [0.0 if v is None or math.isnan(v) else float(v) for v in values]


def wall_figure(t: dict[str, str], data: dict[str, Any]) -> go.Figure:
    """Tokens/s against GPUs (log-log) per option, linear scaling dashed, knees marked."""
    fig = go.Figure()
    for o in data["options"]:
        rows = o["sweep"]["rows"]
        gpus = [r["gpus"] for r in rows]
        fig.add_trace(
            go.Scatter(
                x=gpus, y=[r["tokens_per_s"] for r in rows], mode="lines+markers", name=o["name"]
            )
        )
        base = rows[0]["tokens_per_s"] / rows[0]["gpus"]
        fig.add_trace(
            go.Scatter(
                x=gpus,
                y=[base * g for g in gpus],
                mode="lines",
                line={"dash": "dot"},
                name=t["fig.ideal"].format(name=o["name"]),
            )
        )
        chosen = next(r for r in rows if r["gpus"] == o["gpus"])
        fig.add_trace(
            go.Scatter(
                x=[o["gpus"]],
                y=[chosen["tokens_per_s"]],
                mode="markers",
                marker={"size": 14, "symbol": "star"},
                name=t["fig.option_point"].format(name=o["name"]),
            )
        )
        knee = o["sweep"]["knee"]
        if knee is not None:
            at = next(r for r in rows if r["gpus"] == knee["gpus"])
            label = t["fig.knee"].format(cause=t.get(f"loss.{knee['cause']}", knee["cause"]))
            fig.add_trace(
                go.Scatter(
                    x=[knee["gpus"]],
                    y=[at["tokens_per_s"]],
                    mode="markers+text",
                    text=[label],
                    textposition="top left",
                    marker={"size": 16, "symbol": "x", "color": "red"},
                    name=label,
                )
            )
    fig.update_xaxes(type="log", title_text=t["fig.gpus"])
    fig.update_yaxes(type="log", title_text=t["fig.tokens_per_s"])
    fig.update_layout(title=t["fig.wall"], template=TEMPLATE, height=520)
    return fig


def efficiency_figure(t: dict[str, str], data: dict[str, Any]) -> go.Figure:
    """MFU, goodput and owned cost per million tokens against GPUs, per option."""
    titles = (t["fig.mfu"], t["fig.goodput"], t["fig.usd_per_mtok"])
    fig = make_subplots(rows=1, cols=3, subplot_titles=titles, horizontal_spacing=0.08)
    keys = ("mfu", "goodput_frac", "usd_per_million_tokens")
    for o in data["options"]:
        rows = o["sweep"]["rows"]
        gpus = [r["gpus"] for r in rows]
        for col, key in enumerate(keys, start=1):
            fig.add_trace(
                go.Scatter(
                    x=gpus,
                    y=[r[key] for r in rows],
                    mode="lines+markers",
                    name=o["name"],
                    legendgroup=o["name"],
                    showlegend=col == 1,
                ),
                row=1,
                col=col,
            )
    fig.update_xaxes(type="log", title_text=t["fig.gpus"])
    fig.update_layout(template=TEMPLATE, height=420)
    return fig


def losses_figure(t: dict[str, str], data: dict[str, Any]) -> go.Figure:
    """The largest option's step split into MFU and named losses, stacked per size."""
    option = max(data["options"], key=lambda o: o["gpus"])
    rows = option["sweep"]["rows"]
    labels = [f"{r['gpus']:,}" for r in rows]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=labels, y=[r["mfu"] for r in rows], name=t["loss.mfu"]))
    for part in LOSS_PARTS:
        values = _clean([r["loss_fracs"].get(part, 0.0) for r in rows])
        if any(v > 0 for v in values):
            fig.add_trace(go.Bar(x=labels, y=values, name=t.get(f"loss.{part}", part)))
    fig.update_layout(barmode="stack", template=TEMPLATE, height=480)
    fig.update_xaxes(title_text=t["fig.gpus"], type="category")
    fig.update_yaxes(title_text=t["fig.fraction"])
    return fig


def memory_figure(t: dict[str, str], data: dict[str, Any]) -> go.Figure:
    """Each option's best plan: memory per GPU by part (GiB), with the HBM size."""
    names = [o["name"] for o in data["options"]]
    parts = list(dict.fromkeys(p for o in data["options"] for p in o["best"]["memory_bytes"]))
    fig = go.Figure()
    for part in parts:
        values = [o["best"]["memory_bytes"].get(part, 0.0) / GIB for o in data["options"]]
        fig.add_trace(go.Bar(x=names, y=values, name=t.get(f"mem.{part}", part)))
    hbm = [o["best"]["hbm_bytes"] / GIB for o in data["options"]]
    fig.add_trace(
        go.Scatter(
            x=names,
            y=hbm,
            mode="markers+lines",
            name=t["fig.hbm"],
            marker={"symbol": "line-ew-open", "size": 30},
        )
    )
    fig.update_layout(barmode="stack", template=TEMPLATE, height=420)
    fig.update_yaxes(title_text=t["fig.memory"])
    return fig


def failures_figure(t: dict[str, str], data: dict[str, Any]) -> go.Figure:
    """Interruptions per day by cause, and the share of wall time lost by kind, per option."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=(t["fig.per_day"], t["fig.goodput_loss"]))
    names = [o["name"] for o in data["options"]]
    rel = [o["reliability"] for o in data["options"]]
    causes = [
        c
        for c in rel[0]["interruptions_per_day_by_cause"]
        if any(r["interruptions_per_day_by_cause"][c] > 0 for r in rel)
    ]
    for cause in causes:
        values = [r["interruptions_per_day_by_cause"][cause] for r in rel]
        fig.add_trace(go.Bar(x=names, y=values, name=cause), row=1, col=1)
    for kind in rel[0]["loss_fracs"]:
        values = [r["loss_fracs"][kind] for r in rel]
        fig.add_trace(go.Bar(x=names, y=values, name=t.get(f"gp.{kind}", kind)), row=1, col=2)
    fig.update_layout(barmode="stack", template=TEMPLATE, height=460)
    return fig


def bom_figure(t: dict[str, str], data: dict[str, Any]) -> go.Figure:
    """Switches per network tier, and capex by category (M$), per option."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=(t["fig.switches"], t["fig.capex_musd"]))
    names = [o["name"] for o in data["options"]]
    tiers = list(dict.fromkeys(tr["name"] for o in data["options"] for tr in o["bom"]["tiers"]))
    for tier in tiers:
        values = [
            sum(tr["switches"] for tr in o["bom"]["tiers"] if tr["name"] == tier)
            for o in data["options"]
        ]
        fig.add_trace(go.Bar(x=names, y=values, name=tier), row=1, col=1)
    for category in data["options"][0]["cost"]["capex_by_category_usd"]:
        values = [o["cost"]["capex_by_category_usd"][category] / 1e6 for o in data["options"]]
        fig.add_trace(
            go.Bar(x=names, y=values, name=t.get(f"cap.{category}", category)), row=1, col=2
        )
    fig.update_layout(barmode="stack", template=TEMPLATE, height=440)
    return fig


def growth_figure(t: dict[str, str], data: dict[str, Any]) -> go.Figure:
    """Capex per growth stage (bars) and days to train the token budget (line)."""
    stages = data["growth"]
    labels = [f"{s['gpus']:,}" for s in stages]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(
        go.Bar(x=labels, y=[s["capex_usd"] / 1e6 for s in stages], name=t["fig.capex_by_stage"]),
        secondary_y=False,
    )
    fig.add_trace(
        go.Scatter(
            x=labels,
            y=[s["calendar_s"] / 86400 for s in stages],
            mode="lines+markers",
            name=t["fig.days"],
        ),
        secondary_y=True,
    )
    fig.update_xaxes(title_text=t["fig.gpus"], type="category")
    fig.update_yaxes(title_text=t["fig.capex_musd"], secondary_y=False)
    fig.update_yaxes(title_text=t["fig.days"], type="log", secondary_y=True)
    fig.update_layout(template=TEMPLATE, height=420)
    return fig


FIGURES = {
    "wall": wall_figure,
    "efficiency": efficiency_figure,
    "losses": losses_figure,
    "memory": memory_figure,
    "failures": failures_figure,
    "bom": bom_figure,
    "growth": growth_figure,
}
"""Figure id -> builder; the HTML page has one ``<div id="fig-<id>">`` per entry."""
