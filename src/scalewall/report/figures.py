"""The report's plotly figures, built from a report's data with labels in one language.

Colours carry meaning: each option has one colour in every figure (`OPTION_COLOURS`, by its
position in the scenario), and the parts of a stack (losses, failure causes, memory parts,
capex categories, switch tiers) take distinct colours from a separate palette
(`PART_COLOURS`), so a part is never drawn in an option's colour or in another part's. Every
stacked figure states its totals in ``layout.meta["stacks"]`` (per axis, per bar), which the
browser test checks against the drawn parts; axes carry explicit tick formats.
"""

from __future__ import annotations

import math
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from scalewall.report.content import band_label, count_text
from scalewall.sweep import LOSS_PARTS

GIB = 2**30
TEMPLATE = "plotly_white"
OPTION_COLOURS = ("#1F77B4", "#FF7F0E", "#2CA02C", "#D62728", "#9467BD", "#8C564B")
"""One colour per option (D3's first six), the same in every figure."""
PART_COLOURS = (
    "#2E91E5", "#E15F99", "#1CA71C", "#FB0D0D", "#DA16FF", "#222A2A", "#B68100", "#750D86",
    "#EB663B", "#511CFB", "#00A08B", "#FB00D1", "#FC0080", "#B2828D", "#6C7C32", "#778AAE",
    "#862A16", "#A777F1", "#620042", "#1616A7", "#DA60CA", "#6C4516", "#0D2A63", "#AF0038",
)  # fmt: skip
"""Distinct colours for the parts of a stack (plotly's Dark24)."""
BAND_ALPHA = 0.18
"""Opacity of an option's prediction band, drawn in its colour behind its line."""
SI_TICKS = "~s"
"""Log axes: 1k, 10k, 1M (SI prefixes, no trailing zeros)."""


def option_colour(i: int) -> str:
    return OPTION_COLOURS[i % len(OPTION_COLOURS)]


def part_colour(i: int) -> str:
    return PART_COLOURS[i % len(PART_COLOURS)]


