"""Goodput (effective training time ratio): analytic and seeded, vectorized Monte Carlo.

Model (per job). Unexpected interruptions arrive as a Poisson process of rate lambda (sum over
causes c of lambda_c), at any time: during compute, checkpoint stalls and restarts. Work runs in
segments of tau seconds of compute followed by a stall of delta; a segment counts once its
checkpoint is written. An interruption of cause c loses the segment in progress and costs a restart
R_c (plus a wait W when the failed hardware needs a node and the spare pool is empty, probability
P_c); the next attempt must then finish R_c + tau + delta uninterrupted.

Expected wall time per segment (renewal argument; with one cause it is Daly's FGCS 2006 eq. 13):

    E[T] = (e^{lambda (tau + delta)} - 1) / (lambda * Q),
    Q    = sum_c p_c [(1 - P_c) e^{-lambda R_c} + P_c e^{-lambda (R_c + W)}],
    p_c  = lambda_c / lambda

and goodput_u = tau / E[T]. Planned maintenance (rate lambda_p, cost delta + R_p, no lost work)
takes its share of wall time: goodput = goodput_u (1 - lambda_p (delta + R_p)).
Asynchronous checkpoints stall only for the snapshot but become durable L seconds later; an
interruption inside that window also loses the previous segment. The analytic form charges the
expected extra loss (about L per interruption) as restart time; the Monte Carlo simulates it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from scalewall.errors import SpecError
from scalewall.reliability.failures import InterruptionRates
from scalewall.units import DAY_S, HOUR_S

FloatArray = NDArray[np.float64]

LOSS_KINDS = ("failed_work", "checkpoint", "restart", "planned")
"""Where GPU time goes besides useful training."""

CI_LEVEL = 0.95
"""Two-sided confidence level of the Monte Carlo interval."""


@dataclass(frozen=True, kw_only=True)
class GoodputModel:
    """The goodput model in plain numbers (seconds, events per second)."""

    rates: InterruptionRates
    restart_s: dict[str, float]
    """Restart overhead by cause, a spare being at hand."""
    no_spare_frac: dict[str, float]
    """Probability, by cause, that no spare node is free when one is needed."""
    no_spare_wait_s: float
    blocking_s: float
    """Stall per checkpoint."""
    persist_s: float = 0.0
    """Asynchronous: durable this long after the stall (0: synchronous)."""
    planned_restart_s: float = 0.0
    gpus: int = 1

    def __post_init__(self) -> None:
        for name in ("no_spare_wait_s", "blocking_s", "persist_s", "planned_restart_s"):
            if getattr(self, name) < 0:
                raise SpecError(name, getattr(self, name), "must be >= 0")
        for cause, value in self.restart_s.items():
            if value < 0:
                raise SpecError(f"restart_s[{cause}]", value, "must be >= 0")

    @property
    def causes(self) -> list[str]:
        return [c for c, r in self.rates.by_cause_per_s.items() if r > 0]

    def stall_s(self, interval_s: float) -> float:
        """Stall per checkpoint; asynchronous saves also wait for the previous one to persist."""
        if self.persist_s == 0:
            return self.blocking_s
        return max(self.blocking_s, self.persist_s - interval_s)

    def planned_cost_s(self, interval_s: float) -> float:
        return self.stall_s(interval_s) + self.planned_restart_s

    def mean_restart_s(self) -> float:
        """Restart overhead averaged over causes, incl. waits for a spare."""
        lam = self.rates.unexpected_per_s
        if lam == 0:
            return 0.0
        return sum(
            r / lam * (self.restart_s[c] + self.no_spare_frac[c] * self.no_spare_wait_s)
            for c, r in self.rates.by_cause_per_s.items()
        )

    def _q(self) -> float:
        lam = self.rates.unexpected_per_s
        q = 0.0
        for c, r in self.rates.by_cause_per_s.items():
            base = math.exp(-lam * (self.restart_s[c] + self.persist_s))
            wait = math.exp(-lam * self.no_spare_wait_s)
            q += r / lam * base * (1.0 - self.no_spare_frac[c] + self.no_spare_frac[c] * wait)
        return q

    def segment_wall_s(self, interval_s: float) -> float:
        """Expected wall time to complete one segment (see the module docstring)."""
        lam = self.rates.unexpected_per_s
        a = interval_s + self.stall_s(interval_s)
        if lam == 0:
            return a
        return math.expm1(lam * a) / (lam * self._q())

    def goodput_frac(self, interval_s: float) -> float:
        """Analytic goodput for a checkpoint every ``interval_s`` of compute."""
        if not interval_s > 0:
            raise SpecError("interval_s", interval_s, "must be > 0")
        unexpected = interval_s / self.segment_wall_s(interval_s)
        planned = 1.0 - self.rates.planned_per_s * self.planned_cost_s(interval_s)
        return max(unexpected * planned, 0.0)

    def goodput_fracs(self, interval_s: FloatArray) -> FloatArray:
        """`goodput_frac` over an array of intervals (the same formula, element-wise)."""
        tau = np.asarray(interval_s, dtype=np.float64)
        if not np.all(tau > 0):
            raise SpecError("interval_s", float(np.min(tau)), "must be > 0")
        stall = (
            self.blocking_s
            if self.persist_s == 0
            else np.maximum(self.blocking_s, self.persist_s - tau)
        )
        a = tau + stall
        lam = self.rates.unexpected_per_s
        segment = a if lam == 0 else np.expm1(lam * a) / (lam * self._q())
        planned = 1.0 - self.rates.planned_per_s * (stall + self.planned_restart_s)
        result: FloatArray = np.maximum(tau / segment * planned, 0.0)
        return result

    def loss_fracs(self, interval_s: float) -> dict[str, float]:
        """Fraction of wall time lost by kind (`LOSS_KINDS`), analytic.

        Checkpoint stalls and planned maintenance follow directly; the rest of the loss is split
        between restarts and failed work in the ratio of mean restart time to the expected work
        lost per interruption, E[t | t < a] = 1/lambda - a / (e^{lambda a} - 1), plus L when async.
        """
        g = self.goodput_frac(interval_s)
        stall = self.stall_s(interval_s)
        planned = self.rates.planned_per_s * self.planned_cost_s(interval_s)
        ckpt = g * stall / interval_s
        rest = max(1.0 - g - ckpt - planned, 0.0)
        lam = self.rates.unexpected_per_s
        if lam == 0:
            return {"failed_work": 0.0, "checkpoint": ckpt, "restart": 0.0, "planned": planned}
        a = interval_s + stall
        lost = 1.0 / lam - a / math.expm1(lam * a) + self.persist_s
        restart = self.mean_restart_s()
        share = restart / (restart + lost) if restart + lost > 0 else 0.0
        return {
            "failed_work": rest * (1.0 - share),
            "checkpoint": ckpt,
            "restart": rest * share,
            "planned": planned,
        }

    def failure_loss_by_cause(self, interval_s: float) -> dict[str, float]:
        """Fraction of wall time lost to interruptions (failed work and restarts), by cause.

        Each cause's share weighs its rate by what one of its events costs: its restart, its
        wait for a spare, and the expected work lost (the same for every cause).
        """
        fracs = self.loss_fracs(interval_s)
        spent = fracs["failed_work"] + fracs["restart"]
        lam = self.rates.unexpected_per_s
        if lam == 0 or spent == 0:
            return dict.fromkeys(self.rates.by_cause_per_s, 0.0)
        a = interval_s + self.stall_s(interval_s)
        lost = 1.0 / lam - a / math.expm1(lam * a) + self.persist_s
        weight = {
            c: r * (self.restart_s[c] + self.no_spare_frac[c] * self.no_spare_wait_s + lost)
            for c, r in self.rates.by_cause_per_s.items()
        }
        total = sum(weight.values())
        return {c: spent * w / total for c, w in weight.items()}


@dataclass(frozen=True, kw_only=True)
class MonteCarloResult:
    """Goodput over ``runs`` simulated runs of ``run_s`` wall seconds each."""

    runs: int
    seed: int
    goodput_frac: float
    """Mean over runs of useful compute / wall time."""
    goodput_ci: tuple[float, float]
    """`CI_LEVEL` confidence interval of the mean (normal approximation over runs)."""
    interruptions_mean: float
    """Unexpected interruptions per run."""
    loss_fracs: dict[str, float]
    """Mean fraction of wall time by loss kind (`LOSS_KINDS`)."""
    lost_by_cause_frac: dict[str, float]
    """Mean fraction of wall time lost (failed work and restarts) by interruption cause."""


def _normal_ci(sample: np.ndarray) -> tuple[float, float]:
    mean = float(sample.mean())
    if sample.size < 2:
        return (mean, mean)
    half = float(stats.norm.ppf(0.5 + CI_LEVEL / 2) * sample.std(ddof=1) / math.sqrt(sample.size))
    return (mean - half, mean + half)


def simulate(
    model: GoodputModel, *, interval_s: float, run_s: float, runs: int, seed: int
) -> MonteCarloResult:
    """Seeded, vectorized Monte Carlo of the goodput model.

    All runs advance together, one interruption (or planned event) per step, so a step costs a few
    numpy operations over the still-running runs and the loop length is the number of events per
    run, not the number of checkpoints. Between events the completed segments are counted with
    floor(). Spare availability is drawn per event with the analytic probability (the pool's
    occupancy is not simulated).
    """
    if runs < 1:
        raise SpecError("runs", runs, "must be >= 1")
    if not 0 < interval_s <= run_s:
        raise SpecError("interval_s", interval_s, f"must be in (0, run_s={run_s:g}]")
    return _Simulation(model, interval_s, run_s, runs, np.random.default_rng(seed), seed).run()


class _Simulation:
    """State arrays of the lock-step Monte Carlo (one entry per run)."""

    def __init__(
        self,
        model: GoodputModel,
        interval_s: float,
        run_s: float,
        runs: int,
        rng: np.random.Generator,
        seed: int,
    ) -> None:
        self.m, self.tau, self.run_s, self.n = model, interval_s, run_s, runs
        self.rng, self.seed = rng, seed
        self.stall = model.stall_s(interval_s)
        self.seg = interval_s + self.stall
        self.causes = model.causes
        lam = np.array([model.rates.by_cause_per_s[c] for c in self.causes])
        self.lam = float(lam.sum())
        self.cause_p = lam / self.lam if self.lam > 0 else lam
        self.cause_r = np.array([model.restart_s[c] for c in self.causes])
        self.cause_ns = np.array([model.no_spare_frac[c] for c in self.causes])
        self.wall = np.zeros(runs)
        self.pending = np.zeros(runs)  # restart still to do before the next segment
        self.pending_planned = np.zeros(runs, dtype=bool)
        self.pending_cause = np.full(runs, -1)
        self.acc = {k: np.zeros(runs) for k in (*LOSS_KINDS, "work", "events")}
        self.by_cause = np.zeros((runs, max(len(self.causes), 1)))

    def _draw(self, lam: float, size: int) -> np.ndarray:
        if lam <= 0:
            return np.full(size, np.inf)
        return self.rng.exponential(1.0 / lam, size)

    def _add(self, key: str, idx: np.ndarray, value: np.ndarray) -> None:
        np.add.at(self.acc[key], idx, value)

    def _charge_pending(self, idx: np.ndarray, spent: np.ndarray) -> None:
        """Time spent in the pending restart: to planned maintenance or to its cause."""
        planned = self.pending_planned[idx]
        self._add("planned", idx[planned], spent[planned])
        self._add("restart", idx[~planned], spent[~planned])
        cause = self.pending_cause[idx]
        hit = ~planned & (cause >= 0)
        np.add.at(self.by_cause, (idx[hit], cause[hit]), spent[hit])

    def _progress(self, idx: np.ndarray, busy: np.ndarray, *, keep_partial: bool) -> np.ndarray:
        """Count segments completed in ``busy`` seconds after the restart; returns the remainder."""
        whole = np.floor(busy / self.seg)
        part = busy - whole * self.seg
        self._add("work", idx, whole * self.tau)
        self._add("checkpoint", idx, whole * self.stall)
        if keep_partial:
            self._add("work", idx, np.minimum(part, self.tau))
            self._add("checkpoint", idx, np.maximum(part - self.tau, 0.0))
        return part

    def step(self, idx: np.ndarray) -> np.ndarray:
        """Advance runs ``idx`` to their next event; returns the runs still going."""
        size = idx.size
        t_u = self._draw(self.lam, size)
        t_p = self._draw(self.m.rates.planned_per_s, size)
        t = np.minimum(t_u, t_p)
        left = self.run_s - self.wall[idx]
        end = t >= left
        self._finish(idx[end], left[end])
        go: np.ndarray = idx[~end]
        t_go, unexpected = t[~end], (t_u < t_p)[~end]
        self._unexpected(go[unexpected], t_go[unexpected])
        self._planned(go[~unexpected], t_go[~unexpected])
        return go

    def _finish(self, idx: np.ndarray, left: np.ndarray) -> None:
        pend = self.pending[idx]
        self._charge_pending(idx, np.minimum(pend, left))
        self._progress(idx, np.maximum(left - pend, 0.0), keep_partial=True)
        self.wall[idx] += left

    def _unexpected(self, idx: np.ndarray, t: np.ndarray) -> None:
        pend = self.pending[idx]
        self._charge_pending(idx, np.minimum(pend, t))
        busy = np.maximum(t - pend, 0.0)
        whole_before = np.floor(busy / self.seg)
        part = self._progress(idx, busy, keep_partial=False)
        lost = np.minimum(part, self.tau)
        self._add("checkpoint", idx, np.maximum(part - self.tau, 0.0))
        # Async: a checkpoint finished less than L ago is not yet durable; its segment is lost too.
        unsafe = (whole_before >= 1) & (part < self.m.persist_s)
        self._add("work", idx[unsafe], np.full(int(unsafe.sum()), -self.tau))
        lost = lost + np.where(unsafe, self.tau, 0.0)
        self._add("failed_work", idx, lost)
        self._add("events", idx, np.ones(idx.size))
        cause = self.rng.choice(len(self.causes), size=idx.size, p=self.cause_p)
        np.add.at(self.by_cause, (idx, cause), lost)
        wait = self.rng.random(idx.size) < self.cause_ns[cause]
        self.pending[idx] = self.cause_r[cause] + np.where(wait, self.m.no_spare_wait_s, 0.0)
        self.pending_planned[idx] = False
        self.pending_cause[idx] = cause
        self.wall[idx] += t

    def _planned(self, idx: np.ndarray, t: np.ndarray) -> None:
        pend = self.pending[idx]
        self._charge_pending(idx, np.minimum(pend, t))
        self._progress(idx, np.maximum(t - pend, 0.0), keep_partial=True)
        # Drain: a checkpoint (not interruptible here), then the planned restart as pending work.
        self._add("planned", idx, np.full(idx.size, self.stall))
        self.wall[idx] += t + self.stall
        self.pending[idx] = self.m.planned_restart_s
        self.pending_planned[idx] = True
        self.pending_cause[idx] = -1

    def run(self) -> MonteCarloResult:
        idx = np.arange(self.n)
        while idx.size:
            idx = self.step(idx)
        g = self.acc["work"] / self.wall
        return MonteCarloResult(
            runs=self.n,
            seed=self.seed,
            goodput_frac=float(g.mean()),
            goodput_ci=_normal_ci(g),
            interruptions_mean=float(self.acc["events"].mean()),
            loss_fracs={k: float((self.acc[k] / self.wall).mean()) for k in LOSS_KINDS},
            lost_by_cause_frac={
                c: float((self.by_cause[:, i] / self.wall).mean())
                for i, c in enumerate(self.causes)
            },
        )


def gpu_hours_per_day(fracs: dict[str, float], gpus: int) -> dict[str, float]:
    """Fractions of wall time as GPU-hours per day of a ``gpus``-GPU job."""
    return {k: v * gpus * DAY_S / HOUR_S for k, v in fracs.items()}
