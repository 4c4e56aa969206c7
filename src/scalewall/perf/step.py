"""The training-step model: time, memory and FLOPs of one optimizer step, over a batch of plans.

Notation per GPU: t = tp, c = cp, b = micro-batch, s = sequence length, T = b*s/c token rows a
GPU processes per micro-batch, m = micro-batches per step, D, F, H, K, d, V from the model.

A step of a pipeline stage is m micro-batches of forward + backward. With the slowest stage
taking ``t_max`` per micro-batch and all stages together ``t_sum``, (interleaved) 1F1B takes
``m * t_max + (t_sum - t_max) / vpp`` (Narayanan et al. SC'21, Sec. 2.2: bubble (p-1)/(v m) for
equal stages). Data-parallel gradient traffic, the optimizer step and fixed overheads follow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import special

from scalewall.catalog.schema import ModelSpec
from scalewall.perf import collectives as coll
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.perf.batch import PlanBatch
from scalewall.perf.compute import Device, gemm_time_s, linear_time_s, memory_bound_time_s
from scalewall.plan.topology import Cluster
from scalewall.workload import counts

FloatArray = NDArray[np.float64]

ACT_BYTES = 2.0  # bf16/fp16 activations
WEIGHT_BYTES = 2.0  # low-precision weight copy used by the GEMMs
MAIN_GRAD_BYTES = 4.0  # fp32 main gradients (Megatron accumulates in fp32)
OPTIMIZER_STATE_BYTES = 12.0  # fp32 master weights + Adam m and v (Rajbhandari et al. 2020)

BREAKDOWN_PARTS = (
    "compute",
    "recompute",
    "tp_comm",
    "cp_comm",
    "pp_comm",
    "pipeline_bubble",
    "dp_comm",
    "optimizer",
    "straggler",
    "other",
)
MEMORY_PARTS = ("weights", "gradients", "optimizer_state", "activations", "reserved")


@dataclass(frozen=True, kw_only=True)
class StepArrays:
    """Results for a batch of plans: one array per quantity."""

    step_time_s: FloatArray
    tokens_per_s: FloatArray
    mfu: FloatArray
    hfu: FloatArray
    model_tflops_per_gpu: FloatArray
    hardware_tflops_per_gpu: FloatArray
    memory_bytes: dict[str, FloatArray]
    """Per part, for the most loaded pipeline stage."""
    memory_total_bytes: FloatArray
    fits: NDArray[np.bool_]
    breakdown_s: dict[str, FloatArray]
    """Per part of the step time; the parts add up to ``step_time_s``."""


@dataclass(frozen=True, kw_only=True)
class _LayerTimes:
    """Per micro-batch per layer on one GPU."""

    fwd_compute: FloatArray
    bwd_compute: FloatArray
    fwd_tp: FloatArray
    bwd_tp: FloatArray
    fwd_cp: FloatArray
    bwd_cp: FloatArray
    recompute: FloatArray


def _attention_times(
    model: ModelSpec, p: PlanBatch, dev: Device, eff: Efficiency, stack: Stack
) -> tuple[FloatArray, ...]:
    """Forward time, backward time and selective-recompute time of the attention core (scores
    and context) of one layer, per GPU."""
    heads = model.heads / p.tp
    d = float(model.head_size)
    tokens = p.micro_batch * p.seq_len / p.cp
    if stack.flash_attention:
        # A causal kernel skips the masked half; with CP, causal load balancing gives each rank
        # the same share. FlashAttention's backward recomputes the scores: 2.5x forward FLOPs.
        flop = 2.0 * 2.0 * tokens * p.seq_len * heads * d * 0.5
        forward = flop / (dev.peak_bf16_flop_per_s * dev.attention_frac)
        return forward, 2.5 * forward, np.zeros_like(forward)
    # Unfused (Megatron 2021-22): QK^T and AV as batched GEMMs over the full s x s square, then
    # scale-mask-softmax and dropout stream the scores through HBM.
    batch = p.micro_batch * heads
    s = p.seq_len / p.cp
    qk = gemm_time_s(s, p.seq_len, d, dev, eff, batch=batch)
    av = gemm_time_s(s, d, p.seq_len, dev, eff, batch=batch)
    scores = batch * s * p.seq_len
    per_score = eff.unfused_attention_bytes_per_score + (
        eff.attention_dropout_bytes_per_score if model.dropout else 0.0
    )
    elementwise = memory_bound_time_s(scores * per_score, dev, eff)
    forward = qk + av + elementwise
    return forward, 2.0 * forward, forward


def _layer_times(
    model: ModelSpec, cluster: Cluster, p: PlanBatch, dev: Device, eff: Efficiency, stack: Stack
) -> _LayerTimes:
    tp = p.tp
    tokens = p.micro_batch * p.seq_len / p.cp
    d, heads, kv = float(model.head_size), float(model.heads), float(model.kv_heads)
    hidden, ffn = float(model.hidden), float(model.ffn_hidden)
    up_width = ffn * (2.0 if model.activation == "swiglu" else 1.0)
    shapes: list[
        tuple[FloatArray | float, FloatArray | float]
    ] = [  # (n_out, k_in) of the column- and row-parallel linears
        ((heads + 2.0 * kv) * d / tp, hidden),
        (hidden, heads * d / tp),
        (up_width / tp, hidden),
        (hidden, ffn / tp),
    ]
    fwd = np.zeros_like(tokens)
    bwd = np.zeros_like(tokens)
    for n_out, k_in in shapes:
        n_arr = np.asarray(n_out, dtype=np.float64) * np.ones_like(tokens)
        k_arr = np.asarray(k_in, dtype=np.float64) * np.ones_like(tokens)
        f, b = linear_time_s(tokens, n_arr, k_arr, dev, eff)
        fwd, bwd = fwd + f, bwd + b
    attn_f, attn_b, attn_re = _attention_times(model, p, dev, eff, stack)
    norm_tokens = np.where(p.sequence_parallel > 0, tokens / tp, tokens)
    per_hidden = stack.elementwise_bytes_per_hidden + (
        eff.dropout_bytes_per_hidden if model.dropout else 0.0
    )
    elem_bytes = (
        norm_tokens * hidden * per_hidden + tokens * up_width / tp * stack.elementwise_bytes_per_ffn
    )
    elem = memory_bound_time_s(elem_bytes, dev, eff)
    fwd_compute = fwd + attn_f + elem / 3.0
    bwd_compute = bwd + attn_b + elem * 2.0 / 3.0
    # TP/SP: per layer two all-reduces (or reduce-scatter + all-gather pairs with SP) forward
    # and two backward, each of the full [T, D] activation (Korthikanti et al. 2022, Sec. 4.2).
    message = tokens * hidden * ACT_BYTES
    one = np.ones_like(tokens)
    tp_total = 2.0 * np.where(
        p.sequence_parallel > 0,
        2.0 * coll.reduce_scatter_time_s(cluster, eff, tp, one, message),
        coll.allreduce_time_s(cluster, eff, tp, one, message),
    )
    # The hidden share still costs compute: communication kernels take SMs and HBM bandwidth.
    hidden_share = stack.tp_comm_overlap_frac * (1.0 - eff.overlap_compute_slowdown_frac)
    tp_fwd = tp_total * (1.0 - hidden_share)
    cp_fwd, cp_bwd = _cp_times(model, cluster, p, eff, attn_f, attn_b)
    full = p.recompute == 2
    recompute = np.where(
        full, fwd_compute + tp_fwd + cp_fwd, np.where(p.recompute == 1, attn_re, 0.0)
    )
    return _LayerTimes(
        fwd_compute=fwd_compute,
        bwd_compute=bwd_compute,
        fwd_tp=tp_fwd,
        bwd_tp=tp_fwd,
        fwd_cp=cp_fwd,
        bwd_cp=cp_bwd,
        recompute=recompute,
    )


def _cp_times(
    model: ModelSpec,
    cluster: Cluster,
    p: PlanBatch,
    eff: Efficiency,
    attn_fwd: FloatArray,
    attn_bwd: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """Exposed context-parallel time per layer, forward and backward.

    Ring: each rank passes its K and V shard around the ring (c-1 steps), overlapped with the
    attention on the shard it holds; backward also returns dK, dV (twice the bytes).
    All-to-all: Q, K, V and the output are exchanged between sequence and head sharding
    (4 all-to-alls forward, 4 backward), not overlapped.
    """
    tokens = p.micro_batch * p.seq_len / p.cp
    d = float(model.head_size)
    kv_bytes = tokens * 2.0 * model.kv_heads * d / np.minimum(p.tp, model.kv_heads) * ACT_BYTES
    steps = p.cp - 1.0
    ring_f = steps * coll.p2p_time_s(cluster, eff, p.tp, kv_bytes)
    ring_fwd = np.maximum(ring_f - attn_fwd, 0.0)
    ring_bwd = np.maximum(2.0 * ring_f - attn_bwd, 0.0)
    qkvo_bytes = tokens * (2.0 * model.heads + 2.0 * model.kv_heads) * d / p.tp * ACT_BYTES
    a2a = coll.alltoall_time_s(cluster, eff, p.cp, p.tp, qkvo_bytes)
    fwd = np.where(p.cp > 1, np.where(p.cp_mode == 0, ring_fwd, a2a), 0.0)
    bwd = np.where(p.cp > 1, np.where(p.cp_mode == 0, ring_bwd, a2a), 0.0)
    return fwd, bwd


def _head_times(
    model: ModelSpec, p: PlanBatch, dev: Device, eff: Efficiency, stack: Stack
) -> tuple[FloatArray, FloatArray]:
    """Output layer (logits) and loss on the last stage: forward and backward time."""
    tokens = p.micro_batch * p.seq_len / p.cp
    vocab = model.vocab / p.tp
    one = np.ones_like(tokens)
    f, b = linear_time_s(tokens, vocab * one, model.hidden * one, dev, eff)
    loss = memory_bound_time_s(tokens * vocab * stack.loss_bytes_per_logit, dev, eff)
    return f + loss / 3.0, b + loss * 2.0 / 3.0


def _stage_params(model: ModelSpec, p: PlanBatch) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Parameters per GPU (after TP) of the first, a middle and the last stage."""
    layer = counts.layer_params(model, moe=False).total
    embed = float(model.vocab * model.hidden)
    if model.position_embedding == "learned":
        embed += model.max_seq_len * model.hidden
    out = float(model.vocab * model.hidden)  # tied: the last stage keeps its own copy
    single = p.pp == 1
    first = (
        p.layers_first * layer
        + embed
        + np.where(single, 0.0 if model.tied_embeddings else out, 0.0)
    )
    middle = p.layers_middle * layer
    last = np.where(single, first, p.layers_last * layer + out)
    return first / p.tp, middle / p.tp, last / p.tp


