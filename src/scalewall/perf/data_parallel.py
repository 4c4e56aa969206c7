"""Data-parallel communication: bucketed gradient reduction and parameter gather (ZeRO 0-2)
against the overlap window the pipeline schedule allows, ZeRO-3 / FSDP per-layer collectives,
the per-step synchronisation all-reduces, and the per-micro-batch gradient accumulation that
fills the buffer they reduce."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from scalewall.perf import collectives as coll
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.perf.batch import PRECISION, PlanBatch
from scalewall.perf.compute import FP32_BYTES
from scalewall.perf.layers import distinct_rows, per_row_constants
from scalewall.plan.topology import Cluster

FloatArray = NDArray[np.float64]

GRAD16_BYTES = 2.0
"""Bytes of a 16-bit (BF16/FP16) weight gradient as the backward pass writes it."""


def grad_accumulation_bytes(stack: Stack, precision: FloatArray) -> FloatArray:
    """HBM bytes per parameter per micro-batch that adding the micro-batch's weight gradients
    into the gradient buffer moves outside the GEMMs (``Stack.grad_accumulation``), counted
    from the kernels' reads and writes. ``fused``: none. ``hook``: read the 16-bit gradient,
    read and write the buffer (``grad_reduce_bytes`` each; 2 + 2 x 4 = 10 with Megatron-LM
    2021's FP32 buffer). ``autograd``: read both 16-bit addends, write the sum (6).
    ``deepspeed``: FP16 runs as ``autograd``; every other precision takes the BF16 optimizer's
    path, which casts the gradient to an FP32 temporary (read 2, write 4) and adds it into the
    FP32 buffer (read 4 + 4, write 4): 18."""
    sixteen = 3.0 * GRAD16_BYTES
    if stack.grad_accumulation == "hook":
        value = GRAD16_BYTES + 2.0 * stack.grad_reduce_bytes
    elif stack.grad_accumulation == "autograd":
        value = sixteen
    elif stack.grad_accumulation == "deepspeed":
        bf16 = GRAD16_BYTES + 4.0 * FP32_BYTES
        return np.where(precision == PRECISION["fp16"], sixteen, bf16)
    else:
        value = 0.0
    return np.full_like(precision, value, dtype=np.float64)


def dp_times(
    cluster: Cluster,
    p: PlanBatch,
    eff: Efficiency,
    stack: Stack,
    params_per_gpu: tuple[FloatArray, FloatArray],
    windows: tuple[FloatArray, FloatArray],
    layer_work: tuple[FloatArray, FloatArray, FloatArray],
    micro_batches: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """Exposed data-parallel communication per step: gradient reduction and parameter gather
    (ZeRO 0-2), and ZeRO-3 / FSDP's per-layer collectives, as two arrays.

    Replicated parameters reduce over DP x CP (ranks tp apart); routed experts over their own
    data-parallel group (tp cp dp / (ep etp) ranks, ep etp apart). Both overlap the first
    stage's compute: ``windows`` = (forward, backward) time of the stage per micro-batch, which
    ``schedule_exposed_s`` spreads over the schedule's chunks; ``layer_work`` = (layers of
    the stage, forward and backward time of the stage per micro-batch) for ZeRO-3."""
    dense, expert = params_per_gpu
    shard, replicas = shard_groups(p, stack)
    groups = [(shard, p.tp, dense)]
    expert_group = p.tp * p.cp * p.dp / (p.ep * p.etp)
    has_experts = bool(np.any(expert > 0))
    if has_experts:
        groups.append((expert_group, p.ep * p.etp, expert))
    t_fwd, _ = windows
    one, zero = np.ones_like(t_fwd), np.zeros_like(t_fwd)
    shared = SharedRows.of(p, eff, cluster)
    sharded_any, sharded_all = bool((p.zero >= 1).any()), bool((p.zero >= 1).all())
    # ZeRO-1 stacks that all-reduce the whole gradient before updating their shard.
    full_reduce = (p.zero == 1) & (stack.zero1_grad_reduce == "all-reduce")
    scatters = (p.zero >= 1) & ~full_reduce
    any_full = bool(np.any(full_reduce))
    per_layer = per_layer_sharding(p, stack)
    any_per_layer = bool(np.any(per_layer))
    # Counted only for batches with per-layer sharding (a search batch is often without).
    passes = fsdp_passes(p, stack, micro_batches) if any_per_layer else None
    grad = np.zeros_like(t_fwd)
    gather = np.zeros_like(t_fwd)
    # The last bucket's share of each: what stays exposed past an overlapped backward.
    grad_tail = np.zeros_like(t_fwd)
    gather_tail = np.zeros_like(t_fwd)
    fsdp = np.zeros_like(t_fwd)
    # Bytes each rank sends (= receives) in the ring collectives, for their HBM traffic.
    grad_bytes = np.zeros_like(t_fwd)
    gather_bytes = np.zeros_like(t_fwd)
    for index, (group, stride, params) in enumerate(groups):
        # One collective per bucket: each moves its share of the bytes and pays the latency.
        buckets = bucket_count(p, stack, params)
        grads = params * stack.grad_reduce_bytes
        values = params * stack.param_gather_bytes
        bucket_grads, bucket_values = grads / buckets, values / buckets
        # Plain data parallelism (ZeRO 0) all-reduces over every replica, sharded or not.
        whole = p.dp * p.cp if index == 0 else group
        # Only the collectives some row's ZeRO stage selects below (the others would be masked).
        allreduce = (
            zero
            if sharded_all and not any_full
            else shared(coll.allreduce_time_s, cluster, eff, whole, stride, bucket_grads)
        )
        reduce_scatter = (
            shared(coll.reduce_scatter_time_s, cluster, eff, group, stride, bucket_grads)
            if sharded_any
            else zero
        )
        all_gather = (
            shared(coll.allgather_time_s, cluster, eff, group, stride, bucket_values)
            if sharded_any
            else zero
        )
        mask = np.ones_like(t_fwd) if index == 0 else (params > 0) & (group > 1)
        # Hybrid sharding: the shards' gradients are all-reduced over the replicas, shard ranks
        # apart; 1 replica (plain ZeRO) costs nothing.
        rep, rep_stride = (replicas, p.tp * shard) if index == 0 else (one, one)
        hybrid = index == 0 and stack.zero_shard_ranks > 0
        across = zero
        if hybrid and sharded_any:
            across = shared(
                coll.allreduce_time_s, cluster, eff, rep, rep_stride, bucket_grads / group
            )
            across = np.where(rep > 1, across, 0.0)
        reduce = np.where(scatters, reduce_scatter + across, allreduce)
        grad = grad + np.where(mask, buckets * reduce, 0.0)
        gather = gather + np.where(mask, buckets * all_gather, 0.0)
        grad_tail = grad_tail + np.where(mask, reduce, 0.0)
        gather_tail = gather_tail + np.where(mask, all_gather, 0.0)
        if stack.overlap_grad_reduce or stack.overlap_param_gather:  # else never hidden
            ring = (group - 1.0) / group
            sent = np.where(scatters, ring * grads, 2.0 * (whole - 1.0) / whole * grads)
            grad_bytes = grad_bytes + np.where(mask, sent, 0.0)
            gather_bytes = gather_bytes + np.where(mask, ring * values, 0.0)
        if any_per_layer:
            layered = fsdp_exposed_s(
                cluster,
                eff,
                stack,
                (group, stride, params),
                layer_work,
                (rep, rep_stride) if hybrid else None,
                passes,
                shared,
            )
            fsdp = fsdp + np.where(mask, layered, 0.0)

    def exposed(
        comm: FloatArray, tail: FloatArray, sent: FloatArray, window: FloatArray, overlapped: bool
    ) -> FloatArray:
        if not overlapped:
            return comm
        late = schedule_exposed_s(
            comm, eff.data_parallel.dp_overlap_efficiency * window, p.pp, p.vpp
        )
        visible = np.maximum(tail, late)
        return visible + hbm_contention_s(cluster, eff, sent, comm - visible, comm)

    grad_exposed = exposed(grad, grad_tail, grad_bytes, windows[1], stack.overlap_grad_reduce)
    gather_exposed = np.where(
        p.zero >= 1,
        exposed(gather, gather_tail, gather_bytes, windows[0], stack.overlap_param_gather),
        0.0,
    )
    active = p.dp * p.cp > 1
    if has_experts:
        active = active | (expert_group > 1)
    dp_comm = np.where(active & ~per_layer, grad_exposed + gather_exposed, 0.0)
    return dp_comm, np.where(active & per_layer, fsdp, 0.0)


def bucket_count(p: PlanBatch, stack: Stack, params: FloatArray) -> FloatArray:
    """Gradient buckets of a rank's ``params``: ``Stack.grad_buckets``, or where the stack sizes
    its buckets (``grad_bucket_params``), ceil(params / size) per model chunk with size =
    max(grad_bucket_params, grad_bucket_params_per_dp_rank x dp x cp)."""
    if stack.grad_bucket_params <= 0.0:
        return np.full_like(p.dp, float(stack.grad_buckets), dtype=np.float64)
    size = np.maximum(stack.grad_bucket_params, stack.grad_bucket_params_per_dp_rank * p.dp * p.cp)
    per_chunk = np.ceil(params / (p.vpp * size))
    result: FloatArray = p.vpp * np.maximum(per_chunk, 1.0)
    return result


def fsdp_exposed_s(
    cluster: Cluster,
    eff: Efficiency,
    stack: Stack,
    group: tuple[FloatArray, FloatArray, FloatArray],
    layer_work: tuple[FloatArray, FloatArray, FloatArray],
    replicas: tuple[FloatArray, FloatArray] | None = None,
    passes: FsdpPasses | None = None,
    shared: SharedRows | None = None,
) -> FloatArray:
    """Exposed ZeRO-3 / FSDP communication of one step on one stage.

    FSDP wraps each transformer layer as a unit: forward all-gathers its parameters, backward
    gathers them again and reduce-scatters its gradients (Zhao et al. 2023, arXiv 2304.11277,
    Sec. 3.3). Each is one small collective, so the ring's per-step latency, which grows with
    the group ((n-1) steps for NCCL's ring all-gather and reduce-scatter), is paid L times per
    pass. Prefetch issues layer i+1's gather while layer i computes (``fsdp_prefetch_layers``
    ahead), so per layer only what exceeds that compute shows, and the first gather and the
    last reduce-scatter of a pass are never hidden: a forward pass exposes
    c_f + L max(0, c_f - k t_f), a backward pass c_b + r + L max(0, c_b + r - k t_b).
    ``Stack.zero3_gathers_per_micro_batch`` = 1 keeps the forward's parameters for the backward
    (c_b = 0); hybrid sharding adds each layer's all-reduce of its gradient shard over the
    ``replicas`` (count, stride) to r (FSDP HYBRID_SHARD). ``passes`` counts the forward
    gathers and the backward reduce-scatters a step runs (``fsdp_passes``): one each per
    micro-batch, or fewer under a pipeline that keeps the units gathered (None: one
    micro-batch). ``shared`` evaluates the collectives once per structure of the batch
    (``SharedRows``; None: row by row), with the same values."""
    n, stride, params = group
    layers, t_fwd, t_bwd = layer_work
    call = shared or SharedRows(first=None, inverse=None)
    per_layer = params / np.maximum(layers, 1.0)
    gather = call(
        coll.allgather_time_s, cluster, eff, n, stride, per_layer * stack.param_gather_bytes
    )
    scatter = call(
        coll.reduce_scatter_time_s, cluster, eff, n, stride, per_layer * stack.grad_reduce_bytes
    )
    if replicas is not None:
        rep, rep_stride = replicas
        shard_grads = per_layer * stack.grad_reduce_bytes / n
        across = call(coll.allreduce_time_s, cluster, eff, rep, rep_stride, shard_grads)
        scatter = scatter + np.where(rep > 1, across, 0.0)
    if passes is None:  # one micro-batch
        one = np.ones_like(gather)
        passes = FsdpPasses(one, one, stack.zero3_gathers_per_micro_batch * one)
    regather = gather * (passes.gathers - 1.0)
    k = stack.fsdp_prefetch_layers
    f_layer, b_layer = t_fwd / np.maximum(layers, 1.0), t_bwd / np.maximum(layers, 1.0)
    fwd = gather + layers * np.maximum(gather - k * f_layer, 0.0)
    bwd = regather + scatter + layers * np.maximum(regather + scatter - k * b_layer, 0.0)
    exposed = passes.forward * fwd + passes.backward * bwd
    total = layers * (passes.forward * gather + passes.backward * (regather + scatter))
    hidden = np.maximum(total - exposed, 0.0)
    ring = (n - 1.0) / n
    sent = (
        layers
        * ring
        * per_layer
        * (
            passes.forward * passes.gathers * stack.param_gather_bytes
            + passes.backward * stack.grad_reduce_bytes
        )
    )
    result: FloatArray = exposed + hbm_contention_s(cluster, eff, sent, hidden, total)
    return result


def hbm_contention_s(
    cluster: Cluster,
    eff: Efficiency,
    sent_bytes: FloatArray,
    hidden_s: FloatArray,
    comm_s: FloatArray,
) -> FloatArray:
    """Compute time lost to the HBM traffic of collectives that run hidden behind compute. Of
    the ``sent_bytes`` a rank sends over ``comm_s`` of communication, the share ``hidden_s``
    runs hidden; every byte a ring collective sends or receives is read from or written to the
    rank's HBM (``collective_hbm_bytes_per_byte`` of traffic per byte sent), which the overlapped
    kernels then lack; ``overlap_compute_slowdown_frac`` of those HBM seconds is lost. Counted
    in bytes, not in the collective's seconds: the same gradients over a slower network take
    longer but move the same HBM traffic (LLM Foundry's 13B FSDP series keeps its per-GPU
    rate from 8 GPUs on NVLink to 64 over InfiniBand)."""
    share = np.where(comm_s > 0, hidden_s / np.where(comm_s > 0, comm_s, 1.0), 0.0)
    hbm_s = (
        sent_bytes
        * share
        * eff.layers.collective_hbm_bytes_per_byte
        / (cluster.accelerator.hbm_bytes_per_s * eff.compute.hbm_efficiency)
    )
    result: FloatArray = eff.layers.overlap_compute_slowdown_frac * hbm_s
    return result


def per_layer_sharding(p: PlanBatch, stack: Stack) -> NDArray[np.bool_]:
    """Rows whose data-parallel collectives run per layer (``fsdp_exposed_s``): ZeRO-3, and
    ZeRO-2 in a stack that gathers and reduce-scatters layer by layer
    (``Stack.zero2_per_layer``, PyTorch FSDP ``SHARD_GRAD_OP``)."""
    result: NDArray[np.bool_] = (p.zero >= 3) | ((p.zero == 2) & stack.zero2_per_layer)
    return result


@dataclass(frozen=True)
class FsdpPasses:
    """How often a step runs each stage's per-layer FSDP collectives."""

    forward: FloatArray
    """Forward passes that all-gather the layers' parameters."""
    backward: FloatArray
    """Backward passes that reduce-scatter the layers' gradients."""
    gathers: FloatArray
    """All-gathers per layer in a forward-and-backward pass with a reduce-scatter: 2 when the
    backward gathers again, 1 when the forward's parameters are kept for it."""