def _drawing_order(data: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """Options with their colour index, largest first, so that a smaller option's line is
    drawn on top where the sweeps coincide (same hardware, same sizes)."""
    return sorted(enumerate(data["options"]), key=lambda io: -io[1]["gpus"])


def band_colour(i: int) -> str:
    """The option's colour at `BAND_ALPHA` opacity, as ``rgba(r,g,b,a)``."""
    hex_colour = option_colour(i)
    r, g, b = (int(hex_colour[k : k + 2], 16) for k in (1, 3, 5))
    return f"rgba({r},{g},{b},{BAND_ALPHA})"


def _band_trace(t: dict[str, str], i: int, option: dict[str, Any]) -> go.Scatter | None:
    """The option's tokens/s prediction band as a filled polygon in its colour; ``meta`` names
    the option so a reader of the figure tells it from the option's own line."""
    band = option["sweep"].get("band")
    if not band or not band["rows"]:
        return None
    gpus = [r["gpus"] for r in band["rows"]]
    high = [r["tokens_per_s_interval"][1] for r in band["rows"]]
    low = [r["tokens_per_s_interval"][0] for r in band["rows"]]
    return go.Scatter(
        x=gpus + gpus[::-1],
        y=high + low[::-1],
        mode="lines",
        fill="toself",
        fillcolor=band_colour(i),
        line={"width": 0, "color": band_colour(i)},
        name=band_label(t, option),
        legendgroup=option["name"],
        hoverinfo="skip",
        meta={"band": option["name"]},
    )


def _line_width(data: dict[str, Any], option: dict[str, Any]) -> float:
    """Wider lines for larger options, so one drawn over another still shows both."""
    larger = sum(o["gpus"] > option["gpus"] for o in data["options"])
    return 2.0 + 3.0 * float(len(data["options"]) - 1 - larger)


def _clean(values: list[float]) -> list[float]:
    return [0.0 if v is None or math.isnan(v) else float(v) for v in values]


def _stacks(fig: go.Figure, stacks: dict[str, dict[str, float]]) -> None:
    """Record each stacked axis's stated total per bar (x label -> total)."""
    fig.update_layout(meta={"stacks": stacks})


def wall_figure(t: dict[str, str], data: dict[str, Any]) -> go.Figure:
    """Tokens/s against GPUs (log-log) per option with its prediction band behind it (the
    option's colour, `BAND_ALPHA` opacity); linear scaling from the sweep's best per-GPU rate
    dotted in the option's colour; the chosen size starred; knees marked."""
    fig = go.Figure()
    for i, o in _drawing_order(data):
        colour = option_colour(i)
        rows = o["sweep"]["rows"]
        gpus = [r["gpus"] for r in rows]
        line = {"color": colour, "width": _line_width(data, o)}
        band = _band_trace(t, i, o)
        if band is not None:
            fig.add_trace(band)
        fig.add_trace(
            go.Scatter(
                x=gpus,
                y=[r["tokens_per_s"] for r in rows],
                mode="lines+markers",
                name=o["name"],
                legendgroup=o["name"],
                line=line,
                marker={"color": colour},
            )
        )
        best = o["sweep"]["knee_vs_best"]["best_tokens_per_s_per_gpu"]
        fig.add_trace(
            go.Scatter(
                x=gpus,
                y=[best * g for g in gpus],
                mode="lines",
                line={"dash": "dot", "color": colour},
                name=t["fig.ideal"].format(name=o["name"]),
                legendgroup=o["name"],
            )
        )
        chosen = next(r for r in rows if r["gpus"] == o["gpus"])
        fig.add_trace(
            go.Scatter(
                x=[o["gpus"]],
                y=[chosen["tokens_per_s"]],
                mode="markers",
                marker={"size": 14, "symbol": "star", "color": colour},
                name=t["fig.option_point"].format(name=o["name"]),
                legendgroup=o["name"],
            )
        )
        knee = o["sweep"]["knee_vs_best"]["knee"]
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
                    marker={"size": 16, "symbol": "x-thin-open", "color": colour},
                    name=f"{o['name']}: {label}",
                    legendgroup=o["name"],
                )
            )
    fig.update_xaxes(type="log", title_text=t["fig.gpus"], tickformat=SI_TICKS)
    fig.update_yaxes(type="log", title_text=t["fig.tokens_per_s"], tickformat=SI_TICKS)
    fig.update_layout(title=t["fig.wall"], template=TEMPLATE, height=520)
    return fig


