"""FGD: fragmentation gradient descent (Weng et al., "Beware of Fragmentation: Scheduling
GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC'23).

The *target workload* M is the mix of typical requests m with popularity p_m (Sec. 3.2). The
fragmentation of node n measured by request m, F_n(m), is the free GPU capacity on n that m cannot
use: all of it when m cannot run on n at all (CPU short, wrong GPU model, too few GPUs with
enough free capacity, or m asks for no GPU), else the free capacity of the GPUs whose free share
is below m's per-GPU request. The node's fragmentation is F_n(M) = sum_m p_m F_n(m), and FGD puts
each request where (node, GPU) makes F_n(M) grow least (Sec. 4, Alg. 1).

As in the authors' simulator, F_n(m) looks at CPU and GPU only, and the typical requests are the
most popular shapes (CPU, GPUs, per-GPU share, GPU models) covering ``popularity_frac`` of the
jobs, renormalised. Also as there, the growth is ranked through the integer node score of a
Kubernetes score plugin, ``floor(100 * sigmoid(-growth / 1 GPU))`` (:func:`node_score`): growths
closer than one score step tie, and ties go to the run's node order. Ranking the exact growths
instead (measured, 3 seeds, unallocated GPUs at 100% demand) left 1,149 idle on gpushare100
against 831, 812 against 750 on gpuspec33 and 350 against 299 on the default workload.

Speed: the score of a request shape on a node depends only on the node's state (GPU model, free
CPU, memory and sorted per-GPU free capacity), so scores are cached per (state, shape) and a
placement only computes the states it has not seen, in one vectorised batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from scalewall.errors import SpecError
from scalewall.sched.cluster import GPU_MILLI, Cluster, IntArray, Placement
from scalewall.sched.jobs import JobTable, Request
from scalewall.sched.policies.base import (
    FloatArray,
    ScoredPlacement,
    register_placement,
    single_node,
)


@dataclass(frozen=True, kw_only=True, eq=False)
class TargetWorkload:
    """Typical requests m and their popularity p_m (sum 1), model lists resolved to masks."""

    cpu_milli: IntArray
    num_gpu: IntArray
    gpu_milli: IntArray
    model_mask: IntArray
    weight: FloatArray
    levels: IntArray
    """Distinct per-GPU requests (milli-GPU) among the typical requests."""
    level_of: IntArray
    """Index into ``levels`` of each typical request."""
    count: IntArray | None = None
    """Jobs of each typical request (``weight`` = count / sum). When given, F is summed in
    integers, so a node's score does not depend on which other nodes share its batch."""


def target_workload(jobs: JobTable, cluster: Cluster, *, popularity_frac: float) -> TargetWorkload:
    """The most popular request shapes (CPU, GPUs, per-GPU share, models) covering
    ``popularity_frac`` of the jobs, with their renormalised frequencies."""
    if not 0.0 < popularity_frac <= 1.0:
        raise SpecError("popularity_frac", popularity_frac, "must be in (0, 1]")
    frame = pd.DataFrame(
        {
            "cpu": jobs.cpu_milli,
            "num": jobs.num_gpu,
            "milli": jobs.gpu_milli,
            "models": list(jobs.gpu_models),
        }
    )
    counts = frame.value_counts(sort=False).reset_index(name="count")
    counts = counts.sort_values(
        ["count", "cpu", "num", "milli", "models"],
        ascending=[False, True, True, True, True],
        kind="stable",
    )
    cum = counts["count"].cumsum().to_numpy() / len(frame)
    keep = int(np.searchsorted(cum, popularity_frac - 1e-12)) + 1
    top = counts.iloc[:keep]
    weight = top["count"].to_numpy(np.float64)
    milli = top["milli"].to_numpy(np.int64)
    levels, level_of = np.unique(milli, return_inverse=True)
    return TargetWorkload(
        cpu_milli=top["cpu"].to_numpy(np.int64),
        num_gpu=top["num"].to_numpy(np.int64),
        gpu_milli=milli,
        model_mask=np.array([cluster.model_mask(m) for m in top["models"]], dtype=np.int64),
        weight=weight / weight.sum(),
        levels=levels.astype(np.int64),
        level_of=level_of.astype(np.int64),
        count=top["count"].to_numpy(np.int64),
    )