def fsdp_passes(p: PlanBatch, stack: Stack, micro_batches: FloatArray) -> FsdpPasses:
    """The per-layer FSDP collectives of one step (``Stack.fsdp_under_pipeline``): every
    micro-batch gathers and reduce-scatters, unless a pipeline schedule (pp > 1) runs the stage:
    ``reduce-once`` gathers in every micro-batch's forward, keeps the parameters for its
    backward and reduce-scatters the accumulated gradient once per step; ``gather-once`` also
    keeps the parameters across micro-batches (one gather per step)."""
    piped = p.pp > 1
    one = np.ones_like(micro_batches)
    mode = stack.fsdp_under_pipeline
    kept = piped & (mode != "per-micro-batch")
    forward = np.where(piped & (mode == "gather-once"), one, micro_batches)
    backward = np.where(kept, one, micro_batches)
    gathers = np.where(kept, one, stack.zero3_gathers_per_micro_batch * one)
    # A kept pass's single reduce-scatter comes after the last backward, which regathers
    # nothing: its gathers are the forward passes' own.
    return FsdpPasses(forward=forward, backward=backward, gathers=gathers)


def fsdp_whole_stage(p: PlanBatch, stack: Stack) -> NDArray[np.bool_]:
    """Rows that hold their stage's parameters and gradients unsharded through the step: a
    pipeline that accumulates unsharded gradients until its one reduce-scatter
    (``fsdp_under_pipeline`` ``reduce-once`` or ``gather-once``); its parameters stay gathered
    too, from a micro-batch's forward through the 1F1B steady state's interleaved backwards."""
    result: NDArray[np.bool_] = (p.pp > 1) & (stack.fsdp_under_pipeline != "per-micro-batch")
    return result


