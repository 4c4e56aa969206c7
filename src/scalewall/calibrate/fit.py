"""Maximum a posteriori fit on log errors, with the parameter subset chosen by validation.

Residual of observation i: ``r_i = (log predicted_i - log measured_i) / sd_k`` where ``sd_k`` is
the robust scatter of its kind (GEMM, collective, step ...), so a hundred microbenchmark points
do not drown ten step times. Each fitted parameter also has a prior row
``(theta_j - default_j) / (PRIOR_WIDTH x scale_j)``: the shipped default is the prior mean and the
parameter's documented typical magnitude (``Parameter.scale``) its prior width, so a parameter
moves from its default only as far as the data pay for. ``scipy.optimize.least_squares``
(trust-region reflective, bounded) minimises the sum of squares of both kinds of row; the data
rows carry Huber weights, recomputed ``IRLS_ROUNDS`` times, so runs the model cannot express do
not drag every parameter.

Which candidates are fitted is decided on the training observations only. Candidates are
ordered by forward selection on the problem linearised at the defaults; each prefix of that
order is fitted on part of the data and scored on the rest (``folds``), and the shortest prefix
whose validation error is within one standard error of the best is fitted (the one-standard-
error rule, Hastie, Tibshirani and Friedman, Elements of Statistical Learning, 7.10). Where the
step times span several cluster sizes the folds are rolling-origin: fit on the runs below a size
(and every microbenchmark), score the runs at that size, so a parameter is kept only where it
helps predict a larger cluster, the use calibration exists for. Otherwise the folds are K-fold.

Uncertainty: with J the Jacobian of the weighted data residuals at the optimum and ``s^2`` their
mean square, the covariance is the Gauss-Newton posterior ``(J^T J / s^2 + P)^-1``, P the
diagonal prior precision.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import optimize

from scalewall import catalog
from scalewall.calibrate.observations import Collected, Observations
from scalewall.calibrate.parameters import (
    BY_KIND,
    CLOCK,
    check_names,
    default_value,
    parameter,
)
from scalewall.errors import ScalewallError
from scalewall.perf.assumptions import Efficiency

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

NO_EFFECT_LOG = 1e-4
"""A parameter whose typical change moves no prediction by more than 0.01% has no effect."""
PRIOR_WIDTH = 1.0
"""Prior standard deviation of a parameter about its default, in units of its typical magnitude
``Parameter.scale``."""
CV_FOLDS = 5
"""Folds of the K-fold validation, used when the step times do not span several cluster sizes."""
IRLS_ROUNDS = 3
"""Huber reweighting rounds of a fit (iteratively reweighted least squares)."""
SD_FLOOR_LOG = 1e-4
"""Smallest scatter per kind (log units) used as a weight: noise-free data stays well-posed."""
HUBER_K = 1.5
"""Huber loss threshold in robust standard deviations: errors beyond it count linearly, so a few
runs the model cannot express (outliers) do not drag every parameter."""
FIT_TOL = 1e-8
"""Relative tolerance on the parameters and the cost at which a least-squares solve stops."""
VALIDATION_TOL = 1e-4
"""Relative tolerance of the solves that score a parameter subset on a validation fold: the
score is compared between subsets at the level of its standard error (percent), so a
looser stop than ``FIT_TOL`` costs no precision that matters and saves about half the solver's
evaluations."""
S2_FLOOR = 1e-12
"""Smallest mean square of the weighted residuals used in the covariance."""
NONFINITE_LOG_ERROR = 50.0
"""Log error given to a row whose prediction is not finite (e^50: no fit keeps it)."""


@dataclass(frozen=True, kw_only=True)
class Residual:
    label: str
    kind: str
    source: str
    measured: float
    default: float
    """The uncalibrated model's prediction."""
    fitted: float
    gpus: int = 0

    @property
    def default_log_error(self) -> float:
        return float(np.log(self.default / self.measured))

    @property
    def fitted_log_error(self) -> float:
        return float(np.log(self.fitted / self.measured))


