"""Cluster state for the scheduler simulator: per-node capacity as numpy arrays.

A cluster is a set of nodes. Each node has CPU (milli-cores), memory (bytes) and up to
``max_gpus_per_node`` GPUs of one model, whose free capacity is tracked in milli-GPU (1000 = one
whole GPU) so that GPU-sharing pods (a fraction of one GPU, as in Alibaba's openb trace) and
whole-GPU gang jobs use the same arrays. Nodes sit in a topology tree: scale-up domain (an 8-GPU
node's NVLink island, or an NVL72 rack) -> rack/leaf -> pod/spine.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from scalewall.errors import SpecError

GPU_MILLI = 1000
"""Capacity of one whole GPU in milli-GPU, the unit of ``gpu_milli`` in openb (Weng et al. 2023)."""

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

TOPOLOGY_LEVELS: tuple[str, ...] = ("", "node", "domain", "rack", "pod")
"""Topology levels a job can ask its gang to stay within, innermost first (code = index; ""
means no level). ``Cluster.level_group`` gives each node's group at a level."""


@dataclass(frozen=True, kw_only=True)
class NodeSpec:
    """One node as read from a node list or made by a synthetic spec."""

    name: str
    """Node name, unique in the cluster."""
    cpu_milli: int
    """CPU capacity in milli-cores (1000 = one core)."""
    memory_bytes: int
    """Host memory capacity in bytes."""
    num_gpus: int
    """GPUs on the node (0 for a CPU-only node)."""
    gpu_model: str = ""
    """GPU model name, e.g. ``V100M32``; empty when the node has no GPU."""
    rack: int = 0
    """Rack / leaf-switch index."""
    pod: int = 0
    """Pod / spine-block index."""
    domain: int = -1
    """Scale-up domain index (an NVLink island); -1 means the node is its own domain."""


_VECTOR_NODES = 8
"""Placements over more nodes than this are applied in numpy (a per-slot Python loop costs
about a microsecond a slot; numpy's fixed cost is some tens)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Placement:
    """Where a job runs: per node used, its GPU slots and the CPU and memory taken there."""

    nodes: tuple[int, ...]
    gpu_slots: tuple[tuple[int, ...], ...]
    gpu_milli: int
    """Taken from each listed slot (1000 for whole GPUs)."""
    cpu_milli: tuple[int, ...]
    memory_bytes: tuple[int, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class ClusterSnapshot:
    """A cluster's free capacity at one moment (``Cluster.snapshot``)."""

    gpu_free_milli: IntArray
    cpu_free: IntArray
    mem_free: IntArray
    node_free_milli: IntArray
    whole_free: IntArray
    generation: int


@dataclass(frozen=True, kw_only=True)
class SyntheticClusterSpec:
    """A regular cluster: ``num_nodes`` identical nodes in racks, pods and scale-up domains."""

    num_nodes: int
    """Number of nodes."""
    gpus_per_node: int = 8
    """GPUs per node (8 for an HGX/DGX board)."""
    gpu_model: str = "H100"
    """GPU model name of every node."""
    cpu_milli_per_node: int = 224_000
    """CPU per node in milli-cores (DGX H100: 2 x 56-core Xeon 8480C = 112 cores, 224 threads)."""
    memory_bytes_per_node: int = 2 * 2**40
    """Host memory per node (DGX H100: 2 TiB)."""
    nodes_per_rack: int = 4
    """Nodes per rack / leaf group (a DGX SuperPOD scalable unit uses 4 DGX per rack)."""
    racks_per_pod: int = 8
    """Racks per pod / spine block."""
    nodes_per_domain: int = 1
    """Nodes per scale-up domain: 1 for 8-GPU NVLink nodes, 18 for an NVL72 rack (18 x 4 GPUs)."""