def shard_groups(p: PlanBatch, stack: Stack) -> tuple[FloatArray, FloatArray]:
    """Data-parallel ranks one ZeRO shard group holds and the number of such groups (replicas).

    ``Stack.zero_shard_ranks`` = 0 shards over all of DP x CP (one replica); n > 0 shards within
    groups of n consecutive data-parallel ranks and replicates across them (PyTorch FSDP
    HYBRID_SHARD, torchtitan's ``data_parallel_shard_degree``)."""
    ranks = p.dp * p.cp
    if stack.zero_shard_ranks <= 0:
        return ranks, np.ones_like(ranks)
    shard = np.minimum(ranks, float(stack.zero_shard_ranks))
    return shard, ranks / shard


def schedule_exposed_s(
    comm: FloatArray, stage_time: FloatArray, pp: FloatArray, vpp: FloatArray
) -> FloatArray:
    """Data-parallel communication ``comm`` of the first stage left past the end of the step
    when each model chunk's share starts as soon as its last backward produces it, on one
    link (or, mirrored, the parameter gather before each chunk's first forward).

    With v chunks of a stage whose backward per micro-batch takes ``stage_time`` (b = that / v
    per chunk), the first stage's chunk j runs its last backward j pp b before the end of the
    step: in the cool-down the stage runs the last pp backwards of each chunk in turn, chunk 0
    last (interleaved 1F1B, Narayanan et al. SC'21, Sec. 2.2.2; the op order of Megatron-LM's
    ``forward_backward_pipelining_with_interleaving``). Chunk j's share C / v arrives over its
    last backward, so the link, in readiness order, ends past the step by
    ``max_j ((j + 1) C / v - (j pp + 1) b)``, j = 0..v-1, and at least 0. Plain 1F1B (v = 1):
    C - stage_time, the last backward only; the drain's idle time comes before the stage's last
    backward, not after it. ``tests/unit/perf/test_pipeline_window.py`` checks this against an
    event simulation of the schedule."""
    chunk = stage_time / vpp
    first: FloatArray = np.maximum(comm / vpp - chunk, 0.0)
    chunks = int(np.max(vpp, initial=1.0))
    if chunks <= 1:
        return first
    shape = np.broadcast_shapes(*(np.shape(a) for a in (comm, stage_time, pp, vpp)))
    exposed = np.array(np.broadcast_to(first, shape)).ravel()
    flat = [np.broadcast_to(a, shape).ravel() for a in (comm, pp, vpp, chunk)]
    live = np.flatnonzero(flat[2] > 1.0)  # the rows that have a chunk j: fewer as j grows
    for j in range(1, chunks):
        live = live[flat[2][live] > j]
        c, n, v, b = (a[live] for a in flat)
        exposed[live] = np.maximum(exposed[live], (j + 1.0) * c / v - (j * n + 1.0) * b)
    result: FloatArray = exposed.reshape(shape)
    return result