def node_fragmentation(
    free: IntArray, cpu: IntArray, model_bit: IntArray, target: TargetWorkload
) -> FloatArray:
    """F_n(M) for each row of ``free`` (states x GPU slots, milli-GPU), in milli-GPU.

    Written as F = total - sum_m p_m [m usable] * (free capacity on GPUs with room for m).
    """
    total = free.sum(axis=1)
    fits = free[:, None, :] >= target.levels[None, :, None]
    fit_count = fits.sum(axis=2)[:, target.level_of]
    fit_free = np.einsum("sg,sug->su", free, fits)[:, target.level_of]
    usable = (cpu[:, None] >= target.cpu_milli) & (fit_count >= target.num_gpu)
    usable &= (model_bit[:, None] & target.model_mask) != 0
    usable &= target.gpu_milli > 0
    if target.count is not None:
        # Exact integer sum, one rounding per node: equal states score equal bit for bit.
        return np.asarray(total - (usable * fit_free) @ target.count / int(target.count.sum()))
    return np.asarray(total - (usable * fit_free) @ target.weight)


def node_score(delta: FloatArray) -> FloatArray:
    """The authors' node score as a cost (lower is better): ``-floor(100 * sigmoid(-delta /
    1000))`` for a growth ``delta`` of F_n(M) in milli-GPU. Growths within one score step
    (about 40 milli-GPU near zero) tie, and so do cuts of more than about 4.6 GPUs; ties go to
    the run's node order, which consolidates work where the measure sees no difference."""
    x = np.clip(delta / GPU_MILLI, -50.0, 50.0)
    return np.asarray(-np.floor(100.0 / (1.0 + np.exp(x))))