def _activation_bytes_per_layer(model: ModelSpec, p: PlanBatch, stack: Stack) -> FloatArray:
    """Activation memory one layer keeps for backward, per micro-batch per GPU.

    Korthikanti et al. 2022 (eq. 1-2): replicated part (norm inputs 4D, linear inputs 4D,
    dropout masks 2D) plus TP-sharded part (Q, K, V, projection input, FFN activations and the
    attention scores 5 a s when the kernel is unfused and not recomputed); SP shards it all.
    Full recompute keeps only the layer input.
    """
    tokens = p.micro_batch * p.seq_len / p.cp
    hidden, d = float(model.hidden), float(model.head_size)
    replicated = (8.0 + (2.0 if model.dropout else 0.0)) * hidden
    ffn = float(model.ffn_hidden)
    ffn_acts = (6.0 if model.activation == "swiglu" else 4.0) * ffn
    sharded: FloatArray | float = 2.0 * (2.0 * model.heads * d + 2.0 * model.kv_heads * d)
    sharded += ffn_acts
    if not stack.flash_attention:
        scores = (5.0 if model.dropout else 2.0) * model.heads * p.seq_len
        sharded = sharded + np.where(p.recompute == 0, scores, 0.0)
    per_token = np.where(
        p.sequence_parallel > 0, (replicated + sharded) / p.tp, replicated + sharded / p.tp
    )
    layer_input = np.where(p.sequence_parallel > 0, ACT_BYTES * hidden / p.tp, ACT_BYTES * hidden)
    result: FloatArray = tokens * np.where(p.recompute == 2, layer_input, per_token)
    return result


