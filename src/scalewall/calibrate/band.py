"""The calibrated band of a scale-wall sweep: a prediction interval at every size, and the size
from which the band is too wide to trust."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from scalewall.calibrate.interval import DEFAULT_DRAWS, DEFAULT_LEVEL, step_interval
from scalewall.calibrate.profile import Calibration
from scalewall.catalog.schema import ModelSpec
from scalewall.perf.assumptions import Stack
from scalewall.plan.plan import ParallelPlan
from scalewall.sweep.wall import ClusterDesign, WallResult

DEFAULT_MAX_RELATIVE_WIDTH = 0.25
"""A band wider than 25% of the prediction (high minus low over the prediction) is too wide to
plan a purchase on: the size where it first happens is reported."""


@dataclass(frozen=True, kw_only=True)
class WallBand:
    rows: tuple[dict[str, Any], ...]
    """Per size with a plan: gpus, tokens_per_s_interval, mfu_interval, relative_width."""
    level: float
    max_relative_width: float
    too_wide_from_gpus: int | None
    """Smallest size whose band is wider than ``max_relative_width`` (None: none)."""
    basis: str = "calibrated"
    """``calibrated`` (the profile's parameter uncertainty) or ``validation`` (out-of-sample
    errors of the closest validation group: no calibration given)."""
    extrapolated_from_gpus: int | None = None
    """With the ``validation`` basis: the smallest size larger than every run of its
    validation group, from where the band is an extrapolation (None: none)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "basis": self.basis,
            "level": self.level,
            "max_relative_width": self.max_relative_width,
            "too_wide_from_gpus": self.too_wide_from_gpus,
            "extrapolated_from_gpus": self.extrapolated_from_gpus,
            "rows": list(self.rows),
        }


def wall_band(
    result: WallResult,
    cal: Calibration,
    model: ModelSpec,
    design: ClusterDesign,
    stack: Stack,
    *,
    max_relative_width: float = DEFAULT_MAX_RELATIVE_WIDTH,
    level: float = DEFAULT_LEVEL,
    draws: int = DEFAULT_DRAWS,
) -> WallBand:
    """The prediction interval of each size's best plan (one vectorised call per size)."""
    rows: list[dict[str, Any]] = []
    for row in result.rows:
        if not row["found"]:
            continue
        plan = ParallelPlan(**row["plan"])
        cluster = cal.apply_cluster(design.at(int(row["gpus"])))
        band = step_interval(model, cluster, plan, cal, stack=stack, level=level, draws=draws)
        low, high = band.tokens_per_s_interval
        scale = float(row["mfu"]) / float(row["tokens_per_s"])
        rows.append(
            {
                "gpus": int(row["gpus"]),
                "tokens_per_s_interval": [low, high],
                "mfu_interval": [low * scale, high * scale],
                "relative_width": band.relative_width,
            }
        )
    too_wide = next((r["gpus"] for r in rows if r["relative_width"] > max_relative_width), None)
    return WallBand(
        rows=tuple(rows),
        level=level,
        max_relative_width=max_relative_width,
        too_wide_from_gpus=too_wide,
    )


def validation_wall_band(
    result: WallResult,
    model: ModelSpec,
    design: ClusterDesign,
    stack: Stack,
    *,
    max_relative_width: float = DEFAULT_MAX_RELATIVE_WIDTH,
) -> WallBand:
    """The band without calibration: at each size, the best plan's step time divided by the
    out-of-sample error quantiles of the validation group closest to it (stack, accelerator
    generation, MoE or dense, scale; :mod:`scalewall.validation.error_bars`), and the first
    size beyond the largest run of that group."""
    from scalewall.validation.error_bars import (
        LEVEL,
        read_groups,
        validation_interval,
    )

    groups = read_groups()
    rows: list[dict[str, Any]] = []
    extrapolated: int | None = None
    moe = model.routed_experts > 0
    for row in result.rows:
        if not row["found"]:
            continue
        gpus = int(row["gpus"])
        step_s = float(row["step_time_s"])
        where = {
            "stack": stack.id,
            "accelerator": design.accelerator.id,
            "moe": moe,
            "gpus": gpus,
        }
        band = validation_interval(step_s, groups=groups, **where)  # type: ignore[arg-type]
        low_s, high_s = band.step_time_interval_s
        tokens = float(row["tokens_per_s"])
        low, high = tokens * step_s / high_s, tokens * step_s / low_s
        scale = float(row["mfu"]) / tokens
        group = groups[band.group]  # the group the interval was drawn from
        if extrapolated is None and gpus > group.gpus_max:
            extrapolated = gpus
        rows.append(
            {
                "gpus": gpus,
                "tokens_per_s_interval": [low, high],
                "mfu_interval": [low * scale, high * scale],
                "relative_width": (high - low) / tokens,
                "group": band.group,
            }
        )
    too_wide = next((r["gpus"] for r in rows if r["relative_width"] > max_relative_width), None)
    return WallBand(
        rows=tuple(rows),
        level=LEVEL,
        max_relative_width=max_relative_width,
        too_wide_from_gpus=too_wide,
        basis="validation",
        extrapolated_from_gpus=extrapolated,
    )


def band_figure(result: WallResult, band: WallBand) -> go.Figure:
    """The scale-wall figure with the MFU band drawn behind the MFU curve."""
    from scalewall.sweep.plot import wall_figure

    fig = wall_figure(result)
    labels = [str(r["gpus"]) for r in band.rows]
    fig.add_trace(
        go.Scatter(
            x=labels + labels[::-1],
            y=[r["mfu_interval"][1] for r in band.rows]
            + [r["mfu_interval"][0] for r in band.rows][::-1],
            fill="toself",
            fillcolor="rgba(99,110,250,0.2)",
            line={"width": 0},
            name=f"MFU {band.level:.0%} band ({band.basis})",
            hoverinfo="skip",
        ),
        row=1,
        col=1,
    )
    if band.too_wide_from_gpus is not None:
        fig.add_annotation(
            x=str(band.too_wide_from_gpus),
            y=1.0,
            yref="y domain",
            text=f"band > {band.max_relative_width:.0%} wide from here",
            showarrow=True,
            row=1,
            col=1,
        )
    if band.extrapolated_from_gpus is not None:
        fig.add_annotation(
            x=str(band.extrapolated_from_gpus),
            y=0.0,
            yref="y domain",
            text="larger than every validation run of this kind from here",
            showarrow=True,
            row=1,
            col=1,
        )
    return fig


def write_band_html(result: WallResult, band: WallBand, path: str) -> None:
    band_figure(result, band).write_html(path, include_plotlyjs=True, full_html=True)