@dataclass(kw_only=True, eq=False)
class Cluster:
    """Mutable cluster state. Arrays are indexed by node; ``gpu_free_milli`` by (node, GPU slot).

    Slots beyond a node's GPU count hold 0 free capacity, so sums and ``>=`` tests need no mask.
    """

    names: list[str]
    model_names: tuple[str, ...]
    node_model: IntArray
    cpu_cap: IntArray
    mem_cap: IntArray
    gpu_count: IntArray
    rack: IntArray
    pod: IntArray
    domain: IntArray
    cpu_free: IntArray = field(init=False)
    mem_free: IntArray = field(init=False)
    gpu_free_milli: IntArray = field(init=False)
    schedulable: BoolArray = field(init=False)
    """False while a node is down, isolated, or held as a spare."""
    version: IntArray = field(init=False)
    """Bumped on every change to a node, so policies can cache per-node work."""
    model_bit: IntArray = field(init=False)
    """``1 << node_model`` (0 for CPU-only nodes), to test a request's model mask."""
    node_free_milli: IntArray = field(init=False)
    """Free GPU capacity per node (row sums of ``gpu_free_milli``), kept up to date on every
    change so that scoring a 12,500-node cluster reads one value per node, not eight."""
    whole_free: IntArray = field(init=False)
    """Whole free GPUs per node (slots with all ``GPU_MILLI`` free), kept up to date likewise."""
    max_cpu_milli: int = field(init=False)
    """Largest node CPU capacity (a normaliser for scores)."""
    generation: int = field(init=False, default=0)
    """Bumped on every change to any node: a placement that failed at one generation fails
    again until it changes (the engine's per-shape feasibility cache keys on it)."""

    def __post_init__(self) -> None:
        n = len(self.names)
        width = max(1, int(self.gpu_count.max(initial=0)))
        self.cpu_free = self.cpu_cap.copy()
        self.mem_free = self.mem_cap.copy()
        slots = np.arange(width)[None, :] < self.gpu_count[:, None]
        self._gpu_cap_milli = np.where(slots, GPU_MILLI, 0).astype(np.int64)
        self.gpu_free_milli = self._gpu_cap_milli.copy()
        self.schedulable = np.ones(n, dtype=bool)
        self.version = np.zeros(n, dtype=np.int64)
        self.model_bit = np.where(self.node_model >= 0, 1 << np.maximum(self.node_model, 0), 0)
        self.node_free_milli = self.gpu_free_milli.sum(axis=1)
        self.whole_free = self.gpu_count.copy()
        self.max_cpu_milli = int(self.cpu_cap.max(initial=0))
        self._model_ok: dict[int, BoolArray] = {}

    def allocate(self, placement: Placement) -> None:
        """Take the resources of ``placement``; over-allocation is a bug, so it asserts."""
        self._apply(placement, -1)

    def release(self, placement: Placement) -> None:
        """Give back the resources of ``placement``."""
        self._apply(placement, +1)

    def _apply(self, placement: Placement, sign: int) -> None:
        if len(placement.nodes) > _VECTOR_NODES:
            self._apply_many(placement, sign)
            return
        step = sign * placement.gpu_milli
        free = self.gpu_free_milli
        for node, slots, cpu, mem in zip(
            placement.nodes,
            placement.gpu_slots,
            placement.cpu_milli,
            placement.memory_bytes,
            strict=True,
        ):
            self.cpu_free[node] += sign * cpu
            self.mem_free[node] += sign * mem
            whole = 0
            for slot in slots:
                before = int(free[node, slot])
                after = before + step
                assert 0 <= after <= GPU_MILLI
                free[node, slot] = after
                whole += (after == GPU_MILLI) - (before == GPU_MILLI)
            self.node_free_milli[node] += step * len(slots)
            self.whole_free[node] += whole
            self.version[node] += 1
            assert self.cpu_free[node] >= 0 and self.mem_free[node] >= 0
        self.generation += 1

    def _apply_many(self, placement: Placement, sign: int) -> None:
        """:meth:`_apply` in numpy for a placement over many nodes (a placement lists each node
        once, so fancy-indexed ``+=`` adds once per node)."""
        nodes = np.array(placement.nodes, dtype=np.int64)
        counts = np.fromiter((len(s) for s in placement.gpu_slots), np.int64, nodes.size)
        rows = np.repeat(nodes, counts)
        cols = np.fromiter((c for s in placement.gpu_slots for c in s), np.int64, rows.size)
        before = self.gpu_free_milli[rows, cols]
        after = before + sign * placement.gpu_milli
        assert ((after >= 0) & (after <= GPU_MILLI)).all()
        self.gpu_free_milli[rows, cols] = after
        gained = (after == GPU_MILLI).astype(np.int64) - (before == GPU_MILLI)
        self.whole_free[nodes] += np.bincount(rows, gained, self.num_nodes)[nodes].astype(np.int64)
        self.node_free_milli[nodes] += sign * placement.gpu_milli * counts
        self.cpu_free[nodes] += sign * np.array(placement.cpu_milli, dtype=np.int64)
        self.mem_free[nodes] += sign * np.array(placement.memory_bytes, dtype=np.int64)
        self.version[nodes] += 1
        assert (self.cpu_free[nodes] >= 0).all() and (self.mem_free[nodes] >= 0).all()
        self.generation += 1

    def snapshot(self) -> ClusterSnapshot:
        """The free capacity now, for :meth:`restore` after a probe."""
        return ClusterSnapshot(
            gpu_free_milli=self.gpu_free_milli.copy(),
            cpu_free=self.cpu_free.copy(),
            mem_free=self.mem_free.copy(),
            node_free_milli=self.node_free_milli.copy(),
            whole_free=self.whole_free.copy(),
            generation=self.generation,
        )

    def restore(self, snapshot: ClusterSnapshot) -> None:
        """Put back the free capacity of ``snapshot``. Nodes whose capacity differs from it
        move to a new version, as after a release and re-allocation, so per-node caches
        refresh; the generation is the snapshot's, since the state is."""
        changed = (self.cpu_free != snapshot.cpu_free) | (self.mem_free != snapshot.mem_free)
        changed |= (self.gpu_free_milli != snapshot.gpu_free_milli).any(axis=1)
        np.copyto(self.gpu_free_milli, snapshot.gpu_free_milli)
        np.copyto(self.cpu_free, snapshot.cpu_free)
        np.copyto(self.mem_free, snapshot.mem_free)
        np.copyto(self.node_free_milli, snapshot.node_free_milli)
        np.copyto(self.whole_free, snapshot.whole_free)
        self.version[changed] += 1
        self.generation = snapshot.generation

    def free_all(self) -> None:
        """Every node's capacity free, as when every running placement is released."""
        changed = (self.cpu_free != self.cpu_cap) | (self.mem_free != self.mem_cap)
        changed |= self.node_free_milli != self.gpu_count * GPU_MILLI
        np.copyto(self.gpu_free_milli, self._gpu_cap_milli)
        np.copyto(self.cpu_free, self.cpu_cap)
        np.copyto(self.mem_free, self.mem_cap)
        np.copyto(self.node_free_milli, self.gpu_count * GPU_MILLI)
        np.copyto(self.whole_free, self.gpu_count)
        self.version[changed] += 1
        self.generation += 1

    def apply_many(self, placements: list[Placement], sign: int) -> None:
        """Release (``sign`` +1) or allocate (-1) several placements in one numpy pass (slot
        updates summed per slot, so placements sharing a slot add up)."""
        if not placements:
            return
        nodes = np.fromiter((n for p in placements for n in p.nodes), np.int64)
        counts = np.fromiter((len(s) for p in placements for s in p.gpu_slots), np.int64)
        steps = np.fromiter(
            (p.gpu_milli for p in placements for _ in p.nodes), np.int64, nodes.size
        )
        rows = np.repeat(nodes, counts)
        cols = np.fromiter((c for p in placements for s in p.gpu_slots for c in s), np.int64)
        np.add.at(self.gpu_free_milli, (rows, cols), sign * np.repeat(steps, counts))
        cpu = np.fromiter((c for p in placements for c in p.cpu_milli), np.int64, nodes.size)
        mem = np.fromiter((m for p in placements for m in p.memory_bytes), np.int64, nodes.size)
        np.add.at(self.cpu_free, nodes, sign * cpu)
        np.add.at(self.mem_free, nodes, sign * mem)
        touched = np.unique(nodes)
        free = self.gpu_free_milli[touched]
        assert ((free >= 0) & (free <= GPU_MILLI)).all(), "a slot over- or under-booked"
        assert (self.cpu_free[touched] >= 0).all() and (self.mem_free[touched] >= 0).all()
        self.node_free_milli[touched] = free.sum(axis=1)
        self.whole_free[touched] = (free == GPU_MILLI).sum(axis=1)
        self.version[touched] += 1
        self.generation += 1

    def model_ok(self, mask: int) -> BoolArray:
        """Nodes whose GPU model is in ``mask`` (cached per mask; the models never change)."""
        ok = self._model_ok.get(mask)
        if ok is None:
            ok = (self.model_bit & mask) != 0
            self._model_ok[mask] = ok
        return ok

    def check_aggregates(self) -> None:
        """The per-node aggregates agree with the slot array (an internal invariant)."""
        assert np.array_equal(self.node_free_milli, self.gpu_free_milli.sum(axis=1))
        assert np.array_equal(self.whole_free, (self.gpu_free_milli == GPU_MILLI).sum(axis=1))

    def set_schedulable(self, node: int, value: bool) -> None:
        """Mark a node (un)schedulable: down, isolated or spare nodes take no new work."""
        self.schedulable[node] = value
        self.version[node] += 1
        self.generation += 1

    def set_schedulable_many(self, nodes: IntArray, value: bool) -> None:
        """:meth:`set_schedulable` for many nodes at once."""
        self.schedulable[nodes] = value
        self.version[nodes] += 1
        self.generation += 1

    def level_group(self, level: int) -> IntArray:
        """Each node's group id at ``TOPOLOGY_LEVELS[level]``: itself, its scale-up domain,
        rack or pod."""
        if level == 1:
            return np.arange(self.num_nodes, dtype=np.int64)
        return (self.domain, self.rack, self.pod)[level - 2]

    @property
    def num_nodes(self) -> int:
        return len(self.names)

    @property
    def total_gpus(self) -> int:
        return int(self.gpu_count.sum())

    @property
    def gpu_slots(self) -> int:
        return int(self.gpu_free_milli.shape[1])

    def model_mask(self, allowed: str) -> int:
        """Bit mask over ``model_names`` for a ``|``-separated model list; empty means any model."""
        if not allowed:
            return (1 << len(self.model_names)) - 1
        mask = 0
        for name in allowed.split("|"):
            if name in self.model_names:
                mask |= 1 << self.model_names.index(name)
        return mask

    def allocated_gpu_milli(self) -> int:
        """GPU capacity in use, in milli-GPU, over schedulable and unschedulable nodes alike."""
        return int(self.gpu_count.sum()) * GPU_MILLI - int(self.gpu_free_milli.sum())

    def copy_fresh(self) -> Cluster:
        """The same nodes with everything free and every node schedulable."""
        return Cluster(
            names=self.names,
            model_names=self.model_names,
            node_model=self.node_model,
            cpu_cap=self.cpu_cap,
            mem_cap=self.mem_cap,
            gpu_count=self.gpu_count,
            rack=self.rack,
            pod=self.pod,
            domain=self.domain,
        )