@dataclass(frozen=True, kw_only=True)
class FitResult:
    """Fitted values of the identifiable parameters, their covariance, and what was left out."""

    names: tuple[str, ...]
    values: dict[str, float]
    standard_errors: dict[str, float]
    covariance: FloatArray
    defaults: dict[str, float]
    """Start values and prior means of every candidate parameter."""
    not_identifiable: dict[str, str]
    """Candidate kept at its default -> why."""
    residual_log_sd: dict[str, float]
    """Scatter of the log errors per kind after the fit (degrees of freedom corrected)."""
    residuals: tuple[Residual, ...]
    accelerator: str = ""
    """Accelerator whose clock was a candidate (empty when none)."""
    spread_names: tuple[str, ...] = ()
    """Every candidate, fitted or kept at its default: the rows of ``spread_covariance``."""
    spread_covariance: FloatArray = field(default_factory=lambda: np.zeros((0, 0)))
    """Posterior covariance of all candidates with a normal prior N(default,
    (PRIOR_WIDTH x scale)^2) on each:
    fitted parameters get (nearly) their least-squares covariance, those the data could not
    pin keep about their prior spread, correlations included. Prediction intervals sample it."""
    validation: tuple[tuple[int, float, float], ...] = ()
    """Per number of fitted parameters (in selection order): the validation error (mean
    absolute log error in units of the kind's scatter) and its standard error."""
    validation_folds: str = ""
    """How the validation folds were formed."""
    converged: bool = True
    message: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def observations(self) -> int:
        return len(self.residuals)


class _Problem:
    """Weighted data residuals over all observation sets, and the prior rows, as a function of
    the free parameters ``names`` (the others at ``fixed``)."""

    def __init__(
        self,
        sets: Sequence[Observations],
        base: Efficiency,
        names: Sequence[str],
        fixed: Mapping[str, float],
        center: Mapping[str, float],
    ) -> None:
        self.sets, self.base, self.names, self.fixed = sets, base, list(names), dict(fixed)
        self.log_measured = np.concatenate([np.log(s.measured) for s in sets])
        self.kinds = np.array([s.kind for s in sets for _ in range(len(s))])
        self.gpus = np.array(
            [g for s in sets for g in (s.gpus if s.gpus else (0,) * len(s))], dtype=np.int64
        )
        self.weights = np.ones(len(self.kinds))
        """1 / scatter of each row's kind."""
        self.huber = np.ones(len(self.kinds))
        """IRLS weights of the Huber loss."""
        self.rows: BoolArray = np.ones(len(self.kinds), dtype=np.bool_)
        """Rows that enter the fit (a validation fold leaves some out)."""
        self.center = np.array([center[n] for n in self.names])
        self.prior_sd = np.array([PRIOR_WIDTH * parameter(n).scale for n in self.names])
        self._memo: dict[bytes, FloatArray] = {}
        self.tol = FIT_TOL
        """Relative tolerance of a solve (``FIT_TOL`` unless the caller trades it for time)."""

    def predict(self, x: FloatArray) -> FloatArray:
        key = np.asarray(x, dtype=np.float64).tobytes()
        if key in self._memo:  # the weights, the Huber step and the solver ask at the same x
            return self._memo[key]
        values = {**self.fixed, **dict(zip(self.names, (float(v) for v in x), strict=True))}
        out = np.concatenate([s.predict(values, self.base) for s in self.sets])
        self._memo = {key: out}
        return out

    def raw(self, x: FloatArray) -> FloatArray:
        """Log errors of every row (a non-finite prediction counts as a huge error)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.log(self.predict(x)) - self.log_measured
        result: FloatArray = np.where(np.isfinite(out), out, NONFINITE_LOG_ERROR)
        return result

    def scaled(self, x: FloatArray) -> FloatArray:
        """Log errors in units of their kind's scatter, every row."""
        result: FloatArray = self.raw(x) * self.weights
        return result

    def residuals(self, x: FloatArray) -> FloatArray:
        """The objective's rows: Huber-weighted scaled errors of the fitted rows, then the prior."""
        data = (self.scaled(x) * np.sqrt(self.huber))[self.rows]
        result: FloatArray = np.concatenate([data, (x - self.center) / self.prior_sd])
        return result

    def predict_points(self, points: FloatArray) -> FloatArray:
        """Predictions at k points of the free parameters (rows of ``points``), shape (k, n):
        each observation set evaluates all points at once where it can."""
        k = points.shape[0]
        values = {n: np.full(k, float(v)) for n, v in self.fixed.items()}
        values |= {n: points[:, j] for j, n in enumerate(self.names)}
        return np.hstack([s.predictions(values, self.base) for s in self.sets])

    def jacobian(self, x: FloatArray) -> FloatArray:
        """Central differences of the scaled errors of every row (one-sided at a bound), all
        2p points in one evaluation."""
        p = len(self.names)
        if not p:
            return np.zeros((len(self.kinds), 0))
        lower = np.array([parameter(n).lower for n in self.names])
        upper = np.array([parameter(n).upper for n in self.names])
        h = 1e-3 * np.array([parameter(n).scale for n in self.names])
        up = np.tile(x, (p, 1))
        down = up.copy()
        idx = np.arange(p)
        up[idx, idx] = np.minimum(x + h, upper)
        down[idx, idx] = np.maximum(x - h, lower)
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.log(self.predict_points(np.vstack([up, down]))) - self.log_measured
        logs = np.where(np.isfinite(logs), logs, NONFINITE_LOG_ERROR) * self.weights
        jac: FloatArray = ((logs[:p] - logs[p:]) / (up[idx, idx] - down[idx, idx])[:, None]).T
        return jac

    def residual_jacobian(self, x: FloatArray) -> FloatArray:
        """Jacobian of ``residuals`` (Huber weights held fixed, as in the reweighting)."""
        data = (self.jacobian(x) * np.sqrt(self.huber)[:, None])[self.rows]
        result: FloatArray = np.vstack([data, np.diag(1.0 / self.prior_sd)])
        return result

    def solve(self, x0: FloatArray) -> tuple[FloatArray, optimize.OptimizeResult | None]:
        """The MAP estimate over the fitted rows, Huber weights by IRLS."""
        if not self.names:
            return x0, None
        lower = np.array([parameter(n).lower for n in self.names])
        upper = np.array([parameter(n).upper for n in self.names])
        x = np.clip(x0, lower, upper)
        result: optimize.OptimizeResult | None = None
        for _ in range(IRLS_ROUNDS):
            huber = _huber_weights(self.scaled(x))
            if result is not None and np.allclose(huber, self.huber):
                break
            self.huber = huber
            result = optimize.least_squares(
                self.residuals,
                x,
                jac=self.residual_jacobian,
                bounds=(lower, upper),
                x_scale=self.prior_sd,
                method="trf",
                xtol=self.tol,
                ftol=self.tol,
                max_nfev=200 * len(self.names),
            )
            x = result.x
        return x, result


