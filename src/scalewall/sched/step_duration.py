"""A :class:`~scalewall.sched.duration.DurationModel` backed by the step model.

The trace's run time is taken as the run time on a compact placement. The step model
(``scalewall.api.estimate``) prices one training step twice, on the same catalog cluster sized
to the job's GPUs: once as the catalog lays it out (compact), once with each tier's span cut to
the GPUs the job actually has inside one unit of that tier (GPUs per scale-up domain, per rack,
per pod). A job spread over more domains, racks or pods then sends more of its collectives over
slower tiers, and

    run_time_s = base_run_s * step_time_s(placed) / step_time_s(compact).

Only ``scalewall.api`` is used, and lazily: the scheduler core never imports the step model.
The per-unit GPU count is the mean over the units used (an uneven 8 + 8 + 2 split counts as
6 per unit), and the parallel plan is a fixed rule (TP inside a node, DP across nodes), so the
figure is a stretch factor for scheduling studies, not a per-job prediction.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scalewall.errors import SpecError
from scalewall.sched.cluster import GPU_MILLI
from scalewall.sched.duration import JobView, PlacementSummary

Estimator = Callable[[str, Any, Any], float]
"""(model id, step-model cluster, parallel plan) -> step time in seconds."""


def _step_time_s(model: str, cluster: Any, plan: Any) -> float:
    from scalewall.api import estimate

    return float(estimate(model, cluster, plan).step_time_s)


@dataclass(frozen=True, kw_only=True)
class StepModelDuration:
    """Run time stretched by the step model's slowdown on the job's placement."""

    model: str = "llama3-8b"
    """Catalog model every GPU job is taken to train (``scalewall catalog models``)."""
    cluster: str = "h100-16k-ndr"
    """Catalog cluster whose system and network tiers price the steps."""
    seq_len: int = 4096
    """Tokens per sequence of the assumed plan."""
    microbatches_per_replica: int = 8
    """Global batch = DP x this (one sequence per micro-batch)."""
    estimator: Estimator = _step_time_s
    """Step-time function; the step model by default (tests pass a stand-in)."""
    _cache: dict[tuple[int, tuple[int, ...]], float] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _resolved: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def run_time_s(self, job: JobView, placement: PlacementSummary) -> float:
        if job.num_gpu < 1 or job.gpu_milli < GPU_MILLI or job.base_run_s <= 0:
            return job.base_run_s  # CPU-only or a shared GPU: no collectives to stretch
        full = self._catalog_cluster()
        n = job.num_gpu
        units = (placement.num_domains, placement.num_racks, placement.num_pods)
        spans = tuple(max(n // max(u, 1), 1) for u in units)
        compact = self._step_s(full, n, ())
        placed = self._step_s(full, n, spans)
        if not (math.isfinite(compact) and math.isfinite(placed)) or compact <= 0:
            return job.base_run_s
        return job.base_run_s * max(placed / compact, 1.0)

    def _catalog_cluster(self) -> Any:
        if self.cluster not in self._resolved:
            from scalewall.cluster import resolve_cluster

            self._resolved[self.cluster] = resolve_cluster(self.cluster)
        return self._resolved[self.cluster]

    def _step_s(self, full: Any, n: int, spans: tuple[int, ...]) -> float:
        """Step time of an ``n``-GPU job; ``spans`` caps the scale-up, first and second
        scale-out tiers (empty: the catalog's spans, a compact placement)."""
        key = (n, spans)
        if key not in self._cache:
            self._cache[key] = self._estimate(full, n, spans)
        return self._cache[key]

    def _estimate(self, full: Any, n: int, spans: tuple[int, ...]) -> float:
        tiers = list(full.tiers)
        capped = [i for i, t in enumerate(tiers) if t.scale_up][:1]
        capped += [i for i, t in enumerate(tiers) if not t.scale_up][:2]
        floor = 1
        for level, i in enumerate(capped):
            if level < len(spans):
                span = max(min(tiers[i].span_gpus, spans[level]), floor)
                tiers[i] = dataclasses.replace(tiers[i], span_gpus=span)
            floor = tiers[i].span_gpus
        sized = dataclasses.replace(full, num_gpus=n, tiers=tuple(tiers))
        from scalewall.plan import ParallelPlan

        tp = math.gcd(n, full.system.gpus_per_node)
        dp = n // tp
        plan = ParallelPlan(
            tp=tp,
            dp=dp,
            micro_batch=1,
            global_batch=dp * self.microbatches_per_replica,
            seq_len=self.seq_len,
        )
        try:
            return self.estimator(self.model, sized, plan)
        except SpecError:
            return math.nan  # no valid plan of this shape: the job keeps its trace run time
