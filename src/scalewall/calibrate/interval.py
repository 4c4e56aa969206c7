"""Prediction intervals: the fitted covariance and the residual model error pushed through the
vectorised step model.

Parameter draws ``theta_d ~ N(theta_hat, Sigma)`` (clipped to the bounds) become one Efficiency
whose fields are arrays; the plan is replicated ``draws`` times (``PlanBatch.take``) so one
step-model call evaluates every draw. Each draw's log step time then gets a model-error term:
resampled from the fitted step-time log errors when there are at least ``BOOTSTRAP_MIN`` of them
(heavy tails kept, Efron's residual bootstrap), else normal with the fitted scatter, else normal
with ``DEFAULT_STEP_LOG_SD`` when no step time was fitted. The interval is the central ``level``
quantile range.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from scalewall.calibrate.parameters import CLOCK, apply
from scalewall.calibrate.profile import Calibration, bounds
from scalewall.catalog.schema import ModelSpec
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.perf.batch import PlanBatch
from scalewall.perf.step import step_model
from scalewall.plan.plan import ParallelPlan
from scalewall.plan.topology import Cluster

FloatArray = NDArray[np.float64]

DEFAULT_DRAWS = 200
DEFAULT_LEVEL = 0.9
BOOTSTRAP_MIN = 20
"""Fitted step times needed before their empirical errors replace a normal model error."""
DEFAULT_STEP_LOG_SD = 0.08
"""Model error of a step time when the calibration fitted none (microbenchmarks only): the
scatter of the uncalibrated model on the published runs (``scalewall validate``), ~8%."""
ERRORS_PER_DRAW = 10


@dataclass(frozen=True, kw_only=True)
class Interval:
    """A central prediction interval of the step time and the throughput."""

    step_time_s: float
    """Prediction with the fitted values."""
    step_time_interval_s: tuple[float, float]
    tokens_per_s: float
    tokens_per_s_interval: tuple[float, float]
    level: float

    @property
    def relative_width(self) -> float:
        """(high - low) / prediction of the step time."""
        low, high = self.step_time_interval_s
        return (high - low) / self.step_time_s


def parameter_draws(
    cal: Calibration, draws: int, rng: np.random.Generator
) -> dict[str, FloatArray]:
    """``draws`` samples of the fitted parameters and the candidates kept at defaults (the
    posterior spread), clipped to their bounds."""
    names = cal.spread_names or cal.names
    if not names:
        return {}
    if cal.spread_names:
        mean = np.array([cal.spread_center[n] for n in names])
        cov = 0.5 * (cal.spread_covariance + cal.spread_covariance.T)
    else:
        mean = np.array([cal.values[n] for n in names])
        cov = 0.5 * (cal.covariance + cal.covariance.T)
    sample = rng.multivariate_normal(mean, cov, size=draws, method="eigh")
    lower, upper = bounds(names)
    sample = np.clip(sample, lower, upper)
    return {n: sample[:, j] for j, n in enumerate(names)}


def model_errors(cal: Calibration, size: int, rng: np.random.Generator) -> FloatArray:
    """Log model errors to add to each draw (see the module docstring)."""
    steps = np.asarray(cal.step_residuals_log, dtype=np.float64)
    if len(steps) >= BOOTSTRAP_MIN:
        # Centre them (the fit absorbs the mean) and widen by sqrt(n / (n - p)) for the
        # degrees of freedom the fit used.
        inflate = np.sqrt(len(steps) / max(len(steps) - len(cal.values), 1))
        result: FloatArray = rng.choice((steps - steps.mean()) * inflate, size=size)
        return result
    sd = cal.residual_log_sd.get("step", DEFAULT_STEP_LOG_SD if not len(steps) else 0.0)
    return rng.normal(0.0, sd, size=size)


def _step_times(
    model: ModelSpec,
    cluster: Cluster,
    plan: ParallelPlan,
    stack: Stack,
    base: Efficiency,
    values: dict[str, FloatArray],
    draws: int,
) -> FloatArray:
    batch = PlanBatch.from_plans(model, [plan])
    if not values:
        single = step_model(model, cluster, batch, base, stack).step_time_s
        return np.repeat(single, draws)
    eff, clus = apply(values, base, cluster)
    assert clus is not None
    times: FloatArray = step_model(
        model, clus, batch.take(np.zeros(draws, dtype=np.intp)), eff, stack
    ).step_time_s
    return times


def step_interval(
    model: ModelSpec,
    cluster: Cluster,
    plan: ParallelPlan,
    cal: Calibration,
    *,
    stack: Stack | None = None,
    base: Efficiency | None = None,
    level: float = DEFAULT_LEVEL,
    draws: int = DEFAULT_DRAWS,
    seed: int = 0,
) -> Interval:
    """The calibrated prediction of one plan's step with its ``level`` prediction interval.

    ``cluster`` is taken as given (apply the calibration's clock first with
    ``cal.apply_cluster``); ``base`` is the uncalibrated Efficiency the fit started from.
    """
    stack, base = stack or Stack(), base or Efficiency()
    rng = np.random.default_rng(seed)
    center_eff, center_cluster = apply(cal.values, base, cluster)
    assert center_cluster is not None
    batch = PlanBatch.from_plans(model, [plan])
    center = step_model(model, center_cluster, batch, center_eff, stack)
    step = float(center.step_time_s[0])
    tokens = float(center.tokens_per_s[0])
    values = {k: v for k, v in parameter_draws(cal, draws, rng).items()}
    if CLOCK in values and cluster.accelerator.id != cal.accelerator:
        values.pop(CLOCK)
    times = _step_times(model, cluster, plan, stack, base, values, draws)
    logs = np.repeat(np.log(times), ERRORS_PER_DRAW) + model_errors(
        cal, draws * ERRORS_PER_DRAW, rng
    )
    tail = (1.0 - level) / 2.0
    low, high = (float(np.exp(q)) for q in np.quantile(logs, [tail, 1.0 - tail]))
    return Interval(
        step_time_s=step,
        step_time_interval_s=(low, high),
        tokens_per_s=tokens,
        tokens_per_s_interval=(tokens * step / high, tokens * step / low),
        level=level,
    )


def coverage(intervals: Sequence[tuple[float, float]], values: Sequence[float]) -> float:
    """Fraction of ``values`` inside their intervals."""
    inside = [lo <= v <= hi for (lo, hi), v in zip(intervals, values, strict=True)]
    return float(np.mean(inside)) if inside else float("nan")
