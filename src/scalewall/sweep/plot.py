"""The scale-wall figure: throughput and efficiency against size with the knee marked, and the
stacked loss attribution per size (plotly, one self-contained HTML file)."""

from __future__ import annotations

from pathlib import Path

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from scalewall.sweep.wall import LOSS_PARTS, WallResult


def wall_figure(result: WallResult) -> go.Figure:
    """Top: tokens/s per GPU relative to the smallest size and MFU; bottom: the step split into
    MFU and the named losses (fractions that add up to one)."""
    rows = [r for r in result.rows if r["found"]]
    gpus = [r["gpus"] for r in rows]
    labels = [str(g) for g in gpus]
    fig = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=False,
        vertical_spacing=0.12,
        subplot_titles=(
            f"{result.model} on {result.cluster}: scaling",
            "Where each step goes (fraction of step time)",
        ),
    )
    fig.add_trace(
        go.Scatter(
            x=labels,
            y=[r["scaling_efficiency_frac"] for r in rows],
            mode="lines+markers",
            name="scaling efficiency",
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Scatter(x=labels, y=[r["mfu"] for r in rows], mode="lines+markers", name="MFU"),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Scatter(
            x=labels,
            y=[r["marginal_efficiency_frac"] for r in rows],
            mode="lines+markers",
            name="marginal efficiency",
            line={"dash": "dot"},
        ),
        row=1,
        col=1,
    )
    if result.knee is not None:
        knee = result.knee
        fig.add_trace(
            go.Scatter(
                x=[str(knee.gpus)],
                y=[knee.marginal_efficiency_frac],
                mode="markers+text",
                marker={"size": 16, "symbol": "x", "color": "red"},
                text=[f"knee: {knee.cause}"],
                textposition="top center",
                name=f"knee ({knee.gpus} GPUs)",
            ),
            row=1,
            col=1,
        )
    fig.add_trace(go.Bar(x=labels, y=[r["mfu"] for r in rows], name="useful (MFU)"), row=2, col=1)
    for part in LOSS_PARTS:
        values = [float(r["loss_fracs"].get(part, 0.0)) for r in rows]
        values = [0.0 if v != v else v for v in values]  # NaN: goodput not computed
        if any(v > 0 for v in values):
            fig.add_trace(go.Bar(x=labels, y=values, name=part), row=2, col=1)
    fig.update_layout(barmode="stack", height=900, template="plotly_white")
    fig.update_xaxes(title_text="GPUs", type="category")
    fig.update_yaxes(title_text="fraction", row=1, col=1)
    fig.update_yaxes(title_text="fraction of step", row=2, col=1)
    return fig


def write_wall_html(result: WallResult, path: Path) -> None:
    """Write the figure as one HTML file that works offline."""
    wall_figure(result).write_html(str(path), include_plotlyjs=True, full_html=True)
