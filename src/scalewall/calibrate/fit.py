"""Bounded least squares on log errors, with standard errors and an identifiability check.

Residual of observation i: ``r_i = (log predicted_i - log measured_i) / sd_k`` where ``sd_k`` is
the scatter of its kind (GEMM, collective, step ...), estimated from a first unweighted pass, so
a hundred microbenchmark points do not drown ten step times. ``scipy.optimize.least_squares``
(trust-region reflective, bounded) minimises ``sum r_i^2``.

Uncertainty: with J the Jacobian of the weighted residuals at the optimum and
``s^2 = sum r^2 / (n - p)``, the covariance is ``s^2 (J^T J)^-1`` (Gauss-Newton). A parameter
the data cannot pin has a near-zero column of J (no observation depends on it) or lies along a
near-zero singular direction (it trades off against another one, like the accelerator clock
against the GEMM ratio): its standard error then exceeds its typical magnitude. Such parameters
are put back to their defaults, one at a time, and the rest refitted.
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
from scalewall.calibrate.parameters import BY_KIND, CLOCK, PARAMETERS, check_names
from scalewall.errors import ScalewallError
from scalewall.perf.assumptions import Efficiency

FloatArray = NDArray[np.float64]

NO_EFFECT_LOG = 1e-4
"""A parameter whose typical change moves no prediction by more than 0.01% has no effect."""
MAX_RELATIVE_SE = 1.0
"""Standard error over the parameter's size (its value, at least its typical magnitude) above
which it counts as not identified."""
BIC_MARGIN = 2.0
"""Information-criterion gain a parameter must bring to be fitted."""
SD_FLOOR_LOG = 1e-4
HUBER_K = 1.5
"""Huber loss threshold in robust standard deviations: errors beyond it count linearly, so a few
runs the model cannot express (outliers) do not drag every parameter."""
"""Smallest scatter per kind (log units) used as a weight: noise-free data stays well-posed."""


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
    """Start values of every candidate parameter."""
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
    """Posterior covariance of all candidates with a normal prior N(default, scale^2) on each:
    fitted parameters get (nearly) their least-squares covariance, those the data could not
    pin keep about their prior spread, correlations included. Prediction intervals sample it."""
    converged: bool = True
    message: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def observations(self) -> int:
        return len(self.residuals)


class _Problem:
    """The residual vector over all observation sets, as a function of the free parameters."""

    def __init__(self, sets: Sequence[Observations], base: Efficiency, names: Sequence[str],
                 fixed: Mapping[str, float]) -> None:
        self.sets, self.base, self.names, self.fixed = sets, base, list(names), dict(fixed)
        self.log_measured = np.concatenate([np.log(s.measured) for s in sets])
        self.kinds = np.array([s.kind for s in sets for _ in range(len(s))])
        self.weights = np.ones(len(self.kinds))

    def predict(self, x: FloatArray) -> FloatArray:
        values = {**self.fixed, **dict(zip(self.names, (float(v) for v in x), strict=True))}
        return np.concatenate([s.predict(values, self.base) for s in self.sets])

    def residuals(self, x: FloatArray) -> FloatArray:
        pred = self.predict(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            raw = np.log(pred) - self.log_measured
        raw = np.where(np.isfinite(raw), raw, 50.0)
        result: FloatArray = raw * self.weights
        return result

    def jacobian(self, x: FloatArray) -> FloatArray:
        """Central differences of the weighted residuals (one-sided at a bound)."""
        cols = []
        for j, name in enumerate(self.names):
            p = PARAMETERS[name]
            h = 1e-3 * p.scale
            up, down = x.copy(), x.copy()
            up[j] = min(x[j] + h, p.upper)
            down[j] = max(x[j] - h, p.lower)
            cols.append((self.residuals(up) - self.residuals(down)) / (up[j] - down[j]))
        return np.column_stack(cols) if cols else np.zeros((len(self.kinds), 0))

    def solve(self, x0: FloatArray) -> optimize.OptimizeResult:
        lower = np.array([PARAMETERS[n].lower for n in self.names])
        upper = np.array([PARAMETERS[n].upper for n in self.names])
        scale = np.array([PARAMETERS[n].scale for n in self.names])
        return optimize.least_squares(
            self.residuals,
            np.clip(x0, lower, upper),
            bounds=(lower, upper),
            x_scale=scale,
            method="trf",
            loss="huber",
            f_scale=HUBER_K,
            xtol=1e-10,
            ftol=1e-10,
            max_nfev=200 * max(len(self.names), 1),
        )


def robust_sd(raw: FloatArray) -> float:
    """1.4826 x the median absolute deviation: the normal-equivalent scatter, blind to outliers."""
    return max(1.4826 * float(np.median(np.abs(raw - np.median(raw)))), SD_FLOOR_LOG)


def _kind_scale(problem: _Problem, x: FloatArray) -> dict[str, float]:
    """Robust scatter of the log errors per kind: the weights of the fit."""
    raw = problem.residuals(x) / problem.weights
    return {k: robust_sd(raw[problem.kinds == k]) for k in dict.fromkeys(problem.kinds.tolist())}


def _huber_weights(r: FloatArray) -> FloatArray:
    """IRLS weights of the Huber loss on unit-scale residuals (1 inside HUBER_K, K/|r| out)."""
    a = np.abs(r)
    result: FloatArray = np.where(a <= HUBER_K, 1.0, HUBER_K / np.maximum(a, 1e-300))
    return result


def _kind_sd(problem: _Problem, x: FloatArray, p: int) -> dict[str, float]:
    raw = problem.residuals(x) / problem.weights
    n = len(raw)
    out = {}
    for kind in dict.fromkeys(problem.kinds.tolist()):
        r = raw[problem.kinds == kind]
        dof = max(len(r) - p * len(r) / n, 1.0)  # the parameters' share of this kind's dof
        out[kind] = max(float(np.sqrt(np.sum(r**2) / dof)), SD_FLOOR_LOG)
    return out


def _covariance(jac: FloatArray, residuals: FloatArray, floor: float = 0.0) -> FloatArray:
    """``s^2 (J^T J)^-1`` by SVD; a direction with a singular value below 1e-9 of the largest
    (the data cannot tell two parameters apart) gets a variance of 1e30, not pinv's zero.
    ``s^2`` is at least ``floor``: 1 for residuals in units of their kind's scatter, so a perfect
    fit of noise-free data does not claim zero uncertainty."""
    n, p = jac.shape
    s2 = max(float(np.sum(residuals**2)) / max(n - p, 1), floor)
    _, sv, vt = np.linalg.svd(jac, full_matrices=False)
    tiny = sv < 1e-9 * max(float(sv.max()) if sv.size else 0.0, 1e-300)
    inv = np.where(tiny, 1e30, 1.0 / np.where(tiny, 1.0, sv) ** 2)
    result: FloatArray = s2 * (vt.T * inv) @ vt
    return result


def _worst(
    names: Sequence[str], x: FloatArray, jac: FloatArray, cov: FloatArray
) -> tuple[str, str] | None:
    """The parameter the data pins least, and why; None when all are identified."""
    scale = np.array([PARAMETERS[n].scale for n in names])
    effect = np.sqrt(np.sum((jac * scale) ** 2, axis=0))
    for j in np.argsort(effect):
        if effect[j] < NO_EFFECT_LOG * max(effect.max(), 1.0):
            return names[j], "no measurement depends on it"
    rel = np.sqrt(np.maximum(np.diag(cov), 0.0)) / np.maximum(np.abs(x), scale)
    if rel.max() <= MAX_RELATIVE_SE:
        return None
    # A degenerate pair has two huge errors: keep the one listed first (the more basic one).
    order = list(PARAMETERS)
    bad = [j for j in range(len(names)) if rel[j] > MAX_RELATIVE_SE]
    hopeless = [j for j in bad if rel[j] > 1e3 * MAX_RELATIVE_SE]
    j = max(hopeless, key=lambda k: order.index(names[k])) if hopeless else max(
        bad, key=lambda k: rel[k]
    )
    return names[j], f"standard error {rel[j]:.3g} x its typical size {scale[j]:.3g}"


def posterior(
    sets: Sequence[Observations],
    base: Efficiency,
    weights: FloatArray,
    values: Mapping[str, float],
    names: Sequence[str],
) -> tuple[tuple[str, ...], FloatArray]:
    """Gauss-Newton posterior covariance of ``names`` at ``values``:
    ``(J^T J / s^2 + diag(1 / scale^2))^-1`` with J the weighted Jacobian."""
    fixed = {k: v for k, v in values.items() if k not in names}
    problem = _Problem(sets, base, names, fixed)
    problem.weights = weights
    x = np.array([values[n] for n in names])
    res = problem.residuals(x)
    hw = np.sqrt(_huber_weights(res))
    jac = problem.jacobian(x) * hw[:, None]
    n, p = jac.shape
    s2 = max(float(np.sum((res * hw) ** 2)) / max(n - p, 1), 1e-12)
    prior = np.array([1.0 / PARAMETERS[k].scale ** 2 for k in names])
    cov: FloatArray = np.linalg.inv(jac.T @ jac / s2 + np.diag(prior))
    return tuple(names), cov


def candidates(sets: Sequence[Observations]) -> tuple[str, ...]:
    kinds = dict.fromkeys(s.kind for s in sets)
    return tuple(dict.fromkeys(n for k in kinds for n in BY_KIND[k]))


def _bic(ssr: float, n: int, k: int) -> float:
    return n * float(np.log(max(ssr, 1e-300) / n)) + k * float(np.log(n))


def select(problem: _Problem, x0: FloatArray) -> tuple[list[int], dict[int, str]]:
    """Forward selection on the linearised problem at the defaults.

    Adds, one at a time, the parameter that lowers the sum of squares most, while the Bayesian
    information criterion improves by more than ``BIC_MARGIN`` (positive evidence, Kass and
    Raftery 1995) and every chosen parameter stays identified (standard error below its typical
    size). Returns the chosen columns and, for the others, why they were left at defaults.
    """
    r0 = problem.residuals(x0)
    scale = np.array([PARAMETERS[n].scale for n in problem.names])
    js = problem.jacobian(x0) * scale
    w = np.sqrt(_huber_weights(r0 / robust_sd(r0)))
    r0, js = r0 * w, js * w[:, None]
    n = len(r0)
    effect = np.sqrt(np.sum(js**2, axis=0))
    why: dict[int, str] = {
        j: "no measurement depends on it"
        for j in range(len(problem.names))
        if effect[j] < NO_EFFECT_LOG
    }
    unpinned: set[int] = set()
    chosen: list[int] = []
    ssr = float(np.sum(r0**2))
    while len(chosen) < n - 1:
        best: tuple[float, int] | None = None
        for j in range(len(problem.names)):
            if j in chosen or j in why:
                continue
            cols = js[:, [*chosen, j]]
            step, *_ = np.linalg.lstsq(cols, -r0, rcond=None)
            new = float(np.sum((r0 + cols @ step) ** 2))
            cov = _covariance(cols, r0 + cols @ step)
            size = np.maximum(np.abs(x0[[*chosen, j]] / scale[[*chosen, j]] + step), 1.0)
            if (np.sqrt(np.maximum(np.diag(cov), 0.0)) / size).max() > MAX_RELATIVE_SE:
                unpinned.add(j)
                continue
            if best is None or new < best[0]:
                best = (new, j)
        if best is None or _bic(best[0], n, len(chosen) + 1) > _bic(ssr, n, len(chosen)) - (
            BIC_MARGIN
        ):
            break
        ssr = best[0]
        chosen.append(best[1])
        why.pop(best[1], None)
    for j in range(len(problem.names)):
        if j in chosen or j in why:
            continue
        if j in unpinned:
            why[j] = "standard error larger than its typical size (too little data, or it "
            why[j] += "trades off with a fitted parameter)"
        else:
            why[j] = "the data do not support fitting it (no information-criterion gain)"
    return chosen, why


def fit(
    collected: Collected,
    *,
    params: Sequence[str] | None = None,
    base: Efficiency | None = None,
) -> FitResult:
    """Fit the parameters the data support among ``params`` (default: every parameter the
    observation kinds can inform); the rest stay at their defaults, with the reason."""
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
            clock = catalog.accelerator(accs[0]).training_clock_frac
    defaults = {n: (clock if n == CLOCK else float(getattr(base, n))) for n in [*names, *dropped]}

    screen = _Problem(sets, base, names, {})
    x0 = np.array([defaults[n] for n in names])
    default_pred = screen.predict(x0)
    chosen, why = select(screen, x0)
    dropped.update({names[j]: reason for j, reason in why.items()})
    names = [names[j] for j in chosen]
    x = np.array([defaults[n] for n in names])
    result: optimize.OptimizeResult | None = None
    while True:
        problem = _Problem(sets, base, names, {})
        if names:
            result = problem.solve(x)
            scale = _kind_scale(problem, result.x)
            problem.weights = 1.0 / np.array([scale[k] for k in problem.kinds])
            result = problem.solve(result.x)
            x = result.x
        res = problem.residuals(x)
        hw = np.sqrt(_huber_weights(res))
        jac = problem.jacobian(x)
        cov = _covariance(jac * hw[:, None], res * hw, floor=1.0)
        worst = _worst(names, x, jac, cov) if names else None
        if worst is None:
            break
        index = names.index(worst[0])
        dropped[worst[0]] = worst[1]
        names.pop(index)
        x = np.delete(x, index)

    sd = _kind_sd(problem, x, len(names))
    fitted_pred = problem.predict(x)
    spread_names, spread = posterior(
        sets, base, problem.weights, {**defaults, **dict(zip(names, x, strict=True))},
        [n for n in defaults if n in names or dropped.get(n, "").find("accelerators") < 0],
    )
    residuals = []
    offset = 0
    for s in sets:
        for i, label in enumerate(s.labels):
            residuals.append(
                Residual(
                    label=label,
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
        standard_errors={
            n: float(np.sqrt(max(cov[j, j], 0.0))) for j, n in enumerate(names)
        },
        covariance=cov,
        defaults=defaults,
        not_identifiable=dropped,
        residual_log_sd=sd,
        residuals=tuple(residuals),
        accelerator=accs[0] if len(accs) == 1 else "",
        spread_names=spread_names,
        spread_covariance=spread,
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
