"""Shared shape of placement policies: a Protocol, a base class with the common mechanics, and
the registry by name.

A placement policy answers one question: given the cluster's free capacity and one request,
which node(s) and GPU slots does the job get (or ``None``: nothing fits now). Single-node
requests are scored node by node over numpy arrays (lower score is better; ties go to a random
but fixed node order drawn from the run's seed, so runs are repeatable). Requests for more GPUs
than one node holds become gangs of whole GPUs over several nodes. A request with a worker shape
or a topology level (``Request.shaped``, from the job table's gang columns) takes
:meth:`ScoredPlacement.place_shaped`, which every policy shares.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import ClassVar, Protocol

import numpy as np
import numpy.typing as npt

from scalewall.errors import SpecError
from scalewall.sched.cluster import GPU_MILLI, BoolArray, Cluster, IntArray, Placement
from scalewall.sched.jobs import JobTable, Request

FloatArray = npt.NDArray[np.float64]


class PlacementPolicy(Protocol):
    """Chooses where a job runs."""

    name: str

    def prepare(self, cluster: Cluster, jobs: JobTable | None, rng: np.random.Generator) -> None:
        """Called once before a run: learn the cluster and (optionally) the workload's mix."""

    def place(self, cluster: Cluster, request: Request) -> Placement | None:
        """Where ``request`` would run now, or ``None``; the caller allocates it."""

    def allocated(self, placement: Placement, request: Request) -> None:
        """Told after the caller allocated ``placement`` (policies with own state update it)."""

    def released(self, placement: Placement, request: Request) -> None:
        """Told after the caller released ``placement``."""


def feasible_nodes(cluster: Cluster, request: Request) -> BoolArray:
    """Nodes that can host the whole request alone: CPU, memory, GPU model and GPU capacity."""
    ok = cluster.schedulable & (cluster.cpu_free >= request.cpu_milli)
    if request.memory_bytes > 0:
        ok &= cluster.mem_free >= request.memory_bytes
    if request.num_gpu > 0:
        ok &= cluster.model_ok(request.model_mask)
        if request.gpu_milli >= GPU_MILLI:
            ok &= cluster.whole_free >= request.num_gpu
        else:
            fits = (cluster.gpu_free_milli >= request.gpu_milli).sum(axis=1)
            ok &= fits >= request.num_gpu
    return ok


def tightest_slots(cluster: Cluster, node: int, request: Request) -> tuple[int, ...]:
    """GPU slots for a single-node request: the fullest slots that still fit (best fit)."""
    if request.num_gpu == 0:
        return ()
    free = cluster.gpu_free_milli[node]
    key = np.where(free >= request.gpu_milli, free, GPU_MILLI + 1)
    order = np.argsort(key, kind="stable")[: request.num_gpu]
    return tuple(int(s) for s in order)


def single_node(node: int, slots: tuple[int, ...], request: Request) -> Placement:
    """A one-node :class:`Placement`."""
    return Placement(
        nodes=(node,),
        gpu_slots=(slots,),
        gpu_milli=request.gpu_milli,
        cpu_milli=(request.cpu_milli,),
        memory_bytes=(request.memory_bytes,),
    )


def fits_when_empty(fresh: Cluster, request: Request) -> bool:
    """True when ``request`` fits ``fresh`` (a cluster with every node free and schedulable,
    ``Cluster.copy_fresh``): on one node (CPU, memory, GPU model, GPU count), or as a gang of
    whole GPUs over nodes of its models. A request that fails this never starts, whatever the
    policies do."""
    if request.shaped:
        return _shaped_fits_when_empty(fresh, request)
    if needs_gang(fresh, request):
        if request.gpu_milli < GPU_MILLI:
            return False
        return int(ScoredPlacement().gang_capacity(fresh, request).sum()) >= request.num_gpu
    return bool(feasible_nodes(fresh, request).any())


def _shaped_fits_when_empty(fresh: Cluster, request: Request) -> bool:
    """:func:`fits_when_empty` for a shaped request: on one node (which keeps it within any
    level), or, with several workers of whole GPUs, as a gang of whole workers, within one
    group of its level when that level is required."""
    if request.num_gpu <= fresh.gpu_slots:
        if feasible_nodes(fresh, request).any():
            return True
        if request.workers <= 1:
            return False  # one worker, or no worker shape: a single-node job, as unshaped
    elif request.workers == 1:
        return False  # one worker needs more GPUs than any node has
    if request.gpu_milli < GPU_MILLI:
        return False
    cap = ScoredPlacement().gang_capacity(fresh, request)
    if request.topology_required:
        group = fresh.level_group(request.topology_level)
        return bool(np.bincount(group, weights=cap).max(initial=0) >= request.num_gpu)
    return int(cap.sum()) >= request.num_gpu


