""" "What it would take" tables: goodput against failure-rate reduction, checkpoint bandwidth and
spare nodes, and the change needed to reach a target goodput."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import pandas as pd
from scipy.optimize import brentq

from scalewall.errors import SpecError
from scalewall.reliability.api import GoodputInputs, goodput, goodput_model, required_spares
from scalewall.reliability.interval import optimal_interval_s

RATE_SCALES: tuple[float, ...] = (1.0, 0.5, 0.25, 0.1)
BANDWIDTH_SCALES: tuple[float, ...] = (0.1, 1.0, 10.0, 100.0)
SPARE_NODES: tuple[int, ...] = (0, 1, 2, 4, 8, 16, 32)
RESTART_SCALES: tuple[float, ...] = (1.0, 0.5, 0.25, 0.1)

SEARCH_SPAN = 1e6
"""The solver looks for a required scale in [1 / SEARCH_SPAN, SEARCH_SPAN]."""


def _row(inputs: GoodputInputs) -> dict[str, float]:
    result = goodput(inputs)
    return {
        "mttf_s": result.mttf_s,
        "checkpoint_write_s": result.checkpoint.write_s,
        "restart_s": result.restart_s,
        "interval_s": result.interval_s,
        "goodput_frac": result.goodput_frac,
    }


def failure_rate_table(
    inputs: GoodputInputs, scales: Sequence[float] = RATE_SCALES
) -> pd.DataFrame:
    """Goodput when every unexpected failure rate is multiplied by each of ``scales``."""
    rows = [{"rate_scale": s, **_row(dataclasses.replace(inputs, rate_scale=s))} for s in scales]
    return pd.DataFrame(rows)


def bandwidth_table(
    inputs: GoodputInputs, scales: Sequence[float] = BANDWIDTH_SCALES
) -> pd.DataFrame:
    """Goodput when every storage rate is multiplied by each of ``scales``."""
    rows = [
        {"bandwidth_scale": s, **_row(dataclasses.replace(inputs, bandwidth_scale=s))}
        for s in scales
    ]
    return pd.DataFrame(rows)


def restart_table(inputs: GoodputInputs, scales: Sequence[float] = RESTART_SCALES) -> pd.DataFrame:
    """Goodput when every restart phase (detection to warm-up) is multiplied by each of
    ``scales`` (faster detection, warm spares, cached images, in-memory restore)."""
    rows = [
        {"restart_scale": s, **_row(dataclasses.replace(inputs, restart=inputs.restart.scaled(s)))}
        for s in scales
    ]
    return pd.DataFrame(rows)


def spares_table(inputs: GoodputInputs, spares: Sequence[int] = SPARE_NODES) -> pd.DataFrame:
    """Goodput with each number of hot-spare nodes, the count the repair queue requires
    (`required_spares`) among them, and a spare always at hand as the last row."""
    need = required_spares(inputs)
    counts = sorted({*spares, need}) if need >= 0 else list(spares)
    rows: list[dict[str, float | int | None]] = [
        {"spare_nodes": n, **_row(dataclasses.replace(inputs, spare_nodes=n))} for n in counts
    ]
    rows.append({"spare_nodes": None, **_row(dataclasses.replace(inputs, spare_nodes=None))})
    return pd.DataFrame(rows)


def _best_goodput(inputs: GoodputInputs) -> float:
    model, cost, _, _ = goodput_model(inputs)
    if inputs.interval_s is not None:
        return model.goodput_frac(inputs.interval_s)
    lower = min(max(inputs.step_s or 1.0, cost.persist_s), inputs.run_s)
    tau = optimal_interval_s(model.goodput_frac, lower_s=lower, upper_s=inputs.run_s)
    return model.goodput_frac(tau)


def required_scale(inputs: GoodputInputs, target_goodput_frac: float, *, knob: str) -> float:
    """The ``rate_scale`` or ``bandwidth_scale`` at which goodput reaches the target.

    Returns the current value when the target is already met and NaN when no value in the search
    span reaches it (restart overhead or planned maintenance alone may cap goodput).
    """
    if knob not in ("rate_scale", "bandwidth_scale"):
        raise SpecError("knob", knob, "valid: rate_scale, bandwidth_scale")
    if not 0 < target_goodput_frac < 1:
        raise SpecError("target_goodput_frac", target_goodput_frac, "must be in (0, 1)")

    def gap(log_scale: float) -> float:
        scaled = dataclasses.replace(inputs, **{knob: 10.0**log_scale})
        return _best_goodput(scaled) - target_goodput_frac

    now = float(getattr(inputs, knob))
    if gap(math.log10(now)) >= 0:
        return now
    # Goodput rises as rates fall and as bandwidth grows: search the improving side only.
    span = math.log10(SEARCH_SPAN)
    lo, hi = (
        (math.log10(now) - span, math.log10(now))
        if knob == "rate_scale"
        else (math.log10(now), math.log10(now) + span)
    )
    if gap(lo) * gap(hi) > 0:
        return float("nan")
    return float(10.0 ** brentq(gap, lo, hi, xtol=1e-4))