def robust_sd(raw: FloatArray) -> float:
    """1.4826 x the median absolute deviation: the normal-equivalent scatter, blind to outliers."""
    return max(1.4826 * float(np.median(np.abs(raw - np.median(raw)))), SD_FLOOR_LOG)


def _kind_weights(problem: _Problem, x: FloatArray) -> FloatArray:
    """1 / robust scatter of the log errors of each row's kind: the weights of the fit."""
    raw = problem.raw(x)
    scale = {k: robust_sd(raw[problem.kinds == k]) for k in dict.fromkeys(problem.kinds.tolist())}
    return 1.0 / np.array([scale[k] for k in problem.kinds])


def _huber_weights(r: FloatArray) -> FloatArray:
    """IRLS weights of the Huber loss on unit-scale residuals (1 inside HUBER_K, K/|r| out)."""
    a = np.abs(r)
    result: FloatArray = np.where(a <= HUBER_K, 1.0, HUBER_K / np.maximum(a, 1e-300))
    return result


def _kind_sd(problem: _Problem, x: FloatArray, p: int) -> dict[str, float]:
    raw = problem.raw(x)
    n = len(raw)
    out = {}
    for kind in dict.fromkeys(problem.kinds.tolist()):
        r = raw[problem.kinds == kind]
        dof = max(len(r) - p * len(r) / n, 1.0)  # the parameters' share of this kind's dof
        out[kind] = max(float(np.sqrt(np.sum(r**2) / dof)), SD_FLOOR_LOG)
    return out


def _posterior_cov(jac: FloatArray, scaled: FloatArray, prior_sd: FloatArray) -> FloatArray:
    """``(J^T J / s^2 + diag(1 / prior_sd^2))^-1`` with J and the residuals Huber-weighted and
    ``s^2`` their mean square over ``n - p`` degrees of freedom."""
    hw = np.sqrt(_huber_weights(scaled))
    jac, res = jac * hw[:, None], scaled * hw
    n, p = jac.shape
    s2 = max(float(np.sum(res**2)) / max(n - p, 1), S2_FLOOR)
    cov: FloatArray = np.linalg.inv(jac.T @ jac / s2 + np.diag(1.0 / prior_sd**2))
    return cov


def posterior(
    sets: Sequence[Observations],
    base: Efficiency,
    weights: FloatArray,
    values: Mapping[str, float],
    names: Sequence[str],
) -> tuple[tuple[str, ...], FloatArray]:
    """Gauss-Newton posterior covariance of ``names`` at ``values`` with a normal prior of
    standard deviation ``PRIOR_WIDTH x scale`` on each (its mean does not enter)."""
    fixed = {k: v for k, v in values.items() if k not in names}
    problem = _Problem(sets, base, names, fixed, values)
    problem.weights = weights
    x = np.array([values[n] for n in names])
    return tuple(names), _posterior_cov(problem.jacobian(x), problem.scaled(x), problem.prior_sd)


