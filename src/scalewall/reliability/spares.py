"""Hot spares from queueing: nodes sent to repair as an M/M/c queue.

Failed nodes arrive at the repair shop at rate ``lambda`` (the job's node losses per second: a
leaf failure sends every node under it) and are repaired in ``R`` seconds on average by ``c``
crews (c = 0: unlimited, every node repaired at once: the M/M/inf queue, whose occupancy is
Poisson(lambda R) and holds for any repair-time distribution, M/G/inf). A job with ``S`` hot
spares finds none for a failure taking ``k`` nodes when more than ``S - k`` are in repair.

M/M/c occupancy (Erlang; Kleinrock, Queueing Systems Vol. 1, 1975, Sec. 3.5), a = lambda R,
rho = a / c < 1:

    P_n = P_0 a^n / n!                 n < c
    P_n = P_0 a^c rho^(n-c) / c!       n >= c
"""

from __future__ import annotations

import math

from scipy import stats

from scalewall.errors import SpecError

SPARE_RISK_FRAC = 0.01
"""Default target: at most this chance that a failure finds no spare (the job then waits for a
repair, `RestartSpec.no_spare_wait_s`)."""
MAX_SPARES = 100_000
"""Bound of the search for a required count."""


def _mmc_tail(n: int, a: float, crews: int) -> float:
    """P(N > n) in an M/M/c queue of offered load ``a`` (Erlang); inf-load queues are full."""
    if a >= crews:
        return 1.0
    rho = a / crews
    log_terms = [k * math.log(a) - math.lgamma(k + 1) for k in range(crews)] if a > 0 else [0.0]
    top = crews * math.log(a) - math.lgamma(crews + 1) - math.log1p(-rho) if a > 0 else -math.inf
    peak = max(*log_terms, top)
    norm = sum(math.exp(t - peak) for t in log_terms) + math.exp(top - peak)
    if n < crews - 1:
        below = sum(math.exp(t - peak) for t in log_terms[: n + 1]) / norm
        return max(1.0 - below, 0.0)
    # N > n >= c - 1: the geometric tail a^c rho^(n+1-c) / (c! (1 - rho)).
    return math.exp(top - peak + (n + 1 - crews) * math.log(rho)) / norm if a > 0 else 0.0


def nodes_in_repair_tail(n: int, arrivals_per_s: float, repair_s: float, crews: int = 0) -> float:
    """P(more than ``n`` nodes in repair): Poisson for unlimited crews, else M/M/c."""
    if arrivals_per_s < 0 or repair_s < 0:
        raise SpecError("arrivals_per_s, repair_s", (arrivals_per_s, repair_s), "must be >= 0")
    if crews < 0:
        raise SpecError("repair_crews", crews, "must be >= 0 (0: unlimited)")
    if n < 0:
        return 1.0
    a = arrivals_per_s * repair_s
    if crews == 0:
        return float(stats.poisson.sf(n, a))
    return _mmc_tail(n, a, crews)


def spares_for_risk(
    arrivals_per_s: float,
    repair_s: float,
    *,
    nodes_per_failure: int = 1,
    crews: int = 0,
    risk_frac: float = SPARE_RISK_FRAC,
) -> int:
    """Fewest spares S with P(more than S - k nodes in repair) <= ``risk_frac``.

    Returns -1 when no count reaches it (a repair shop slower than the failures: a >= c).
    """
    if not 0 < risk_frac < 1:
        raise SpecError("risk_frac", risk_frac, "must be in (0, 1)")
    if arrivals_per_s * repair_s == 0:
        return 0  # nothing ever waits for repair
    if crews and arrivals_per_s * repair_s >= crews:
        return -1
    for spares in range(nodes_per_failure - 1, MAX_SPARES):
        tail = nodes_in_repair_tail(spares - nodes_per_failure, arrivals_per_s, repair_s, crews)
        if tail <= risk_frac:
            return max(spares, 0)
    return -1
