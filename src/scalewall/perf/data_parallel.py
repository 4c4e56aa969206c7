"""Data-parallel communication: bucketed gradient reduction and parameter gather (ZeRO 0-2)
against the overlap window the pipeline schedule allows, ZeRO-3 / FSDP per-layer collectives,
and the per-step synchronisation all-reduces."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from scalewall.perf import collectives as coll
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.perf.batch import PlanBatch
from scalewall.plan.topology import Cluster

FloatArray = NDArray[np.float64]


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
    data-parallel group (tp cp dp / (ep etp) ranks, ep etp apart). Both share the overlap
    windows: ``windows`` = (forward, backward) time the schedule leaves for the parameter
    gather and the gradient reduction (``dp_overlap_windows``); ``layer_work`` = (layers of
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
    any_zero3 = bool(np.any(p.zero >= 3))
    grad = np.zeros_like(t_fwd)
    gather = np.zeros_like(t_fwd)
    fsdp = np.zeros_like(t_fwd)
    for index, (group, stride, params) in enumerate(groups):
        grads = params * stack.grad_reduce_bytes
        values = params * stack.param_gather_bytes
        # Plain data parallelism (ZeRO 0) all-reduces over every replica, sharded or not.
        whole = p.dp * p.cp if index == 0 else group
        allreduce = coll.allreduce_time_s(cluster, eff, whole, stride, grads)
        reduce_scatter = coll.reduce_scatter_time_s(cluster, eff, group, stride, grads)
        all_gather = coll.allgather_time_s(cluster, eff, group, stride, values)
        mask = np.ones_like(t_fwd) if index == 0 else (params > 0) & (group > 1)
        # Hybrid sharding: the shards' gradients are all-reduced over the replicas, shard ranks
        # apart; 1 replica (plain ZeRO) costs nothing.
        rep, rep_stride = (replicas, p.tp * shard) if index == 0 else (one, one)
        hybrid = index == 0 and stack.zero_shard_ranks > 0
        across = zero
        if hybrid:
            across = coll.allreduce_time_s(cluster, eff, rep, rep_stride, grads / group)
            across = np.where(rep > 1, across, 0.0)
        reduce = np.where(p.zero >= 1, reduce_scatter + across, allreduce)
        grad = grad + np.where(mask, reduce, 0.0)
        gather = gather + np.where(mask, all_gather, 0.0)
        if any_zero3:
            layered = fsdp_exposed_s(
                cluster,
                eff,
                stack,
                (group, stride, params),
                layer_work,
                (rep, rep_stride) if hybrid else None,
            )
            fsdp = fsdp + np.where(mask, micro_batches * layered, 0.0)
    buckets = float(stack.grad_buckets)

    def exposed(comm: FloatArray, window: FloatArray, overlapped: bool) -> FloatArray:
        if not overlapped:
            return comm
        visible = np.maximum(comm / buckets, comm - eff.dp_overlap_efficiency * window)
        return visible + eff.overlap_compute_slowdown_frac * (comm - visible)

    grad_exposed = exposed(grad, windows[1], stack.overlap_grad_reduce)
    gather_exposed = np.where(
        p.zero >= 1, exposed(gather, windows[0], stack.overlap_param_gather), 0.0
    )
    active = p.dp * p.cp > 1
    if has_experts:
        active = active | (expert_group > 1)
    zero3 = p.zero >= 3
    dp_comm = np.where(active & ~zero3, grad_exposed + gather_exposed, 0.0)
    return dp_comm, np.where(active & zero3, fsdp, 0.0)


def fsdp_exposed_s(
    cluster: Cluster,
    eff: Efficiency,
    stack: Stack,
    group: tuple[FloatArray, FloatArray, FloatArray],
    layer_work: tuple[FloatArray, FloatArray, FloatArray],
    replicas: tuple[FloatArray, FloatArray] | None = None,
) -> FloatArray:
    """Exposed ZeRO-3 / FSDP communication of one micro-batch on one stage.

    FSDP wraps each transformer layer as a unit: forward all-gathers its parameters, backward
    gathers them again and reduce-scatters its gradients (Zhao et al. 2023, arXiv 2304.11277,
    Sec. 3.3). Each is one small collective, so the ring's per-step latency, which grows with
    the group ((n-1) steps for NCCL's ring all-gather and reduce-scatter), is paid L times per
    pass. Prefetch issues layer i+1's gather while layer i computes (``fsdp_prefetch_layers``
    ahead), so per layer only what exceeds that compute shows, and the first gather and the
    last reduce-scatter of a pass are never hidden:
    exposed = c_f + L max(0, c_f - k t_f) + c_b + r + L max(0, c_b + r - k t_b).
    ``Stack.zero3_gathers_per_micro_batch`` = 1 keeps the forward's parameters for the backward
    (c_b = 0); hybrid sharding adds each layer's all-reduce of its gradient shard over the
    ``replicas`` (count, stride) to r (FSDP HYBRID_SHARD)."""
    n, stride, params = group
    layers, t_fwd, t_bwd = layer_work
    per_layer = params / np.maximum(layers, 1.0)
    gather = coll.allgather_time_s(cluster, eff, n, stride, per_layer * stack.param_gather_bytes)
    scatter = coll.reduce_scatter_time_s(
        cluster, eff, n, stride, per_layer * stack.grad_reduce_bytes
    )
    if replicas is not None:
        rep, rep_stride = replicas
        shard_grads = per_layer * stack.grad_reduce_bytes / n
        across = coll.allreduce_time_s(cluster, eff, rep, rep_stride, shard_grads)
        scatter = scatter + np.where(rep > 1, across, 0.0)
    regather = gather * (stack.zero3_gathers_per_micro_batch - 1.0)
    k = stack.fsdp_prefetch_layers
    f_layer, b_layer = t_fwd / np.maximum(layers, 1.0), t_bwd / np.maximum(layers, 1.0)
    fwd = gather + layers * np.maximum(gather - k * f_layer, 0.0)
    bwd = regather + scatter + layers * np.maximum(regather + scatter - k * b_layer, 0.0)
    total = layers * (gather + regather + scatter)
    hidden = np.maximum(total - fwd - bwd, 0.0)
    result: FloatArray = fwd + bwd + eff.overlap_compute_slowdown_frac * hidden
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


def dp_overlap_windows(
    stage_fwd: FloatArray, stage_bwd: FloatArray, bubble: FloatArray, vpp: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Compute that the parameter gather and the gradient reduction can hide behind.

    The step ends when the first stage has reduced its gradients, and its last gradients are
    ready only at the end of the step's last backward. With plain 1F1B all of the first
    stage's layers get their last gradient in that last micro-batch's backward, so its
    reduction can only overlap that backward (``stage_bwd``): the drain half of the bubble is
    idle time the first stage spends before its last backward, not after it. With v > 1
    interleaved chunks, chunk j's gradients are complete once its last backward has run, and
    on the first stage chunks 1..v-1 (a share (v-1)/v of its parameters) run their last
    backwards at the start of the cool-down, whose idle time is half the bubble; only chunk
    0's buckets wait for the very end, and the last bucket stays exposed in any case
    (Megatron-Core starts a bucket's reduction when its gradients are ready,
    ``overlap_grad_reduce``; schedule: Narayanan et al. SC'21, Sec. 2.2.2). The parameter
    gather for the next step mirrors this: with plain 1F1B every layer of the stage runs in
    the first micro-batch's forward, so only that forward hides it; with interleaving chunk
    j > 0 first runs after the warm-up forwards of the earlier chunks, which last as long as
    the fill half of the bubble."""
    spread = np.where(vpp > 1.0, 0.5 * bubble, 0.0)
    return stage_fwd + spread, stage_bwd + spread


def step_sync_s(cluster: Cluster, eff: Efficiency, num_gpus: FloatArray) -> FloatArray:
    """Per-step synchronisation that no data parallelism shrinks: ``step_sync_allreduces``
    scalar all-reduces over every rank (Megatron-LM ``training.py`` and its optimizer: the
    gradient-norm all-reduce for clipping, the found-inf / NaN check, the loss average over
    the data-parallel group), each latency-bound, log2 n tree steps per tier."""
    one = np.ones_like(num_gpus)
    small = coll.allreduce_time_s(cluster, eff, num_gpus, one, 8.0 * one)
    result: FloatArray = eff.step_sync_allreduces * small
    return result