def candidates(sets: Sequence[Observations]) -> tuple[str, ...]:
    kinds = dict.fromkeys(s.kind for s in sets)
    return tuple(dict.fromkeys(n for k in kinds for n in BY_KIND[k]))


def order(problem: _Problem, x0: FloatArray) -> tuple[list[int], dict[int, str]]:
    """Forward selection order on the MAP problem linearised at the defaults ``x0``.

    Adds, one at a time, the parameter that lowers the (Huber-weighted) data sum of squares plus
    prior penalty most. Returns the order and, for parameters no observation depends on, why
    they are left out.
    """
    r0 = problem.scaled(x0)
    w = np.sqrt(_huber_weights(r0 / robust_sd(r0)))
    js = problem.jacobian(x0) * problem.prior_sd * w[:, None]
    r0 = r0 * w
    effect = np.sqrt(np.sum(js**2, axis=0)) / PRIOR_WIDTH
    why = {
        j: "no measurement depends on it"
        for j in range(len(problem.names))
        if effect[j] < NO_EFFECT_LOG
    }
    chosen: list[int] = []
    while True:
        best: tuple[float, int] | None = None
        for j in range(len(problem.names)):
            if j in chosen or j in why:
                continue
            cols = js[:, [*chosen, j]]
            # Ridge step in prior units: min |r0 + cols s|^2 + |s|^2.
            a = np.vstack([cols, np.eye(cols.shape[1])])
            b = np.concatenate([-r0, np.zeros(cols.shape[1])])
            step, *_ = np.linalg.lstsq(a, b, rcond=None)
            cost = float(np.sum((r0 + cols @ step) ** 2) + np.sum(step**2))
            if best is None or cost < best[0]:
                best = (cost, j)
        if best is None:
            return chosen, why
        chosen.append(best[1])


def folds(problem: _Problem) -> tuple[str, list[tuple[BoolArray, BoolArray]]]:
    """Validation folds (fit rows, scored rows) and their description.

    Rolling origin over cluster sizes when the step times span several: for each size after the
    smallest, fit on every row except the step times at that size or larger, score those at that
    size. Otherwise ``CV_FOLDS`` interleaved folds over all rows.
    """
    step = problem.kinds == "step"
    sizes = sorted({int(g) for g in problem.gpus[step]})
    if len(sizes) >= 2:
        out = [(~step | (problem.gpus < g), step & (problem.gpus == g)) for g in sizes[1:]]
        return "rolling origin over cluster sizes " + ", ".join(map(str, sizes)), out
    n = len(problem.kinds)
    k = min(CV_FOLDS, n)
    index = np.arange(n) % k
    return f"{k}-fold", [(index != i, index == i) for i in range(k)]


def validate(
    problem: _Problem, x0: FloatArray, splits: Sequence[tuple[BoolArray, BoolArray]]
) -> tuple[float, float]:
    """Mean absolute scaled error of the scored rows when fitted on the fit rows, and its
    standard error."""
    errors = []
    for fit_rows, scored in splits:
        problem.rows = fit_rows
        x, _ = problem.solve(x0)
        errors.append(np.abs(problem.scaled(x)[scored]))
    problem.rows = np.ones(len(problem.kinds), dtype=np.bool_)
    e = np.concatenate(errors)
    return float(np.mean(e)), float(np.std(e, ddof=1) / np.sqrt(len(e))) if len(e) > 1 else 0.0


def select(
    sets: Sequence[Observations],
    base: Efficiency,
    names: Sequence[str],
    defaults: Mapping[str, float],
    weights: FloatArray,
) -> tuple[list[str], dict[str, str], tuple[tuple[int, float, float], ...], str]:
    """The parameters to fit: the shortest prefix of ``order`` whose validation error is within
    one standard error of the best prefix's. Also returns why each other candidate is left at
    its default, the validation error per prefix length (length, mean, standard error), and the
    folds' description."""
    x0 = np.array([defaults[n] for n in names])
    screen = _Problem(sets, base, names, {}, defaults)
    screen.weights = weights
    ranked, why = order(screen, x0)
    label, splits = folds(screen)
    scores: list[tuple[int, float, float]] = []
    for k in range(len(ranked) + 1):
        sub = [names[j] for j in ranked[:k]]
        problem = _Problem(sets, base, sub, {}, defaults)
        problem.weights, problem.tol = weights, VALIDATION_TOL
        scores.append((k, *validate(problem, x0[ranked[:k]], splits)))
    best = min(scores, key=lambda s: s[1])
    k = next(s[0] for s in scores if s[1] <= best[1] + best[2])
    reasons = {names[j]: r for j, r in why.items()}
    for j in ranked[k:]:
        reasons[names[j]] = f"does not lower the validation error ({label})"
    return [names[j] for j in ranked[:k]], reasons, tuple(scores), label