@register_placement("fgd")
class FgdPlacement(ScoredPlacement):
    """Least growth of expected fragmentation, over nodes and GPUs."""

    name = "fgd"
    popularity_frac: ClassVar[float] = 1.0
    """Typical requests cover this share of jobs. The authors' run scripts pass 95% (their
    simulator's built-in default is 60%); on openb anything below 1.0 drops the rare 4- and
    8-GPU shapes from M, and FGD then strands them early (measured: 23 of them fail before 90%
    demand at 0.95, none at 1.0; at 0.95, 3 seeds, cpu250 leaves 1,021 GPUs idle against 486)."""

    def prepare(self, cluster: Cluster, jobs: JobTable | None, rng: np.random.Generator) -> None:
        super().prepare(cluster, jobs, rng)
        if jobs is None:
            raise SpecError("jobs", None, "FGD needs the workload to learn its typical requests")
        self.target = target_workload(jobs, cluster, popularity_frac=self.popularity_frac)
        self.num_shapes = jobs.num_shapes
        self.keys: dict[tuple[int, ...], int] = {}
        width = cluster.gpu_slots
        self.st_free = np.zeros((64, width), dtype=np.int64)
        self.st_cpu = np.zeros(64, dtype=np.int64)
        self.st_mem = np.zeros(64, dtype=np.int64)
        self.st_bit = np.zeros(64, dtype=np.int64)
        self.st_ok = np.zeros(64, dtype=bool)
        self.st_frag = np.full(64, np.nan)
        self.delta = np.full((64, self.num_shapes), np.nan)
        self.choice = np.zeros((64, self.num_shapes), dtype=np.int64)
        self.node_state = np.full(cluster.num_nodes, -1, dtype=np.int64)
        self.seen = np.full(cluster.num_nodes, -1, dtype=np.int64)

    def _intern(self, cluster: Cluster, node: int) -> int:
        free = np.sort(cluster.gpu_free_milli[node])
        key = (
            int(cluster.model_bit[node]),
            int(cluster.cpu_free[node]),
            int(cluster.mem_free[node]),
            int(cluster.schedulable[node]),
            *free.tolist(),
        )
        sid = self.keys.get(key)
        if sid is None:
            sid = len(self.keys)
            self.keys[key] = sid
            if sid == self.st_cpu.size:
                self._grow()
            self.st_free[sid] = free
            self.st_cpu[sid] = key[1]
            self.st_mem[sid] = key[2]
            self.st_bit[sid] = key[0]
            self.st_ok[sid] = bool(key[3])
        return sid

    def _grow(self) -> None:
        n = self.st_cpu.size
        self.st_free = np.concatenate([self.st_free, np.zeros_like(self.st_free)])
        self.st_cpu, self.st_mem, self.st_bit = (
            np.concatenate([a, np.zeros(n, np.int64)])
            for a in (self.st_cpu, self.st_mem, self.st_bit)
        )
        self.st_ok = np.concatenate([self.st_ok, np.zeros(n, bool)])
        self.st_frag = np.concatenate([self.st_frag, np.full(n, np.nan)])
        self.delta = np.concatenate([self.delta, np.full_like(self.delta, np.nan)])
        self.choice = np.concatenate([self.choice, np.zeros_like(self.choice)])

    def _refresh(self, cluster: Cluster) -> None:
        for node in np.flatnonzero(cluster.version != self.seen):
            self.node_state[node] = self._intern(cluster, int(node))
            self.seen[node] = cluster.version[node]

    def _score_states(self, sids: IntArray, request: Request) -> None:
        """Fill ``delta`` and ``choice`` for states ``sids`` and the request's shape."""
        free, cpu, bit = self.st_free[sids], self.st_cpu[sids], self.st_bit[sids]
        ok = self.st_ok[sids] & (cpu >= request.cpu_milli)
        ok &= self.st_mem[sids] >= request.memory_bytes
        if request.num_gpu:
            ok &= (bit & request.model_mask) != 0
            ok &= (free >= request.gpu_milli).sum(axis=1) >= request.num_gpu
        before = self.st_frag[sids]
        unknown = np.isnan(before)
        if unknown.any():
            before[unknown] = node_fragmentation(
                free[unknown], cpu[unknown], bit[unknown], self.target
            )
            self.st_frag[sids[unknown]] = before[unknown]
        cpu_after = cpu - request.cpu_milli
        choice = np.full(sids.size, -1, dtype=np.int64)
        if request.num_gpu == 0:
            delta = node_fragmentation(free, cpu_after, bit, self.target) - before
        elif request.gpu_milli < GPU_MILLI:
            delta, choice = self._share_delta(free, cpu_after, bit, before, request.gpu_milli)
        else:
            after = free.copy()
            after[:, free.shape[1] - request.num_gpu :] = 0  # sorted: whole free GPUs come last
            delta = node_fragmentation(after, cpu_after, bit, self.target) - before
        self.delta[sids, request.shape_id] = np.where(ok, delta, np.inf)
        self.choice[sids, request.shape_id] = choice

    def _share_delta(
        self, free: IntArray, cpu_after: IntArray, bit: IntArray, before: FloatArray, milli: int
    ) -> tuple[FloatArray, IntArray]:
        k, width = free.shape
        # Rows are sorted, so equal slots are adjacent and give the same after-state: score
        # only the first slot of each run of equal values that has room (about a third of
        # the slots on openb). Ties still go to the lowest slot, as with all slots scored.
        first = np.ones_like(free, dtype=bool)
        first[:, 1:] = free[:, 1:] != free[:, :-1]
        rows, slots = np.nonzero(first & (free >= milli))
        after = free[rows].copy()
        after[np.arange(rows.size), slots] -= milli
        frag = np.full((k, width), np.inf)
        frag[rows, slots] = node_fragmentation(after, cpu_after[rows], bit[rows], self.target)
        best = np.argmin(frag, axis=1)
        rows = np.arange(k)
        return frag[rows, best] - before, free[rows, best]

    def place_node(self, cluster: Cluster, request: Request) -> Placement | None:
        self._refresh(cluster)
        sids = self.node_state
        scores = self.delta[sids, request.shape_id]
        missing = np.isnan(scores)
        if missing.any():
            self._score_states(np.unique(sids[missing]), request)
            scores = self.delta[sids, request.shape_id]
        cand = np.flatnonzero(np.isfinite(scores))
        if cand.size == 0:
            return None
        node = self.pick(cand, node_score(scores[cand]))
        return single_node(node, self._slots(cluster, node, request), request)

    def _slots(self, cluster: Cluster, node: int, request: Request) -> tuple[int, ...]:
        free = cluster.gpu_free_milli[node]
        if request.num_gpu == 0:
            return ()
        if request.gpu_milli < GPU_MILLI:
            value = self.choice[self.node_state[node], request.shape_id]
            return (int(np.flatnonzero(free == value)[0]),)
        return tuple(int(s) for s in np.flatnonzero(free >= GPU_MILLI)[: request.num_gpu])
