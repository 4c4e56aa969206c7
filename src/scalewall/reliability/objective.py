"""``goodput_tokens_per_s``: the search objective that ranks plans by tokens/s times goodput.

Registered with the search's objective registry on import (the search loads this module when
the name is first asked for), so the search never imports the reliability package itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from scalewall.perf.batch import PlanBatch
from scalewall.perf.step import StepArrays
from scalewall.reliability.adapter import sharded_inputs
from scalewall.reliability.api import MIN_INTERVAL_S, goodput_model
from scalewall.reliability.catalog import (
    DEFAULT_FAILURE_RATES,
    DEFAULT_STORAGE,
    failure_rates,
    storage_tier,
)
from scalewall.reliability.checkpoint import CheckpointSpec, RestartSpec
from scalewall.reliability.interval import optimal_interval_s
from scalewall.reliability.specs import FailureRates, StorageTier
from scalewall.search.objective import ObjectiveContext, register_objective

FloatArray = NDArray[np.float64]

NAME = "goodput_tokens_per_s"


@dataclass(frozen=True, kw_only=True)
class GoodputTokensPerSecond:
    """Tokens per second times goodput: the throughput a run keeps after failures, checkpoint
    stalls and restarts, at each plan's optimum checkpoint interval.

    Goodput depends on a plan only through its job size, who writes the checkpoint (ZeRO 0:
    data-parallel replica 0, ``tp x pp`` ranks; else every rank) and its step time (the shortest
    interval). Plans are grouped by job size and writers; each group's optimum interval is found
    once over the widest bounds, then clipped to each plan's [step time, run length] (goodput is
    unimodal in the interval, so the clipped optimum is the plan's own) and goodput is evaluated
    for all plans at once. The result equals `goodput(...)` of each plan to the optimiser's
    tolerance.
    """

    name: str = NAME
    unit: str = "tokens/s x goodput"
    storage: str | StorageTier = DEFAULT_STORAGE
    failure_rates: str | FailureRates = DEFAULT_FAILURE_RATES
    checkpoint: CheckpointSpec = field(default_factory=CheckpointSpec)
    restart: RestartSpec = field(default_factory=RestartSpec)
    spare_nodes: int | None = None
    """Hot spares reserved for the job; None: a healthy node is always at hand."""
    run_s: float | None = None
    """Wall-clock length of the run; None: the time to train ``ctx.token_budget`` tokens at the
    plan's raw throughput."""

    def goodput_fracs(self, ctx: ObjectiveContext, plans: PlanBatch, out: StepArrays) -> FloatArray:
        """Goodput of each plan at its optimum interval."""
        tier = self.storage if isinstance(self.storage, StorageTier) else storage_tier(self.storage)
        rates = self.failure_rates
        profile = rates if isinstance(rates, FailureRates) else failure_rates(rates)
        step = np.asarray(out.step_time_s, dtype=np.float64)
        run = self._run_s(ctx, out)
        gpus = (plans.tp * plans.pp * plans.cp * plans.dp).astype(np.int64)
        writers = np.where(plans.zero >= 1, 0, plans.tp * plans.pp).astype(np.int64)
        result = np.zeros(len(plans))
        for g, w in {(int(a), int(b)) for a, b in zip(gpus, writers, strict=True)}:
            rows = np.flatnonzero((gpus == g) & (writers == w))
            tp_pp = (w, 1) if w else (1, 1)
            inputs = sharded_inputs(
                ctx.model,
                ctx.cluster,
                gpus=g,
                tp=tp_pp[0],
                pp=tp_pp[1],
                zero=0 if w else 1,
                run_s=float(run[rows].max()),
                storage=tier,
                failure_rates=profile,
                checkpoint=self.checkpoint,
                restart=self.restart,
                spare_nodes=self.spare_nodes,
            )
            model, cost, _, _ = goodput_model(inputs)
            lower = np.minimum(np.maximum(step[rows], cost.persist_s), run[rows])
            widest = min(max(MIN_INTERVAL_S, cost.persist_s), float(lower.min()))
            best = optimal_interval_s(model.goodput_frac, lower_s=widest, upper_s=inputs.run_s)
            result[rows] = model.goodput_fracs(np.clip(best, lower, run[rows]))
        return result

    def _run_s(self, ctx: ObjectiveContext, out: StepArrays) -> FloatArray:
        tokens = np.asarray(out.tokens_per_s, dtype=np.float64)
        if self.run_s is not None:
            return np.full(tokens.shape, self.run_s)
        # Floor of 1 token/s keeps the run finite for plans the search will discard anyway.
        run: FloatArray = ctx.token_budget / np.maximum(tokens, 1.0)
        return run

    def score(self, ctx: ObjectiveContext, plans: PlanBatch, out: StepArrays) -> FloatArray:
        result: FloatArray = out.tokens_per_s * self.goodput_fracs(ctx, plans, out)
        return result

    def display(self, score: float) -> float:
        return score


register_objective(NAME, GoodputTokensPerSecond)
