"""Checkpoint intervals: Young's first-order rule, Daly's higher-order estimate, and a numeric
optimum of any goodput function of the interval.

Notation: delta = checkpoint write (stall) time, M = mean time between interruptions,
tau = compute time between checkpoints.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from scipy.optimize import minimize_scalar

from scalewall.errors import SpecError


def _check(delta_s: float, mtbf_s: float) -> None:
    if not delta_s > 0:
        raise SpecError("checkpoint_s", delta_s, "must be > 0")
    if not mtbf_s > 0:
        raise SpecError("mtbf_s", mtbf_s, "must be > 0")


def young_interval_s(delta_s: float, mtbf_s: float) -> float:
    """Young (CACM 17(9), 1974): tau = sqrt(2 delta M)."""
    _check(delta_s, mtbf_s)
    return math.sqrt(2.0 * delta_s * mtbf_s)


def daly_interval_s(delta_s: float, mtbf_s: float) -> float:
    """Daly (FGCS 22(3), 2006, eq. 37), the higher-order estimate:

    tau = sqrt(2 delta M) * [1 + sqrt(delta / 2M) / 3 + (delta / 2M) / 9] - delta   for delta < 2M
    tau = M                                                                          otherwise
    """
    _check(delta_s, mtbf_s)
    if delta_s >= 2.0 * mtbf_s:
        return mtbf_s
    x = delta_s / (2.0 * mtbf_s)
    return math.sqrt(2.0 * delta_s * mtbf_s) * (1.0 + math.sqrt(x) / 3.0 + x / 9.0) - delta_s


def daly_wall_time_s(
    *, interval_s: float, delta_s: float, mtbf_s: float, restart_s: float, solve_s: float
) -> float:
    """Daly's expected wall time for ``solve_s`` of work (FGCS 2006, eq. 13, exponential failures,
    failures possible during checkpoints and restarts):

    T = M e^{R/M} (e^{(tau + delta)/M} - 1) * Ts / tau
    """
    _check(delta_s, mtbf_s)
    return (
        mtbf_s
        * math.exp(restart_s / mtbf_s)
        * math.expm1((interval_s + delta_s) / mtbf_s)
        * solve_s
        / interval_s
    )


def optimal_interval_s(
    goodput_of: Callable[[float], float], *, lower_s: float, upper_s: float
) -> float:
    """The interval in [lower_s, upper_s] that maximises ``goodput_of(interval)``.

    Bounded Brent search on log(interval); goodput is unimodal in the interval for the models
    here (stall falls as 1/tau, lost work grows with tau).
    """
    if not 0 < lower_s <= upper_s:
        raise SpecError("interval bounds", (lower_s, upper_s), "need 0 < lower <= upper")
    if lower_s == upper_s:
        return lower_s
    found = minimize_scalar(
        lambda log_tau: -goodput_of(math.exp(log_tau)),
        bounds=(math.log(lower_s), math.log(upper_s)),
        method="bounded",
        options={"xatol": 1e-6},
    )
    return float(math.exp(found.x))
