"""The FGD experiment on openb, as its authors ran it (Weng et al., USENIX ATC'23, Sec. 6.1).

Pods arrive one at a time, drawn with replacement from the pod list in a seeded random order,
until the GPUs they ask for reach ``max_demand_frac`` (130%) of the cluster's; nothing departs;
a pod that fits nowhere is dropped. After each 1% step of arrived GPU demand the GPU share in
use is recorded. Every policy sees the same arrival sequence for a given seed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scalewall.errors import SpecError
from scalewall.sched.cluster import GPU_MILLI, Cluster
from scalewall.sched.jobs import JobTable
from scalewall.sched.policies import make_placement

FGD_PAPER_POLICIES: tuple[str, ...] = (
    "random",
    "dotprod",
    "clustering",
    "packing",
    "bestfit",
    "fgd",
)
"""The paper's six schedulers, by our registry names (Random, DotProd, GpuClustering,
GpuPacking, BestFit, FGD)."""


@dataclass(frozen=True, kw_only=True)
class FgdExperimentConfig:
    """Knobs of the static-arrival experiment; defaults follow the paper."""

    max_demand_frac: float = 1.3
    """Stop when arrived GPU demand reaches this share of the cluster's GPUs (paper: 130%)."""
    step_frac: float = 0.01
    """Record allocation at each step of arrived demand (paper: 1%)."""
    seeds: tuple[int, ...] = tuple(range(10))
    """Random seeds (paper: 10 repetitions)."""

    def __post_init__(self) -> None:
        if not 0 < self.max_demand_frac <= MAX_DEMAND_FRAC:
            raise SpecError(
                "max_demand_frac", self.max_demand_frac, f"a share in (0, {MAX_DEMAND_FRAC:g}]"
            )
        if not 0 < self.step_frac <= self.max_demand_frac:
            raise SpecError("step_frac", self.step_frac, "a share in (0, max_demand_frac]")
        if any(seed < 0 for seed in self.seeds):
            raise SpecError("seeds", self.seeds, "non-negative integers")


MAX_DEMAND_FRAC = 10.0
"""Largest arrived demand the experiment draws to (the paper stops at 1.3); a bound on its time."""