def needs_gang(cluster: Cluster, request: Request) -> bool:
    """True when the request asks for more GPUs than the largest node has."""
    return request.num_gpu > cluster.gpu_slots


class ScoredPlacement:
    """Base for policies that score candidate nodes; subclasses override :meth:`node_scores`."""

    name: ClassVar[str] = ""
    pure: ClassVar[bool] = True
    """``place`` is a function of the cluster's arrays and the request alone: no state kept
    from ``allocated``/``released``, no random draws (the engine then carries a reservation
    over a release it can predict instead of recomputing it)."""

    def __init__(self) -> None:
        self.rank: IntArray = np.zeros(0, dtype=np.int64)
        self.rng: np.random.Generator = np.random.default_rng(0)

    def prepare(self, cluster: Cluster, jobs: JobTable | None, rng: np.random.Generator) -> None:
        self.rng = rng
        self.rank = rng.permutation(cluster.num_nodes).astype(np.int64)

    def node_scores(self, cluster: Cluster, request: Request, cand: IntArray) -> FloatArray:
        """Score of each candidate node (lower is better)."""
        raise NotImplementedError

    def allocated(self, placement: Placement, request: Request) -> None:
        """No own state by default."""

    def released(self, placement: Placement, request: Request) -> None:
        """No own state by default."""

    def slots(self, cluster: Cluster, node: int, request: Request) -> tuple[int, ...]:
        """GPU slots on the chosen node."""
        return tightest_slots(cluster, node, request)

    def pick(self, cand: IntArray, scores: FloatArray) -> int:
        """The best-scoring candidate; ties go to the lowest rank in the run's node order."""
        best = scores.min()
        ties = cand[scores == best]
        return int(ties[np.argmin(self.rank[ties])])

    def place(self, cluster: Cluster, request: Request) -> Placement | None:
        if request.shaped:
            return self.place_shaped(cluster, request)
        if needs_gang(cluster, request):
            return self.place_gang(cluster, request)
        return self.place_node(cluster, request)

    def place_node(self, cluster: Cluster, request: Request) -> Placement | None:
        """The policy's single-node placement (the request fits one node's slot count)."""
        cand = np.flatnonzero(feasible_nodes(cluster, request))
        if cand.size == 0:
            return None
        node = self.pick(cand, self.node_scores(cluster, request, cand))
        return single_node(node, self.slots(cluster, node, request), request)

    def place_shaped(self, cluster: Cluster, request: Request) -> Placement | None:
        """A gang with a worker shape and/or a topology level, as Kueue's topology-aware
        scheduling places a pod set (https://kueue.sigs.k8s.io/docs/concepts/
        topology_aware_scheduling/): on one node when the policy finds one (all workers
        together satisfy every level); else whole workers over nodes, inside the tightest
        group of ``topology_level`` that holds the gang; when none does, a required level
        waits (``None``) and a preferred one spreads as the policy's ``place_gang`` does."""
        if request.num_gpu <= cluster.gpu_slots:
            found = self.place_node(cluster, request)
            if found is not None or request.workers <= 1:
                return found
        elif request.workers == 1:
            return None  # one worker needs more GPUs than any node has
        if request.gpu_milli < GPU_MILLI:
            return None
        cap = self.gang_capacity(cluster, request)
        need = request.num_gpu
        if int(cap.sum()) < need:
            return None
        if request.topology_level:
            group = cluster.level_group(request.topology_level)
            group_cap = np.bincount(group, weights=cap)
            fits = np.flatnonzero(group_cap >= need)
            if fits.size:
                best = int(fits[np.argmin(group_cap[fits])])
                cand = np.flatnonzero((group == best) & (cap > 0))
                return fill_gang(cluster, request, cap, self.gang_order(cluster, cap, cand, need))
            if request.topology_required:
                return None
        return self.place_gang(cluster, request)

    def gang_capacity(self, cluster: Cluster, request: Request) -> IntArray:
        """Whole free GPUs each node can give this gang, limited by its CPU and memory share;
        with a worker shape, whole workers only (each worker's GPUs on one node)."""
        if request.gpus_per_worker > 1:
            return self._worker_capacity(cluster, request)
        per_gpu_cpu = -(-request.cpu_milli // request.num_gpu)
        per_gpu_mem = -(-request.memory_bytes // request.num_gpu)
        cap = np.minimum(cluster.whole_free, cluster.cpu_free // max(per_gpu_cpu, 1))
        if per_gpu_mem > 0:
            cap = np.minimum(cap, cluster.mem_free // per_gpu_mem)
        ok = cluster.schedulable & cluster.model_ok(request.model_mask)
        return np.where(ok, cap, 0).astype(np.int64)

    def _worker_capacity(self, cluster: Cluster, request: Request) -> IntArray:
        """GPUs of the whole workers each node can host (CPU and memory split per worker)."""
        per = request.gpus_per_worker
        per_worker_cpu = -(-request.cpu_milli // request.workers)
        per_worker_mem = -(-request.memory_bytes // request.workers)
        fit = np.minimum(cluster.whole_free // per, cluster.cpu_free // max(per_worker_cpu, 1))
        if per_worker_mem > 0:
            fit = np.minimum(fit, cluster.mem_free // per_worker_mem)
        ok = cluster.schedulable & cluster.model_ok(request.model_mask)
        return np.where(ok, fit * per, 0).astype(np.int64)

    def gang_order(self, cluster: Cluster, cap: IntArray, cand: IntArray, need: int) -> IntArray:
        """The first nodes a gang of ``need`` GPUs fills, in order: most free GPUs first, then
        the run's node order. ``cand`` all have ``cap >= 1``, so ``need`` nodes always suffice
        and only that many are sorted (a partial sort, not a full one of 12,500 nodes)."""
        # rank is a permutation, so the combined key is unique and orders as (-cap, rank).
        key = -cap[cand] * max(self.rank.size, 1) + self.rank[cand]
        if need < cand.size:
            part = np.argpartition(key, need - 1)[:need]
            return cand[part[np.argsort(key[part])]]
        return cand[np.argsort(key)]

    def place_gang(self, cluster: Cluster, request: Request) -> Placement | None:
        cap = self.gang_capacity(cluster, request)
        if int(cap.sum()) < request.num_gpu:
            return None
        order = self.gang_order(cluster, cap, np.flatnonzero(cap), request.num_gpu)
        return fill_gang(cluster, request, cap, order)


_SLOT_TABLE_WIDTH = 16
"""Widest node whose slot sets are looked up by bit code (a table of 2**width tuples)."""


@functools.cache
def _slot_table(width: int) -> tuple[tuple[int, ...], ...]:
    """Slot tuple of every bit code over ``width`` slots, lowest slot first."""
    return tuple(tuple(s for s in range(width) if code >> s & 1) for code in range(1 << width))


def fill_gang(cluster: Cluster, request: Request, cap: IntArray, order: IntArray) -> Placement:
    """Take whole GPUs from nodes in ``order`` until the gang is complete: each node gives
    ``min(cap, still needed)``, its lowest-numbered whole free slots."""
    need = request.num_gpu
    caps = cap[order]
    # The first k nodes whose capacities reach the need; the last gives only the remainder.
    count = int(np.searchsorted(np.cumsum(caps), need)) + 1
    assert count <= caps.size, "the gang's nodes hold fewer GPUs than it needs"
    nodes = order[:count]
    take = caps[:count].copy()
    take[-1] -= int(take.sum()) - need
    whole = cluster.gpu_free_milli[nodes] >= GPU_MILLI
    chosen = whole & (np.cumsum(whole, axis=1) <= take[:, None])
    width = chosen.shape[1]
    if width <= _SLOT_TABLE_WIDTH:
        # Each node's chosen slots as a bit code, looked up in a table of slot tuples.
        codes = chosen @ (1 << np.arange(width, dtype=np.int64))
        slots = tuple(map(_slot_table(width).__getitem__, codes.tolist()))
    else:
        columns = np.nonzero(chosen)[1].tolist()
        bounds = np.concatenate([[0], np.cumsum(take)]).tolist()
        slots = tuple(tuple(columns[a:b]) for a, b in itertools.pairwise(bounds))
    cpu = -(-request.cpu_milli * take // need)
    mem = -(-request.memory_bytes * take // need)
    return Placement(
        nodes=tuple(nodes.tolist()),
        gpu_slots=slots,
        gpu_milli=GPU_MILLI,
        cpu_milli=tuple(cpu.tolist()),
        memory_bytes=tuple(mem.tolist()),
    )


_PLACEMENTS: dict[str, Callable[[], PlacementPolicy]] = {}


def register_placement(name: str) -> Callable[[type], type]:
    """Class decorator: make a placement policy available by ``name``."""

    def wrap(cls: type) -> type:
        _PLACEMENTS[name] = cls
        return cls

    return wrap


def placement_names() -> tuple[str, ...]:
    """Registered placement policy names."""
    return tuple(sorted(_PLACEMENTS))


def make_placement(name: str) -> PlacementPolicy:
    """A fresh placement policy by name; a :class:`SpecError` lists the valid names."""
    if name not in _PLACEMENTS:
        raise SpecError("placement", name, f"valid: {', '.join(placement_names())}")
    return _PLACEMENTS[name]()