def memory_model(
    model: ModelSpec, p: PlanBatch, eff: Efficiency, stack: Stack, micro_batches: FloatArray
) -> tuple[dict[str, FloatArray], FloatArray]:
    """Per-GPU memory by part on the most loaded pipeline stage (first or last), and the total.

    Cheaper than the full step model: the search calls it to prune plans that do not fit.
    """
    first_w, _, last_w = _stage_params(model, p)
    shard = p.dp * p.cp
    per_layer = _activation_bytes_per_layer(model, p, stack)
    in_flight = np.minimum(micro_batches, p.pp)
    interleave = np.where(p.vpp > 1, 1.0 + (p.pp - 1.0) / (p.pp * p.vpp), 1.0)
    tokens = p.micro_batch * p.seq_len / p.cp
    logits = tokens * model.vocab / p.tp * (ACT_BYTES + 4.0)
    stages = {
        "first": (first_w, per_layer * p.layers_first * in_flight * interleave),
        "last": (last_w, per_layer * p.layers_last + logits),
    }
    best: dict[str, FloatArray] | None = None
    best_total = np.zeros_like(tokens)
    for weights_params, acts in stages.values():
        part = {
            "weights": weights_params * WEIGHT_BYTES / np.where(p.zero >= 3, shard, 1.0),
            "gradients": weights_params * MAIN_GRAD_BYTES / np.where(p.zero >= 2, shard, 1.0),
            "optimizer_state": weights_params
            * OPTIMIZER_STATE_BYTES
            / np.where(p.zero >= 1, shard, 1.0),
            "activations": acts,
            "reserved": np.full_like(tokens, eff.memory_reserved_bytes),
        }
        total = sum(part.values(), np.zeros_like(tokens))
        if best is None:
            best, best_total = part, total
        else:
            take = total > best_total
            best = {k: np.where(take, v, best[k]) for k, v in part.items()}
            best_total = np.maximum(total, best_total)
    assert best is not None
    return best, best_total