def arrival_order(jobs: JobTable, total_gpus: int, seed: int, max_demand_frac: float) -> np.ndarray:
    """Pod rows drawn with replacement until their GPU demand reaches the target."""
    rng = np.random.default_rng(seed)
    demand = jobs.gpu_demand
    if demand.sum() <= 0:
        raise SpecError("trace", "no GPU demand", "the FGD experiment needs pods that ask for GPUs")
    target = max_demand_frac * total_gpus
    rows: list[np.ndarray] = []
    arrived = 0.0
    batch = max(16, int(2 * target / max(float(demand.mean()), 1e-9)) // 4)
    while arrived < target:
        draw = rng.integers(0, len(jobs), size=batch)
        cum = arrived + np.cumsum(demand[draw])
        stop = int(np.searchsorted(cum, target, side="left"))
        if stop < batch:
            rows.append(draw[: stop + 1])
            break
        rows.append(draw)
        arrived = float(cum[-1])
    return np.concatenate(rows)


def run_fgd_once(
    cluster: Cluster, jobs: JobTable, policy: str, seed: int, config: FgdExperimentConfig
) -> pd.DataFrame:
    """One policy, one seed: allocation at each demand step (columns ``demand_frac``,
    ``alloc_frac``, ``placed``, ``failed``)."""
    state = cluster.copy_fresh()
    placement = make_placement(policy)
    placement.prepare(state, jobs, np.random.default_rng([seed, 1]))
    requests = jobs.requests(state)
    total_milli = state.total_gpus * GPU_MILLI
    steps = round(config.max_demand_frac / config.step_frac)
    demand = jobs.num_gpu * jobs.gpu_milli
    out_alloc = np.zeros(steps)
    placed = failed = 0
    out_placed = np.zeros(steps, dtype=np.int64)
    out_failed = np.zeros(steps, dtype=np.int64)
    arrived = 0
    next_step = 1
    for row in arrival_order(jobs, state.total_gpus, seed, config.max_demand_frac):
        request = requests[row]
        where = placement.place(state, request)
        if where is None:
            failed += 1
        else:
            state.allocate(where)
            placement.allocated(where, request)
            placed += 1
        arrived += int(demand[row])
        while next_step <= steps and arrived >= next_step * config.step_frac * total_milli:
            out_alloc[next_step - 1] = state.allocated_gpu_milli() / total_milli
            out_placed[next_step - 1], out_failed[next_step - 1] = placed, failed
            next_step += 1
    return pd.DataFrame(
        {
            "policy": policy,
            "seed": seed,
            "demand_frac": np.round(np.arange(1, steps + 1) * config.step_frac, 6),
            "alloc_frac": out_alloc,
            "placed": out_placed,
            "failed": out_failed,
        }
    )


def fgd_experiment(
    cluster: Cluster,
    jobs: JobTable,
    *,
    policies: Sequence[str] = FGD_PAPER_POLICIES,
    config: FgdExperimentConfig | None = None,
    progress: Callable[[str, int], None] | None = None,
    executor: Any = None,
) -> pd.DataFrame:
    """Every policy x seed; one row per (policy, seed, demand step). ``executor`` (a
    ``sweep.Executor``; default: in this process) runs the (policy, seed) runs."""
    config = config or FgdExperimentConfig()
    for policy in policies:
        make_placement(policy)  # unknown names fail before any work
    tasks = [(cluster, jobs, p, s, config) for p in policies for s in config.seeds]
    frames: dict[tuple[str, int], pd.DataFrame] = {}
    runner = executor if executor is not None else _InProcess()
    for policy, seed, frame in runner.map_unordered(_fgd_task, tasks):
        frames[policy, seed] = frame
        if progress is not None:
            progress(policy, seed)
    # Policy x seed order, whatever order the executor finished them in.
    return pd.concat([frames[p, s] for p in policies for s in config.seeds], ignore_index=True)


_FgdTask = tuple[Cluster, JobTable, str, int, "FgdExperimentConfig"]


def _fgd_task(task: _FgdTask) -> tuple[str, int, pd.DataFrame]:
    cluster, jobs, policy, seed, config = task
    return policy, seed, run_fgd_once(cluster, jobs, policy, seed, config)


class _InProcess:
    def map_unordered(
        self, fn: Callable[[_FgdTask], tuple[str, int, pd.DataFrame]], tasks: Sequence[_FgdTask]
    ) -> Iterator[tuple[str, int, pd.DataFrame]]:
        return (fn(t) for t in tasks)


def fgd_summary(
    runs: pd.DataFrame,
    total_gpus: int,
    *,
    demand_frac: float = 1.0,
    baseline: str = "dotprod",
    target: str = "fgd",
) -> dict[str, object]:
    """Mean allocation per policy at ``demand_frac``, unallocated GPUs, and the target's
    reduction of unallocated GPUs against the baseline (at that step and the largest over
    steps up to it)."""
    at = runs[np.isclose(runs["demand_frac"], demand_frac)]
    mean_alloc = at.groupby("policy", sort=False)["alloc_frac"].mean()
    unalloc = (1.0 - mean_alloc) * total_gpus
    summary: dict[str, object] = {
        "demand_frac": demand_frac,
        "alloc_frac": {p: float(v) for p, v in mean_alloc.items()},
        "unallocated_gpus": {p: float(v) for p, v in unalloc.items()},
    }
    if baseline in unalloc and target in unalloc:
        curve = runs[runs["demand_frac"] <= demand_frac + 1e-9]
        means = curve.groupby(["policy", "demand_frac"])["alloc_frac"].mean().unstack(0)
        base_un = (1.0 - means[baseline]) * total_gpus
        tgt_un = (1.0 - means[target]) * total_gpus
        # Only steps where the baseline leaves at least one GPU idle give a meaningful ratio.
        valid = base_un >= 1.0
        ratio = (1.0 - tgt_un[valid] / base_un[valid]) if valid.any() else pd.Series([np.nan])
        summary["reduction_frac"] = float(1.0 - unalloc[target] / unalloc[baseline])
        summary["extra_gpus_in_use"] = float(unalloc[baseline] - unalloc[target])
        summary["max_reduction_frac"] = float(ratio.max())
    return summary