def fit(
    collected: Collected,
    *,
    params: Sequence[str] | None = None,
    base: Efficiency | None = None,
    select_by_validation: bool = True,
    tol: float = FIT_TOL,
) -> FitResult:
    """Fit the parameters the data support among ``params`` (default: every parameter the
    observation kinds can inform); the rest stay at their defaults, with the reason.

    With ``select_by_validation`` false every one of ``params`` is fitted (the MAP fit alone:
    the prior keeps one the data do not inform at its default). ``training_clock_frac:<id>``
    names fit one accelerator's clock each, for runs on several accelerators. ``tol`` is the
    relative tolerance of the final solves.
    """
    base = base or Efficiency()
    sets = [s for s in collected.sets if len(s)]
    if not sets:
        raise ScalewallError("no usable measurements: give probe files, nccl-tests logs or runs")
    names = list(check_names(params) if params else candidates(sets))
    dropped: dict[str, str] = {}
    accs = sorted({a for s in sets for a in s.accelerators})
    clock = 1.0
    if CLOCK in names:
        if len(accs) != 1:
            names.remove(CLOCK)
            dropped[CLOCK] = "the measurements span several accelerators (one clock each)"
        else:
            given = [s.clocks[accs[0]] for s in sets if accs[0] in s.clocks]
            clock = given[0] if given else catalog.accelerator(accs[0]).training_clock_frac
    defaults = {n: default_value(n, base, clock) for n in [*names, *dropped]}

    screen = _Problem(sets, base, [], {}, defaults)
    default_pred = screen.predict(np.zeros(0))
    weights = _kind_weights(screen, np.zeros(0))
    scores: tuple[tuple[int, float, float], ...] = ()
    label = "none: every parameter given is fitted"
    if select_by_validation:
        names, why, scores, label = select(sets, base, names, defaults, weights)
        dropped.update(why)
    problem = _Problem(sets, base, names, {}, defaults)
    problem.weights, problem.tol = weights, tol
    x, result = problem.solve(np.array([defaults[n] for n in names]))
    if names:  # the scatter around the fit, not around the defaults, weighs the final pass
        problem.weights = _kind_weights(problem, x)
        x, result = problem.solve(x)
    cov = _posterior_cov(problem.jacobian(x), problem.scaled(x), problem.prior_sd)

    sd = _kind_sd(problem, x, len(names))
    fitted_pred = problem.predict(x)
    spread_names, spread = posterior(
        sets,
        base,
        problem.weights,
        {**defaults, **dict(zip(names, x, strict=True))},
        [n for n in defaults if n in names or dropped.get(n, "").find("accelerators") < 0],
    )
    residuals = []
    offset = 0
    for s in sets:
        for i, label_i in enumerate(s.labels):
            residuals.append(
                Residual(
                    label=label_i,
                    kind=s.kind,
                    source=s.source,
                    measured=float(s.measured[i]),
                    default=float(default_pred[offset + i]),
                    fitted=float(fitted_pred[offset + i]),
                    gpus=s.gpus[i] if s.gpus else 0,
                )
            )
        offset += len(s)
    return FitResult(
        names=tuple(names),
        values={n: float(v) for n, v in zip(names, x, strict=True)},
        standard_errors={n: float(np.sqrt(max(cov[j, j], 0.0))) for j, n in enumerate(names)},
        covariance=cov,
        defaults=defaults,
        not_identifiable=dropped,
        residual_log_sd=sd,
        residuals=tuple(residuals),
        accelerator=accs[0] if len(accs) == 1 else "",
        spread_names=spread_names,
        spread_covariance=spread,
        validation=scores,
        validation_folds=label,
        converged=bool(result.success) if result is not None else True,
        message=str(result.message) if result is not None else "nothing to fit",
        notes=collected.notes,
    )


def summary(result: FitResult) -> dict[str, Any]:
    """Mean absolute log error per kind, before and after."""
    out: dict[str, Any] = {}
    for kind in dict.fromkeys(r.kind for r in result.residuals):
        rs = [r for r in result.residuals if r.kind == kind]
        out[kind] = {
            "observations": len(rs),
            "default_mean_abs_log_error": float(np.mean([abs(r.default_log_error) for r in rs])),
            "fitted_mean_abs_log_error": float(np.mean([abs(r.fitted_log_error) for r in rs])),
            "residual_log_sd": result.residual_log_sd.get(kind, 0.0),
        }
    return out