def _dp_times(
    cluster: Cluster,
    p: PlanBatch,
    eff: Efficiency,
    stack: Stack,
    params_per_gpu: FloatArray,
    t_fwd: FloatArray,
    t_bwd: FloatArray,
    micro_batches: FloatArray,
) -> FloatArray:
    """Exposed data-parallel communication per step (gradient reduction, parameter gather)."""
    group, stride = p.dp * p.cp, p.tp
    grads = params_per_gpu * stack.grad_reduce_bytes
    params = params_per_gpu * stack.param_gather_bytes
    allreduce = coll.allreduce_time_s(cluster, eff, group, stride, grads)
    reduce_scatter = coll.reduce_scatter_time_s(cluster, eff, group, stride, grads)
    gather = coll.allgather_time_s(cluster, eff, group, stride, params)
    buckets = float(stack.grad_buckets)

    def exposed(comm: FloatArray, window: FloatArray, overlapped: bool) -> FloatArray:
        if not overlapped:
            return comm
        visible = np.maximum(comm / buckets, comm - eff.dp_overlap_efficiency * window)
        return visible + eff.overlap_compute_slowdown_frac * (comm - visible)

    grad = np.where(p.zero >= 1, reduce_scatter, allreduce)
    grad_exposed = exposed(grad, t_bwd, stack.overlap_grad_reduce)
    gather_exposed = np.where(p.zero >= 1, exposed(gather, t_fwd, stack.overlap_param_gather), 0.0)
    # ZeRO-3/FSDP gathers parameters for every micro-batch's forward and backward and
    # reduce-scatters gradients each micro-batch, prefetching behind compute.
    fsdp = micro_batches * (2.0 * gather + reduce_scatter)
    fsdp_visible = np.maximum(
        fsdp / buckets, fsdp - eff.dp_overlap_efficiency * micro_batches * (t_fwd + t_bwd)
    )
    fsdp_exposed = fsdp_visible + eff.overlap_compute_slowdown_frac * (fsdp - fsdp_visible)
    result: FloatArray = np.where(p.zero >= 3, fsdp_exposed, grad_exposed + gather_exposed)
    return np.where(group > 1, result, 0.0)


