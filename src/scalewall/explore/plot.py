"""The exploration's frontier: tokens per USD against days to train (plotly, one HTML file with
plotly.js inlined, so it opens offline)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from scalewall.explore.run import pareto_frontier
from scalewall.units import DAY_S


def frontier_figure(frame: pd.DataFrame) -> go.Figure:
    """Every point with a plan and a price, one colour per (model, accelerator), and the Pareto
    frontier (no point trains faster for more tokens per USD) as a line."""
    rows = frame[frame["found"].astype(bool) & frame["tokens_per_usd"].notna()]
    fig = go.Figure()
    for (model, accelerator), group in rows.groupby(["model", "accelerator"], sort=True):
        fig.add_trace(
            go.Scatter(
                x=group["time_to_train_s"] / DAY_S,
                y=group["tokens_per_usd"],
                mode="markers",
                name=f"{model} on {accelerator}",
                text=[
                    f"{g} GPUs, {f}, {b}"
                    for g, f, b in zip(
                        group["gpus"], group["fabric"], group["batch_rule"], strict=True
                    )
                ],
                hovertemplate="%{text}<br>%{x:.1f} days, %{y:.3g} tokens/USD<extra></extra>",
            )
        )
    front = pareto_frontier(frame)
    fig.add_trace(
        go.Scatter(
            x=front["time_to_train_s"] / DAY_S,
            y=front["tokens_per_usd"],
            mode="lines",
            line={"color": "black", "shape": "hv"},
            name="frontier",
        )
    )
    fig.update_layout(
        title="Exploration frontier: cost efficiency against time to train",
        xaxis={"title": "days to train (token budget)", "type": "log"},
        yaxis={"title": "tokens per USD (tokens/s per USD/s of owned cost)"},
        template="plotly_white",
    )
    return fig


def write_frontier_html(frame: pd.DataFrame, path: Path) -> None:
    frontier_figure(frame).write_html(str(path), include_plotlyjs=True, full_html=True)