def step_sync_s(cluster: Cluster, eff: Efficiency, num_gpus: FloatArray) -> FloatArray:
    """Per-step synchronisation that no data parallelism shrinks: ``step_sync_allreduces``
    scalar all-reduces over every rank (Megatron-LM ``training.py`` and its optimizer: the
    gradient-norm all-reduce for clipping, the found-inf / NaN check, the loss average over
    the data-parallel group), each latency-bound, log2 n tree steps per tier."""
    one = np.ones_like(num_gpus)
    small = coll.allreduce_time_s(cluster, eff, num_gpus, one, 8.0 * one)
    result: FloatArray = eff.data_parallel.step_sync_allreduces * small
    return result


STRUCTURE_FIELDS = (
    "tp",
    "cp",
    "dp",
    "pp",
    "ep",
    "etp",
    "layers_first",
    "layers_middle",
    "layers_last",
    "vpp",
)
"""The plan fields the data-parallel groups, the parameters they reduce and their buckets
(one set per model chunk, ``bucket_count``) follow from."""
_SHARE_MIN_ROWS = 1024
"""Batches from this size on evaluate their data-parallel collectives once per structure."""


@dataclass(frozen=True)
class SharedRows:
    """The rows of a batch grouped by ``STRUCTURE_FIELDS``: a collective whose inputs are the
    same on every row of a group (group sizes, strides, bytes) is evaluated once per group and
    spread, giving exactly the values of every row's own evaluation. A search batch holds a
    few dozen categorical variants (recompute, ZeRO, SP, precision, micro-batch) of each
    structure. Inputs are checked: one that differs within a group is evaluated row by row."""

    first: NDArray[np.intp] | None
    """The first row of each group (None: every row is evaluated)."""
    inverse: NDArray[np.intp] | None
    """Every row's group."""
    checked: dict[int, tuple[FloatArray, FloatArray | None]] = field(default_factory=dict)
    """Inputs checked so far, by identity: the input and its per-group values (None: they
    differ within a group)."""

    @classmethod
    def of(cls, p: PlanBatch, eff: Efficiency, cluster: Cluster) -> SharedRows:
        """The groups of ``p`` (none for a small batch, or one whose constants are per row)."""
        if len(p) < _SHARE_MIN_ROWS or per_row_constants(eff, cluster):
            return cls(first=None, inverse=None)
        first, inverse = distinct_rows(p, STRUCTURE_FIELDS)
        if 4 * first.size > len(p):
            return cls(first=None, inverse=None)  # too few rows share a structure to pay off
        return cls(first=first, inverse=inverse)

    def __call__(
        self,
        collective: Callable[..., FloatArray],
        cluster: Cluster,
        eff: Efficiency,
        *inputs: FloatArray,
    ) -> FloatArray:
        """``collective(cluster, eff, *inputs)``, once per group where the inputs allow it."""
        if self.first is None or self.inverse is None:
            return collective(cluster, eff, *inputs)
        reduced = [self._per_group(values) for values in inputs]
        if any(sub is None for sub in reduced):
            return collective(cluster, eff, *inputs)
        result: FloatArray = collective(cluster, eff, *reduced)[self.inverse]
        return result

    def _per_group(self, values: FloatArray) -> FloatArray | None:
        """The values of each group's first row, or None if they differ within a group (an
        array already checked is looked up: the same inputs feed several collectives)."""
        assert self.first is not None and self.inverse is not None
        seen = self.checked.get(id(values))
        if seen is not None and seen[0] is values:
            return seen[1]
        column = np.asarray(values, dtype=np.float64)
        sub: FloatArray | None = None
        if column.shape == self.inverse.shape:
            sub = column[self.first]
            if not np.array_equal(sub[self.inverse], column):
                sub = None
        self.checked[id(values)] = (values, sub)  # the reference keeps the id unique
        return sub