def efficiency_figure(t: dict[str, str], data: dict[str, Any]) -> go.Figure:
    """MFU, goodput and owned cost per million tokens against GPUs, per option."""
    titles = (t["fig.mfu"], t["fig.goodput"], t["fig.usd_per_mtok"])
    fig = make_subplots(rows=1, cols=3, subplot_titles=titles, horizontal_spacing=0.08)
    keys = ("mfu", "goodput_frac", "usd_per_million_tokens")
    for i, o in _drawing_order(data):
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
                    line={"color": option_colour(i), "width": _line_width(data, o)},
                    marker={"color": option_colour(i)},
                ),
                row=1,
                col=col,
            )
    fig.update_xaxes(type="log", title_text=t["fig.gpus"], tickformat=SI_TICKS)
    fig.update_yaxes(tickformat=".0%", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(tickformat=".0%", rangemode="tozero", row=1, col=2)
    fig.update_yaxes(tickformat="$.2f", rangemode="tozero", row=1, col=3)
    fig.update_layout(template=TEMPLATE, height=420)
    return fig


def wall_time_shares(row: dict[str, Any]) -> dict[str, float]:
    """One size's wall-clock time split so the parts add up to one: useful work (MFU) and each
    step loss times goodput, and the goodput loss (1 - goodput) on top."""
    g = row["goodput_frac"]
    shares = {"mfu": row["mfu"] * g}
    for part in LOSS_PARTS:
        if part != "goodput":
            shares[part] = _clean([row["loss_fracs"].get(part, 0.0)])[0] * g
    shares["goodput"] = 1.0 - g
    return shares


def losses_figure(t: dict[str, str], data: dict[str, Any]) -> go.Figure:
    """The largest option's wall-clock time split into useful work and named losses, stacked
    per size; each bar adds up to 100%."""
    option = max(data["options"], key=lambda o: o["gpus"])
    rows = option["sweep"]["rows"]
    labels = [f"{r['gpus']:,}" for r in rows]
    shares = [wall_time_shares(r) for r in rows]
    fig = go.Figure()
    parts = [p for p in shares[0] if any(s[p] > 0 for s in shares)]
    for i, part in enumerate(parts):
        fig.add_trace(
            go.Bar(
                x=labels,
                y=[s[part] for s in shares],
                name=t.get(f"loss.{part}", part),
                marker={"color": part_colour(i)},
            )
        )
    _stacks(fig, {"y": {label: 1.0 for label in labels}})
    fig.update_layout(barmode="stack", template=TEMPLATE, height=480)
    fig.update_xaxes(title_text=t["fig.gpus"], type="category")
    fig.update_yaxes(title_text=t["fig.fraction"], tickformat=".0%", range=[0, 1])
    return fig


def memory_figure(t: dict[str, str], data: dict[str, Any]) -> go.Figure:
    """Each option's best plan: memory per GPU by part (GiB), with the HBM size."""
    names = [o["name"] for o in data["options"]]
    parts = list(dict.fromkeys(p for o in data["options"] for p in o["best"]["memory_bytes"]))
    fig = go.Figure()
    for i, part in enumerate(parts):
        values = [o["best"]["memory_bytes"].get(part, 0.0) / GIB for o in data["options"]]
        fig.add_trace(
            go.Bar(
                x=names, y=values, name=t.get(f"mem.{part}", part), marker={"color": part_colour(i)}
            )
        )
    hbm = [o["best"]["hbm_bytes"] / GIB for o in data["options"]]
    fig.add_trace(
        go.Scatter(
            x=names,
            y=hbm,
            mode="markers",
            name=t["fig.hbm"],
            marker={"symbol": "line-ew-open", "size": 40, "color": "#000000"},
        )
    )
    totals = {o["name"]: sum(o["best"]["memory_bytes"].values()) / GIB for o in data["options"]}
    _stacks(fig, {"y": totals})
    fig.update_layout(barmode="stack", template=TEMPLATE, height=420)
    fig.update_yaxes(title_text=t["fig.memory"], tickformat=",.0f")
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
    for i, cause in enumerate(causes):
        values = [r["interruptions_per_day_by_cause"][cause] for r in rel]
        fig.add_trace(
            go.Bar(x=names, y=values, name=cause, marker={"color": part_colour(i)}), row=1, col=1
        )
    for j, kind in enumerate(rel[0]["loss_fracs"]):
        values = [r["loss_fracs"][kind] for r in rel]
        fig.add_trace(
            go.Bar(
                x=names,
                y=values,
                name=t.get(f"gp.{kind}", kind),
                marker={"color": part_colour(len(causes) + j)},
            ),
            row=1,
            col=2,
        )
    per_day = {n: sum(r["interruptions_per_day_by_cause"][c] for c in causes) for n, r in
               zip(names, rel, strict=True)}  # fmt: skip
    lost = {n: 1.0 - r["goodput_frac"] for n, r in zip(names, rel, strict=True)}
    _stacks(fig, {"y": per_day, "y2": lost})
    fig.update_yaxes(tickformat=",.2f", row=1, col=1)
    fig.update_yaxes(tickformat=".1%", row=1, col=2)
    fig.update_layout(barmode="stack", template=TEMPLATE, height=460)
    return fig


def bom_figure(t: dict[str, str], data: dict[str, Any]) -> go.Figure:
    """Switches per network tier, and capex by category (M$), per option."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=(t["fig.switches"], t["fig.capex_musd"]))
    names = [o["name"] for o in data["options"]]
    tiers = list(dict.fromkeys(tr["name"] for o in data["options"] for tr in o["bom"]["tiers"]))
    for i, tier in enumerate(tiers):
        values = [
            sum(tr["switches"] for tr in o["bom"]["tiers"] if tr["name"] == tier)
            for o in data["options"]
        ]
        fig.add_trace(
            go.Bar(x=names, y=values, name=tier, marker={"color": part_colour(i)}), row=1, col=1
        )
    categories = list(data["options"][0]["cost"]["capex_by_category_usd"])
    for j, category in enumerate(categories):
        values = [o["cost"]["capex_by_category_usd"][category] / 1e6 for o in data["options"]]
        fig.add_trace(
            go.Bar(
                x=names,
                y=values,
                name=t.get(f"cap.{category}", category),
                marker={"color": part_colour(len(tiers) + j)},
            ),
            row=1,
            col=2,
        )
    switches = {o["name"]: float(o["bom"]["switches"]) for o in data["options"]}
    capex = {o["name"]: o["cost"]["capex_usd"] / 1e6 for o in data["options"]}
    _stacks(fig, {"y": switches, "y2": capex})
    fig.update_yaxes(tickformat=",.0f")
    fig.update_layout(barmode="stack", template=TEMPLATE, height=440)
    return fig


def growth_figure(t: dict[str, str], data: dict[str, Any]) -> go.Figure:
    """Capex per growth stage (bars) and days to train the token budget (line)."""
    stages = data["growth"]
    labels = [f"{s['gpus']:,}" for s in stages]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(
        go.Bar(
            x=labels,
            y=[s["capex_usd"] / 1e6 for s in stages],
            name=t["fig.capex_by_stage"],
            marker={"color": part_colour(0)},
        ),
        secondary_y=False,
    )
    fig.add_trace(
        go.Scatter(
            x=labels,
            y=[s["calendar_s"] / 86400 for s in stages],
            mode="lines+markers",
            name=t["fig.days"],
            line={"color": part_colour(3)},
            marker={"color": part_colour(3)},
        ),
        secondary_y=True,
    )
    fig.update_xaxes(title_text=t["fig.gpus"], type="category")
    fig.update_yaxes(title_text=t["fig.capex_musd"], tickformat=",.0f", secondary_y=False)
    fig.update_yaxes(
        title_text=t["fig.days"], type="log", tickformat=",.3~g", secondary_y=True, dtick=1
    )
    fig.update_layout(template=TEMPLATE, height=420)
    return fig


def breakeven_figure(t: dict[str, str], data: dict[str, Any]) -> go.Figure:
    """Total cost to train (compute + time) against model size per option, log-log; a run past
    the target drawn open; the crossover of the largest option marked."""
    fig = go.Figure()
    be = data["decision"]["breakeven"]
    index = {o["name"]: i for i, o in enumerate(data["options"])}
    if be is not None:
        for key, name in (("small", be["small"]), ("big", be["big"])):
            colour = option_colour(index[name])
            points = [p for p in be["models"] if math.isfinite(p[key]["total_usd"])]
            fig.add_trace(
                go.Scatter(
                    x=[p["params"] for p in points],
                    y=[p[key]["total_usd"] for p in points],
                    mode="lines+markers",
                    name=name,
                    legendgroup=name,
                    text=[p["id"] for p in points],
                    line={"color": colour},
                    marker={
                        "color": colour,
                        "size": 10,
                        "symbol": [
                            "circle" if p[key]["feasible"] else "circle-open" for p in points
                        ],
                    },
                )
            )
        cross = be["model"]
        totals = [
            p[k]["total_usd"]
            for p in be["models"]
            for k in ("small", "big")
            if math.isfinite(p[k]["total_usd"])
        ]
        if cross["kind"] == "cross" and totals:
            # a vertical segment as a trace: data coordinates on the log axes, and a legend entry
            fig.add_trace(
                go.Scatter(
                    x=[cross["params"], cross["params"]],
                    y=[min(totals), max(totals)],
                    mode="lines",
                    line={"dash": "dash", "color": "#555555"},
                    name=t["fig.breakeven_at"].format(params=count_text(cross["params"])),
                )
            )
    fig.update_xaxes(type="log", title_text=t["fig.params"], tickformat=SI_TICKS)
    fig.update_yaxes(type="log", title_text=t["fig.total_usd"], tickformat="$~s")
    fig.update_layout(title=t["fig.breakeven"], template=TEMPLATE, height=480)
    return fig


FIGURES = {
    "breakeven": breakeven_figure,
    "wall": wall_figure,
    "efficiency": efficiency_figure,
    "losses": losses_figure,
    "memory": memory_figure,
    "failures": failures_figure,
    "bom": bom_figure,
    "growth": growth_figure,
}
"""Figure id -> builder; the HTML page has one ``<div id="fig-<id>">`` per entry."""