def cluster_from_nodes(nodes: list[NodeSpec]) -> Cluster:
    """Build a :class:`Cluster` from node specs (model ids in first-seen order)."""
    if not nodes:
        raise SpecError("nodes", 0, "a cluster needs at least one node")
    models: list[str] = []
    for node in nodes:
        if node.gpu_model and node.gpu_model not in models:
            models.append(node.gpu_model)
    ids = np.array([models.index(x.gpu_model) if x.gpu_model else -1 for x in nodes])
    domains = np.array([x.domain for x in nodes], dtype=np.int64)
    own = domains < 0
    domains[own] = domains.max(initial=-1) + 1 + np.arange(int(own.sum()))
    return Cluster(
        names=[x.name for x in nodes],
        model_names=tuple(models),
        node_model=ids.astype(np.int64),
        cpu_cap=np.array([x.cpu_milli for x in nodes], dtype=np.int64),
        mem_cap=np.array([x.memory_bytes for x in nodes], dtype=np.int64),
        gpu_count=np.array([x.num_gpus for x in nodes], dtype=np.int64),
        rack=np.array([x.rack for x in nodes], dtype=np.int64),
        pod=np.array([x.pod for x in nodes], dtype=np.int64),
        domain=domains,
    )


def synthetic_nodes(spec: SyntheticClusterSpec) -> list[NodeSpec]:
    """Node specs of a regular cluster, numbered rack by rack."""
    for name in (
        "num_nodes",
        "gpus_per_node",
        "nodes_per_rack",
        "racks_per_pod",
        "nodes_per_domain",
    ):
        value = getattr(spec, name)
        if value < (0 if name == "gpus_per_node" else 1):
            raise SpecError(name, value, "must be a positive integer")
    return [
        NodeSpec(
            name=f"node-{i:06d}",
            cpu_milli=spec.cpu_milli_per_node,
            memory_bytes=spec.memory_bytes_per_node,
            num_gpus=spec.gpus_per_node,
            gpu_model=spec.gpu_model if spec.gpus_per_node else "",
            rack=i // spec.nodes_per_rack,
            pod=i // (spec.nodes_per_rack * spec.racks_per_pod),
            domain=i // spec.nodes_per_domain,
        )
        for i in range(spec.num_nodes)
    ]


def synthetic_cluster(spec: SyntheticClusterSpec) -> Cluster:
    """A regular cluster from :class:`SyntheticClusterSpec`."""
    return cluster_from_nodes(synthetic_nodes(spec))