def step_model(
    model: ModelSpec, cluster: Cluster, p: PlanBatch, eff: Efficiency, stack: Stack
) -> StepArrays:
    """Evaluate every plan of the batch: step time with its breakdown, FLOP rates, memory."""
    dev = Device.of(cluster.accelerator, p.precision, eff)
    micro_batches = p.global_batch / (p.dp * p.micro_batch)
    lt = _layer_times(model, cluster, p, dev, eff, stack)
    layer_fwd = lt.fwd_compute + lt.fwd_tp + lt.fwd_cp
    layer_bwd = lt.bwd_compute + lt.bwd_tp + lt.bwd_cp + lt.recompute
    head_f, head_b = _head_times(model, p, dev, eff, stack)
    stage_f = {
        "first": p.layers_first * layer_fwd,
        "middle": p.layers_middle * layer_fwd,
        "last": p.layers_last * layer_fwd + head_f,
    }
    stage_b = {
        "first": p.layers_first * layer_bwd,
        "middle": p.layers_middle * layer_bwd,
        "last": p.layers_last * layer_bwd + head_b,
    }
    single = p.pp == 1
    t_first = np.where(
        single, stage_f["last"] + stage_b["last"], stage_f["first"] + stage_b["first"]
    )
    t_middle = np.where(p.pp > 2, stage_f["middle"] + stage_b["middle"], 0.0)
    t_last = np.where(single, 0.0, stage_f["last"] + stage_b["last"])
    t_max = np.maximum(np.maximum(t_first, t_middle), t_last)
    t_sum = t_first + np.maximum(p.pp - 2.0, 0.0) * t_middle + t_last
    bubble = (t_sum - t_max) / p.vpp

    # Pipeline point-to-point: per micro-batch and virtual chunk, activations forward and
    # gradients backward to the neighbour stage, tp*cp*dp ranks away.
    tokens = p.micro_batch * p.seq_len / p.cp
    p2p_bytes = tokens * model.hidden * ACT_BYTES / np.where(stack.scatter_gather_p2p, p.tp, 1.0)
    p2p = coll.p2p_time_s(cluster, eff, p.tp * p.cp * p.dp, p2p_bytes)
    p2p_exposed = 1.0 - (eff.pp_p2p_overlap_frac if stack.overlap_p2p else 0.0)
    pp_comm = np.where(
        p.pp > 1, micro_batches * 2.0 * p.vpp * (p2p * p2p_exposed + eff.pp_p2p_sync_s), 0.0
    )

    first_w, middle_w, last_w = _stage_params(model, p)
    params_per_gpu = np.maximum(
        np.maximum(first_w, np.where(p.pp > 2, middle_w, 0.0)), np.where(single, 0.0, last_w)
    )
    crit_layers = np.where(single, p.layers_last, np.maximum(p.layers_first, p.layers_last))
    # Gradient buckets reduce while the last micro-batch's backward runs; in a pipeline the
    # drain half of the bubble, where the stage waits for its last gradients, overlaps too.
    dp_comm = _dp_times(
        cluster,
        p,
        eff,
        stack,
        params_per_gpu,
        crit_layers * layer_fwd + bubble / 2.0,
        crit_layers * layer_bwd + bubble / 2.0,
        micro_batches,
    )
    opt_params = params_per_gpu / np.where(p.zero >= 1, p.dp * p.cp, 1.0)
    optimizer = memory_bound_time_s(opt_params * eff.optimizer_bytes_per_param, dev, eff)

    # Split m * t_max into named parts in proportion to one layer's parts.
    steady = micro_batches * t_max
    layer_total = layer_fwd + layer_bwd
    parts = {
        "recompute": lt.recompute,
        "tp_comm": lt.fwd_tp + lt.bwd_tp,
        "cp_comm": lt.fwd_cp + lt.bwd_cp,
    }
    breakdown = {k: steady * v / layer_total for k, v in parts.items()}
    breakdown["compute"] = steady - sum(breakdown.values(), np.zeros_like(steady))
    num_gpus = p.tp * p.pp * p.dp * p.cp
    straggler = (breakdown["compute"] + breakdown["recompute"]) * eff.rank_jitter_cv * (
        expected_max_normal(num_gpus)
    )
    breakdown.update(
        pp_comm=pp_comm,
        pipeline_bubble=bubble,
        dp_comm=dp_comm,
        optimizer=optimizer,
        straggler=straggler,
        other=np.full_like(steady, stack.step_overhead_s),
    )
    breakdown = {k: breakdown[k] for k in BREAKDOWN_PARTS}
    step = sum(breakdown.values(), np.zeros_like(steady))

    tokens_step = p.global_batch * p.seq_len
    model_rate = _model_flop_per_token(model, p) * tokens_step / step / num_gpus
    # Hardware FLOPs in the same convention plus what recomputation redoes (Korthikanti et al.
    # 2022, Sec. 6: HFU counts the recomputed forward): full recompute redoes every layer's
    # forward, selective only the attention core.
    attention = counts.attention_flop_per_token(model, 1, causal_half=False) * p.seq_len
    layer_fwd_flop = counts.matmul_flop_per_token(model) - 2.0 * model.hidden * model.vocab
    redone = np.where(
        p.recompute == 2, layer_fwd_flop + attention, np.where(p.recompute == 1, attention, 0.0)
    )
    hw_rate = model_rate + redone * tokens_step / step / num_gpus
    memory, total = memory_model(model, p, eff, stack, micro_batches)
    peak = cluster.accelerator.peak_bf16_flop_per_s
    return StepArrays(
        step_time_s=step,
        tokens_per_s=tokens_step / step,
        mfu=model_rate / peak,
        hfu=hw_rate / peak,
        model_tflops_per_gpu=model_rate / 1e12,
        hardware_tflops_per_gpu=hw_rate / 1e12,
        memory_bytes=memory,
        memory_total_bytes=total,
        fits=total <= cluster.accelerator.hbm_bytes,
        breakdown_s=breakdown,
    )


def expected_max_normal(n: FloatArray) -> FloatArray:
    """E[max of n standard normals] by Blom's formula Phi^-1((n - 0.375) / (n + 0.25))
    (Blom 1958; within 1% of the exact value for n >= 2: 0.56 at 2, 3.2 at 1,024)."""
    result: FloatArray = special.ndtri((n - 0.375) / (n + 0.25))
    return np.where(n > 1, result, 0.0)


def _model_flop_per_token(model: ModelSpec, p: PlanBatch) -> FloatArray:
    """Megatron's model FLOPs per token (6N-style matmuls plus full-square attention)."""
    matmul = counts.matmul_flop_per_token(model)
    attention = counts.attention_flop_per_token(model, 1, causal_half=False)
    return 3.0 * (matmul + attention * p.seq_len)
