"""The training-step model: time, memory and FLOPs of one optimizer step, over a batch of plans.

Notation per GPU: t = tp, c = cp, b = micro-batch, s = sequence length, T = b*s/c token rows a
GPU processes per micro-batch, m = micro-batches per step, D, F, H, K, d, V from the model.

A step of a pipeline stage is m micro-batches of forward + backward. With the slowest stage
taking ``t_max`` per micro-batch and all stages together ``t_sum``, (interleaved) 1F1B takes
``m * t_max + (t_sum - t_max) / vpp`` (Narayanan et al. SC'21, Sec. 2.2: bubble (p-1)/(v m) for
equal stages). Data-parallel gradient traffic, the optimizer step and fixed overheads follow.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import special

from scalewall.catalog.schema import ModelSpec
from scalewall.perf import collectives as coll
from scalewall.perf import moe
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.perf.batch import PlanBatch
from scalewall.perf.compute import (
    Device,
    gemm_time_s,
    linear_time_s,
    memory_bound_time_s,
)
from scalewall.plan.plan import PRECISIONS
from scalewall.plan.topology import Cluster
from scalewall.workload import counts

FloatArray = NDArray[np.float64]

ACT_BYTES = 2.0  # bf16/fp16 activations
WEIGHT_BYTES = 2.0  # low-precision weight copy used by the GEMMs

BREAKDOWN_PARTS = (
    "compute",
    "recompute",
    "tp_comm",
    "cp_comm",
    "ep_comm",
    "moe_imbalance",
    "host_overhead",
    "pp_comm",
    "pipeline_bubble",
    "dp_comm",
    "fsdp_comm",
    "step_sync",
    "optimizer",
    "straggler",
    "other",
)


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
    """The plan's memory is within the accelerator's usable HBM (``hbm_capacity_bytes``)."""
    breakdown_s: dict[str, FloatArray]
    """Per part of the step time; the parts add up to ``step_time_s``."""
    memory_headroom_frac: FloatArray
    """1 - memory_total_bytes / usable HBM: negative where the plan is predicted not to fit."""
    near_memory_limit: NDArray[np.bool_]
    """The headroom is within ``Efficiency.memory_fit_margin_frac`` of zero either way: the
    memory model cannot tell whether the plan fits."""


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
    fwd_ep: FloatArray
    """Exposed expert all-to-all (dispatch and combine) of an MoE layer; 0 for a dense one."""
    bwd_ep: FloatArray
    ep_overhead: FloatArray
    """Compute lost to the SMs the overlapped all-to-all occupies (inside the compute times)."""
    imbalance: FloatArray
    """What the busiest expert-parallel rank spends over the mean one: expert GEMMs (inside
    the compute times) and all-to-all (``imbalance_comm``, inside the EP times)."""
    imbalance_comm: FloatArray
    fwd_host: FloatArray
    """Time the GPU waits for the host to issue the layer's operations, forward."""
    bwd_host: FloatArray

    @property
    def fwd(self) -> FloatArray:
        return self.fwd_compute + self.fwd_tp + self.fwd_cp + self.fwd_ep + self.fwd_host

    @property
    def bwd(self) -> FloatArray:
        return (
            self.bwd_compute
            + self.bwd_tp
            + self.bwd_cp
            + self.bwd_ep
            + self.recompute
            + self.bwd_host
        )

    def take(self, index: NDArray[np.intp]) -> _LayerTimes:
        """The times of the given rows."""
        return _LayerTimes(**{f.name: getattr(self, f.name)[index] for f in fields(self)})

    def parts(self) -> dict[str, FloatArray]:
        """The layer's time by breakdown part (compute is what the others leave of total)."""
        return {
            "recompute": self.recompute,
            "tp_comm": self.fwd_tp + self.bwd_tp,
            "cp_comm": self.fwd_cp + self.bwd_cp,
            "ep_comm": self.fwd_ep + self.bwd_ep + self.ep_overhead - self.imbalance_comm,
            "moe_imbalance": self.imbalance,
            "host_overhead": self.fwd_host + self.bwd_host,
            "total": self.fwd + self.bwd,
        }


def _head_dims(model: ModelSpec) -> tuple[float, float]:
    """Query/key and value head widths (MLA: 128 no-RoPE + 64 RoPE and 128 for DeepSeek-V3)."""
    if model.kv_lora_rank:
        return float(model.qk_nope_head_dim + model.qk_rope_head_dim), float(model.v_head_dim)
    d = float(model.head_size)
    return d, d


def _keys_per_query(model: ModelSpec, seq_len: FloatArray) -> FloatArray:
    """Mean keys a causal query attends to: s/2, or w (1 - w / 2s) under a sliding window
    w < s (the first w queries see fewer than w keys)."""
    half: FloatArray = seq_len * 0.5
    if not model.sliding_window:
        return half
    w = float(model.sliding_window)
    result: FloatArray = np.where(w < seq_len, w * (1.0 - w / (2.0 * seq_len)), half)
    return result


def _attention_times(
    model: ModelSpec, p: PlanBatch, dev: Device, eff: Efficiency, stack: Stack
) -> tuple[FloatArray, ...]:
    """Forward time, backward time and selective-recompute time of the attention core (scores
    and context) of one layer, per GPU. Attention stays in BF16 under every FP8 recipe."""
    heads = model.heads / p.tp
    d_qk, d_v = _head_dims(model)
    tokens = p.micro_batch * p.seq_len / p.cp
    if stack.flash_attention:
        # A causal kernel skips the masked half; with CP, causal load balancing gives each rank
        # the same share. FlashAttention's backward recomputes the scores: 2.5x forward FLOPs.
        flop = 2.0 * tokens * _keys_per_query(model, p.seq_len) * heads * (d_qk + d_v)
        frac = dev.attention_frac
        if stack.attention_kernel_frac > 0:
            frac = stack.attention_kernel_frac * dev.clock_frac
        # Keys one kernel call loops over: the sequence (or window), or one ring step's chunk.
        keys = np.where((p.cp > 1) & (p.cp_mode == 0), p.seq_len / p.cp, p.seq_len)
        if model.sliding_window:
            keys = np.minimum(keys, float(model.sliding_window))
        rate = frac * keys / (keys + eff.attention_half_tokens)
        forward = flop / (dev.peak_bf16_flop_per_s * rate)
        return forward, 2.5 * forward, np.zeros_like(forward)
    # Unfused (Megatron 2021-22): QK^T and AV as batched GEMMs over the full s x s square, then
    # scale-mask-softmax and dropout stream the scores through HBM.
    batch = p.micro_batch * heads
    s = p.seq_len / p.cp
    span = p.seq_len
    if model.sliding_window:
        span = np.minimum(p.seq_len, float(model.sliding_window))
    qk = gemm_time_s(s, span, d_qk, dev, eff, batch=batch)
    av = gemm_time_s(s, d_v, span, dev, eff, batch=batch)
    scores = batch * s * span
    per_score = eff.unfused_attention_bytes_per_score + (
        eff.attention_dropout_bytes_per_score if model.dropout else 0.0
    )
    elementwise = memory_bound_time_s(scores * per_score, dev, eff)
    forward = qk + av + elementwise
    return forward, 2.0 * forward, forward


def _attention_linears(model: ModelSpec, tp: FloatArray) -> list[tuple[Any, Any]]:
    """(n_out, k_in) of the attention projections on one GPU. MLA (DeepSeek-V2/V3): the
    down projections to the query and KV latents are replicated over TP, the up projections
    to the heads and the output projection are split."""
    hidden, heads = float(model.hidden), float(model.heads)
    if model.kv_lora_rank:
        d_qk, d_v = _head_dims(model)
        kv_latent = float(model.kv_lora_rank)
        out: list[tuple[Any, Any]] = []
        if model.q_lora_rank:
            out += [(float(model.q_lora_rank), hidden), (heads * d_qk / tp, model.q_lora_rank)]
        else:
            out.append((heads * d_qk / tp, hidden))
        out += [
            (kv_latent + model.qk_rope_head_dim, hidden),
            (heads * (model.qk_nope_head_dim + d_v) / tp, kv_latent),
            (hidden, heads * d_v / tp),
        ]
        return out
    d, kv = float(model.head_size), float(model.kv_heads)
    return [((heads + 2.0 * kv) * d / tp, hidden), (hidden, heads * d / tp)]


def _cast_bytes(dev: Device, eff: Efficiency) -> FloatArray:
    """HBM bytes per element cast to FP8: the cast, plus per-tensor scaling's amax pass."""
    per_tensor = dev.precision_code == PRECISIONS.index("fp8")
    result: FloatArray = eff.fp8_cast_bytes_per_element + np.where(
        per_tensor, eff.fp8_amax_bytes_per_element, 0.0
    )
    return result


def _layer_times(
    model: ModelSpec,
    cluster: Cluster,
    p: PlanBatch,
    dev: Device,
    eff: Efficiency,
    stack: Stack,
    moe_layer: bool = False,
) -> _LayerTimes:
    """One dense layer, or with ``moe_layer`` one MoE layer (shared experts in place of the
    dense FFN, router, routed experts, expert all-to-all)."""
    tp = p.tp
    tokens = p.micro_batch * p.seq_len / p.cp
    hidden = float(model.hidden)
    ffn = float(model.shared_experts * model.expert_ffn_hidden if moe_layer else model.ffn_hidden)
    up_width = ffn * moe.swiglu_factor(model)
    shapes = _attention_linears(model, tp)
    if ffn > 0:
        shapes += [(up_width / tp, hidden), (hidden, ffn / tp)]
    # All linears of the layer in one call: one row per linear, one column per plan.
    n_arr = np.stack(
        [np.broadcast_to(np.asarray(n, dtype=np.float64), tokens.shape) for n, _ in shapes]
    )
    k_arr = np.stack(
        [np.broadcast_to(np.asarray(k, dtype=np.float64), tokens.shape) for _, k in shapes]
    )
    f, b = linear_time_s(tokens[np.newaxis, :], n_arr, k_arr, dev, eff)
    fwd, bwd = f.sum(axis=0), b.sum(axis=0)
    cast = (tokens * (n_arr + k_arr)).sum(axis=0)
    attn_f, attn_b, attn_re = _attention_times(model, p, dev, eff, stack)
    norm_tokens = np.where(p.sequence_parallel > 0, tokens / tp, tokens)
    per_hidden = stack.elementwise_bytes_per_hidden + (
        eff.dropout_bytes_per_hidden if model.dropout else 0.0
    )
    elem_bytes = (
        norm_tokens * hidden * per_hidden + tokens * up_width / tp * stack.elementwise_bytes_per_ffn
    )
    zero = np.zeros_like(tokens)
    imbalance, ep_f, ep_b, etp_comm = zero, zero, zero, zero
    if moe_layer:
        routed = moe.routed_expert_times(model, p, dev, eff, stack, tokens)
        experts = model.routed_experts * np.ones_like(tokens)
        rf, rb = linear_time_s(norm_tokens, experts, hidden + zero, dev.without_fp8(), eff)
        fwd, bwd = fwd + routed.fwd + rf, bwd + routed.bwd + rb
        elem_bytes = elem_bytes + routed.elementwise_bytes
        cast = cast + routed.cast_elements
        imbalance = routed.imbalance
        ep_f, ep_b = moe.expert_comm_times(model, cluster, p, eff, stack, tokens)
        etp_comm = moe.expert_tp_comm_time(model, cluster, p, eff, stack, tokens)
    elem = memory_bound_time_s(elem_bytes, dev, eff)
    cast_time = np.where(dev.fp8, memory_bound_time_s(cast * _cast_bytes(dev, eff), dev, eff), 0.0)
    fwd_compute = fwd + attn_f + elem / 3.0 + cast_time / 2.0
    bwd_compute = bwd + attn_b + elem * 2.0 / 3.0 + cast_time / 2.0
    # TP/SP: per layer two all-reduces (or reduce-scatter + all-gather pairs with SP) forward
    # and two backward, each of the full [T, D] activation (Korthikanti et al. 2022, Sec. 4.2).
    message = tokens * hidden * ACT_BYTES
    one = np.ones_like(tokens)
    tp_total = 2.0 * np.where(
        p.sequence_parallel > 0,
        2.0 * coll.reduce_scatter_time_s(cluster, eff, tp, one, message),
        coll.allreduce_time_s(cluster, eff, tp, one, message),
    )
    tp_total = tp_total + etp_comm
    # The hidden share still costs compute: communication kernels take SMs and HBM bandwidth.
    hidden_share = stack.tp_comm_overlap_frac * (1.0 - eff.overlap_compute_slowdown_frac)
    tp_fwd = tp_total * (1.0 - hidden_share)
    cp_fwd, cp_bwd = _cp_times(model, cluster, p, eff, attn_f, attn_b)
    ep_fwd, ep_bwd, overhead, imbalance_comm = zero, zero, zero, zero
    if moe_layer:
        ep_fwd, ep_bwd, overhead, imbalance_comm = _ep_exposed(
            p, stack, ep_f, ep_b, fwd_compute + bwd_compute
        )
        share = fwd_compute / (fwd_compute + bwd_compute)
        fwd_compute = fwd_compute + overhead * share
        bwd_compute = bwd_compute + overhead * (1.0 - share)
        imbalance = imbalance + imbalance_comm
    full = p.recompute == 2
    recompute = np.where(
        full, fwd_compute + tp_fwd + cp_fwd + ep_fwd, np.where(p.recompute == 1, attn_re, 0.0)
    )
    host_f = _host_issue_s(model, p, eff, stack, moe_layer)
    host_b = host_f * (eff.host_ops_bwd_ratio + np.where(full, 1.0, 0.0))
    gpu_f = fwd_compute + tp_fwd + cp_fwd + ep_fwd
    gpu_b = bwd_compute + tp_fwd + cp_bwd + ep_bwd + recompute
    return _LayerTimes(
        fwd_compute=fwd_compute,
        bwd_compute=bwd_compute,
        fwd_tp=tp_fwd,
        bwd_tp=tp_fwd,
        fwd_cp=cp_fwd,
        bwd_cp=cp_bwd,
        recompute=recompute,
        fwd_ep=ep_fwd,
        bwd_ep=ep_bwd,
        ep_overhead=overhead,
        imbalance=imbalance,
        imbalance_comm=imbalance_comm,
        fwd_host=np.maximum(host_f - gpu_f, 0.0),
        bwd_host=np.maximum(host_b - gpu_b, 0.0),
    )


def _host_issue_s(
    model: ModelSpec, p: PlanBatch, eff: Efficiency, stack: Stack, moe_layer: bool
) -> FloatArray:
    """Host time to issue one layer's forward operations outside the stack's CUDA graphs.

    The host runs ahead of the GPU, so only the excess of this over the layer's GPU time is
    lost. ``router`` replays an MoE layer's router and dispatch preprocessing from a graph,
    ``attention`` the attention block as well; ``layer`` and ``full`` capture everything."""
    one = np.ones_like(p.tp)
    if stack.cuda_graphs in ("layer", "full"):
        return 0.0 * one
    attention = eff.host_ops_attention_fwd + (
        eff.host_ops_mla_extra_fwd if model.kv_lora_rank else 0.0
    )
    if moe_layer:
        ffn = eff.host_ops_moe_fwd + eff.host_ops_per_local_expert_fwd * (
            model.routed_experts / p.ep
        )
        if stack.cuda_graphs in ("router", "attention"):
            ffn = ffn - eff.host_ops_router_fwd
        if model.shared_experts:
            ffn = ffn + eff.host_ops_mlp_fwd
    else:
        ffn = eff.host_ops_mlp_fwd * one
    ops = ffn if stack.cuda_graphs == "attention" else ffn + attention
    result: FloatArray = ops * eff.host_op_s * one
    return result


LAYER_FIELDS = (
    "tp",
    "cp",
    "ep",
    "etp",
    "micro_batch",
    "seq_len",
    "recompute",
    "sequence_parallel",
    "cp_mode",
    "precision",
)
"""The plan fields a layer's forward and backward times depend on (not pp, dp, ZeRO or the
batch): plans that agree on them share their layer times."""


def distinct_rows(
    p: PlanBatch, names: tuple[str, ...]
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """The first row of each distinct combination of the ``names`` columns, and for every row
    the index of its combination among those (hash-based factorisation, linear in rows)."""
    if p.tp.size <= 1:
        # One plan (a single estimate): nothing to share, and no factorisation to pay for.
        return np.arange(p.tp.size, dtype=np.intp), np.zeros(p.tp.size, dtype=np.intp)
    key = np.zeros(p.tp.shape, dtype=np.int64)
    for name in names:
        codes, uniques = pd.factorize(getattr(p, name))
        key, _ = pd.factorize(key * len(uniques) + codes)
    count = int(key.max()) + 1 if key.size else 0
    first = np.empty(count, dtype=np.intp)
    rows = np.arange(key.size, dtype=np.intp)
    first[key[::-1]] = rows[::-1]
    return first, key.astype(np.intp)


def _distinct_layer_times(
    model: ModelSpec, cluster: Cluster, p: PlanBatch, eff: Efficiency, stack: Stack
) -> tuple[_LayerTimes, _LayerTimes | None]:
    """Dense and MoE layer times, computed once per distinct layer configuration (a search
    batch holds many plans that differ only in pp, dp, ZeRO or the layer split). Constants
    given as arrays (one value per plan, as calibration's interval draws pass them) pair
    with the rows as they are, so such a batch is evaluated row by row."""
    per_row = any(
        not isinstance(v, int | float | str | bool) and np.ndim(v) > 0 for v in vars(eff).values()
    )
    if per_row or np.ndim(cluster.accelerator.training_clock_frac) > 0:
        first = inverse = np.arange(p.tp.size, dtype=np.intp)
    else:
        first, inverse = distinct_rows(p, LAYER_FIELDS)
    # Every row its own configuration (or a single plan): no gather needed either way.
    identity = first.size == p.tp.size and np.array_equal(first, inverse)
    sub = p if identity else p.take(first)
    dev = Device.of(cluster.accelerator, sub.precision, eff)

    def spread(times: _LayerTimes) -> _LayerTimes:
        return times if identity else times.take(inverse)

    dense = spread(_layer_times(model, cluster, sub, dev, eff, stack))
    if not model.is_moe:
        return dense, None
    return dense, spread(_layer_times(model, cluster, sub, dev, eff, stack, True))


def _ep_exposed(
    p: PlanBatch, stack: Stack, ep_f: FloatArray, ep_b: FloatArray, compute: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Exposed all-to-all forward and backward, the compute lost to the SMs the overlap takes,
    and the exposed all-to-all's imbalance share.

    The busiest rank receives f x the mean tokens. ``ep_comm_overlap_frac`` of the all-to-all
    hides behind another micro-batch's computation, at most the layer's own compute time;
    while it does, ``ep_overlap_sm_frac`` of the SMs run communication: compute / (1 - s)."""
    load = moe.load_factor(stack)
    raw_f, raw_b = ep_f * load, ep_b * load
    total = raw_f + raw_b
    hidden = np.minimum(stack.ep_comm_overlap_frac * total, compute)
    keep = np.where(total > 0, (total - hidden) / np.maximum(total, 1e-30), 0.0)
    overlapping = (p.ep > 1) & (stack.ep_comm_overlap_frac > 0)
    sm = stack.ep_overlap_sm_frac
    overhead = np.where(overlapping, compute * sm / (1.0 - sm), 0.0)
    exposed_f, exposed_b = raw_f * keep, raw_b * keep
    return exposed_f, exposed_b, overhead, (exposed_f + exposed_b) * (1.0 - 1.0 / load)


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
    attention on the shard it holds; backward also returns dK, dV (twice the bytes). Causal
    load balancing (each rank holds chunks i and 2c-1-i) gives every rank the same attention
    work, so the overlap window is the rank's whole attention time.
    All-to-all (DeepSpeed-Ulysses): Q, K, V and the output are exchanged between sequence and
    head sharding (4 all-to-alls forward, 4 backward), not overlapped; needs tp x cp | heads.
    """
    tokens = p.micro_batch * p.seq_len / p.cp
    d_qk, d_v = _head_dims(model)
    kv_per_token = model.kv_heads * (d_qk + d_v)
    kv_bytes = tokens * kv_per_token / np.minimum(p.tp, model.kv_heads) * ACT_BYTES
    steps = p.cp - 1.0
    ring_f = steps * coll.p2p_time_s(cluster, eff, p.tp, kv_bytes)
    ring_fwd = np.maximum(ring_f - attn_fwd, 0.0)
    ring_bwd = np.maximum(2.0 * ring_f - attn_bwd, 0.0)
    qkvo = model.heads * (d_qk + d_v) + kv_per_token
    qkvo_bytes = tokens * qkvo / p.tp * ACT_BYTES
    a2a = coll.alltoall_time_s(cluster, eff, p.cp, p.tp, qkvo_bytes)
    fwd = np.where(p.cp > 1, np.where(p.cp_mode == 0, ring_fwd, a2a), 0.0)
    bwd = np.where(p.cp > 1, np.where(p.cp_mode == 0, ring_bwd, a2a), 0.0)
    return fwd, bwd


def _head_times(
    model: ModelSpec, p: PlanBatch, dev: Device, eff: Efficiency, stack: Stack
) -> tuple[FloatArray, FloatArray]:
    """Output layer (logits, in BF16 under FP8 recipes) and loss on the last stage: forward
    and backward time."""
    tokens = p.micro_batch * p.seq_len / p.cp
    vocab = model.vocab / p.tp
    one = np.ones_like(tokens)
    f, b = linear_time_s(tokens, vocab * one, model.hidden * one, dev.without_fp8(), eff)
    loss = memory_bound_time_s(tokens * vocab * stack.loss_bytes_per_logit, dev, eff)
    return f + loss / 3.0, b + loss * 2.0 / 3.0


def _mtp_times(
    model: ModelSpec,
    p: PlanBatch,
    dev: Device,
    eff: Efficiency,
    layer: _LayerTimes,
    head: tuple[FloatArray, FloatArray],
) -> tuple[FloatArray, FloatArray]:
    """Multi-token prediction modules on the last stage (DeepSeek-V3 Sec. 2.2): each is a
    projection of [h; emb] (2D -> D), one transformer layer and the shared output head."""
    tokens = p.micro_batch * p.seq_len / p.cp
    one = np.ones_like(tokens)
    pf, pb = linear_time_s(tokens, model.hidden / p.tp * one, 2.0 * model.hidden * one, dev, eff)
    n = float(model.mtp_layers)
    return n * (pf + layer.fwd + head[0]), n * (pb + layer.bwd + head[1])


def _stage_param_parts(model: ModelSpec, p: PlanBatch) -> dict[str, tuple[FloatArray, FloatArray]]:
    """Parameters per GPU of the first, the busiest middle and the last stage, split into
    those replicated over DP x CP (after TP) and the routed experts (after EP x ETP)."""
    layer = counts.layer_params(model, moe=False).total
    embed = float(model.vocab * model.hidden)
    if model.position_embedding == "learned":
        embed += model.max_seq_len * model.hidden
    out = float(model.vocab * model.hidden)  # tied: the last stage keeps its own copy
    single = p.pp == 1
    mix = moe.stage_layer_mix(model, p)
    if model.is_moe:
        sparse = counts.layer_params(model, moe=True)
        moe_dense = sparse.total - sparse.mlp_routed
        moe_expert = sparse.mlp_routed / (p.ep * p.etp)
    else:
        moe_dense, moe_expert = 0.0, np.zeros_like(p.tp)
    mtp_dense = model.mtp_layers * (
        (moe_dense if model.is_moe else layer) + 2.0 * model.hidden**2 + model.hidden
    )
    mtp_expert = model.mtp_layers * moe_expert

    def dense(name: str) -> FloatArray:
        n_dense, n_moe = mix[name]
        result: FloatArray = n_dense * layer
        return result + n_moe * moe_dense if model.is_moe else result

    first = dense("first") + embed + np.where(single, 0.0 if model.tied_embeddings else out, 0.0)
    last = np.where(single, first, dense("last") + out) + mtp_dense
    expert = {name: mix[name][1] * moe_expert for name in mix}
    return {
        "first": (first / p.tp, expert["first"] + np.where(single, mtp_expert, 0.0)),
        "middle": (dense("middle") / p.tp, expert["middle"]),
        "last": (last / p.tp, expert["last"] + mtp_expert),
    }


def _activation_bytes_per_layer(
    model: ModelSpec, p: PlanBatch, stack: Stack, fp8: NDArray[np.bool_], moe_layer: bool = False
) -> FloatArray:
    """Activation memory one layer keeps for backward, per micro-batch per GPU.

    Korthikanti et al. 2022 (eq. 1-2): replicated part (norm inputs 4D, linear inputs 4D,
    dropout masks 2D) plus TP-sharded part (Q, K, V, projection input, FFN activations and the
    attention scores 5 a s when the kernel is unfused and not recomputed); SP shards it all.
    MLA adds its query and KV latents (replicated); an MoE layer's FFN is its shared experts
    plus the routed experts' copies; a stack that recomputes MLA's up projections under
    selective recompute (``Stack.recompute_mla_up_proj``) keeps no Q, K, V of the heads. FP8
    keeps linear inputs in one byte: 2D of the replicated part, the projection input and the
    FFN down-projection input. Full recompute keeps only the layer input.
    """
    tokens = p.micro_batch * p.seq_len / p.cp
    hidden = float(model.hidden)
    d_qk, d_v = _head_dims(model)
    replicated = (8.0 + (2.0 if model.dropout else 0.0)) * hidden
    if model.kv_lora_rank:
        latents = model.q_lora_rank + model.kv_lora_rank + model.qk_rope_head_dim
        replicated += ACT_BYTES * latents
    ffn = float(model.shared_experts * model.expert_ffn_hidden if moe_layer else model.ffn_hidden)
    ffn_acts = moe.ffn_activation_elements(model) * ffn
    qkvo = model.heads * (d_qk + d_v) + model.kv_heads * (d_qk + d_v)
    sharded: FloatArray | float = 2.0 * qkvo
    if model.kv_lora_rank and stack.recompute_mla_up_proj:
        # Q, K and V are rebuilt from the latents in backward: only the context is kept.
        sharded = np.where(p.recompute == 1, 2.0 * model.heads * d_v, sharded)
    sharded = sharded + ffn_acts
    if not stack.flash_attention:
        scores = (5.0 if model.dropout else 2.0) * model.heads * p.seq_len
        sharded = sharded + np.where(p.recompute == 0, scores, 0.0)
    per_token = np.where(
        p.sequence_parallel > 0, (replicated + sharded) / p.tp, replicated + sharded / p.tp
    )
    per_token = per_token - np.where(
        fp8, 2.0 * hidden / np.where(p.sequence_parallel > 0, p.tp, 1.0), 0.0
    )
    per_token = per_token - np.where(fp8, (model.heads * d_v + ffn) / p.tp, 0.0)
    layer_input = np.where(p.sequence_parallel > 0, ACT_BYTES * hidden / p.tp, ACT_BYTES * hidden)
    result: FloatArray = tokens * np.where(p.recompute == 2, layer_input, per_token)
    if moe_layer:
        routed = moe.routed_activation_bytes(model, p, stack, tokens, fp8)
        result = result + np.where(p.recompute == 2, 0.0, routed)
    return result


def _stage_activations(
    model: ModelSpec, p: PlanBatch, stack: Stack, fp8: NDArray[np.bool_]
) -> dict[str, FloatArray]:
    """Activation bytes of one micro-batch through each stage's layers."""
    dense = _activation_bytes_per_layer(model, p, stack, fp8)
    sparse = _activation_bytes_per_layer(model, p, stack, fp8, True) if model.is_moe else dense
    out: dict[str, FloatArray] = {}
    for name, (n_dense, n_moe) in moe.stage_layer_mix(model, p).items():
        out[name] = n_dense * dense + n_moe * sparse if model.is_moe else n_dense * dense
    mtp = model.mtp_layers * sparse
    out["last"] = out["last"] + mtp if model.mtp_layers else out["last"]
    return out


def _largest_layer_params(model: ModelSpec, p: PlanBatch) -> FloatArray:
    """Parameters one GPU holds of its largest layer once ZeRO-3 has gathered it: the layer's
    replicated weights over TP, its routed experts over EP x ETP."""
    dense = counts.layer_params(model, moe=False).total / p.tp
    if not model.is_moe:
        result: FloatArray = dense
        return result
    sparse = counts.layer_params(model, moe=True)
    routed = sparse.mlp_routed / (p.ep * p.etp)
    moe_layer = (sparse.total - sparse.mlp_routed) / p.tp + routed
    has_dense = model.first_dense_layers > 0 or model.moe_layer_freq > 1
    result = np.maximum(moe_layer, dense) if has_dense else moe_layer
    return result


def _weight_bytes_per_param(eff: Efficiency, stack: Stack, fp8: NDArray[np.bool_]) -> FloatArray:
    """Bytes per parameter of the weights a rank keeps for its GEMMs (outside the optimizer).

    BF16 training weights (2), plus under FP8 a row-wise and a column-wise FP8 copy
    (``Efficiency.fp8_weight_copy_bytes``). A recipe whose FP8 weights are the only model
    weights (``Stack.fp8_primary_weights``: Megatron-Core ``--fp8-param-gather``, DeepSeek-V3's
    FP32 master weights cast straight to FP8) keeps no BF16 copy; its full-precision main
    weights are part of the optimizer state."""
    training = np.where(fp8 & stack.fp8_primary_weights, 0.0, WEIGHT_BYTES)
    result: FloatArray = training + np.where(fp8, eff.fp8_weight_copy_bytes, 0.0)
    return result


def _rank_loads(
    model: ModelSpec,
    p: PlanBatch,
    stack: Stack,
    acts: dict[str, FloatArray],
    micro_batches: FloatArray,
) -> list[tuple[tuple[FloatArray, FloatArray], FloatArray]]:
    """(dense, expert) parameters and activation bytes of the candidate most loaded ranks.

    1F1B: the first stage keeps min(m, pp) micro-batches in flight (interleaving adds
    (pp - 1) / (pp vpp) of that; Korthikanti et al. 2022, Sec. 4.2.3), the last one micro-batch
    plus the logits. DualPipe (DeepSeek-V3 report Sec. 3.2.1, Table 2): a rank holds stage i
    of one direction and stage pp - 1 - i of the other, so the first rank holds the first and
    the last stage ("two copies of the model parameters" of 1F1B's one stage), with pp + 1
    micro-batch chunks of activations in flight, counted here at the first stage's size."""
    params = _stage_param_parts(model, p)
    tokens = p.micro_batch * p.seq_len / p.cp
    logits = tokens * model.vocab / p.tp * (ACT_BYTES + 4.0)
    if stack.dualpipe:
        in_flight = np.minimum(micro_batches, p.pp + 1.0)
        single = p.pp == 1
        edge = tuple(
            np.where(single, params["first"][i], params["first"][i] + params["last"][i])
            for i in (0, 1)
        )
        middle = tuple(2.0 * params["middle"][i] for i in (0, 1))
        return [
            ((edge[0], edge[1]), acts["first"] * in_flight + logits),
            ((middle[0], middle[1]), np.where(p.pp > 2, acts["middle"] * in_flight, 0.0)),
        ]
    in_flight = np.minimum(micro_batches, p.pp)
    interleave = np.where(p.vpp > 1, 1.0 + (p.pp - 1.0) / (p.pp * p.vpp), 1.0)
    return [
        (params["first"], acts["first"] * in_flight * interleave),
        (params["last"], acts["last"] + logits),
    ]


def memory_model(
    model: ModelSpec, p: PlanBatch, eff: Efficiency, stack: Stack, micro_batches: FloatArray
) -> tuple[dict[str, FloatArray], FloatArray]:
    """Per-GPU memory by part on the most loaded pipeline rank, and the total.

    Per parameter: the GEMMs' weights (``_weight_bytes_per_param``), the main gradient in the
    reduce dtype (``Stack.grad_reduce_bytes``) and the optimizer state
    (``Stack.optimizer_state_bytes``: FP32 main weights and Adam moments), sharded by ZeRO
    stage 3, 2 and 1 respectively over DP x CP for replicated parameters and over the experts'
    data-parallel width tp cp dp / (ep etp) for routed experts (Megatron-Core's distributed
    optimizer with BF16 weights and FP32 gradients: 6 + 12 / d bytes per parameter).
    Cheaper than the full step model: the search calls it to prune plans that do not fit.
    """
    shard = p.dp * p.cp
    expert_shard = p.tp * p.cp * p.dp / (p.ep * p.etp)
    fp8 = p.precision >= 2
    acts = _stage_activations(model, p, stack, fp8)
    tokens = p.micro_batch * p.seq_len / p.cp
    weight_bytes = _weight_bytes_per_param(eff, stack, fp8)
    gathered = np.where(
        p.zero >= 3, eff.zero3_gathered_layers * _largest_layer_params(model, p) * weight_bytes, 0.0
    )

    def sharded(per_param: Any, zero_stage: int, parts: tuple[FloatArray, FloatArray]) -> Any:
        dense_p, expert_p = parts
        dense_b = dense_p * per_param / np.where(p.zero >= zero_stage, shard, 1.0)
        if not model.is_moe:
            return dense_b
        return dense_b + expert_p * per_param / np.where(p.zero >= zero_stage, expert_shard, 1.0)

    best: dict[str, FloatArray] | None = None
    best_total = np.zeros_like(tokens)
    for parts, rank_acts in _rank_loads(model, p, stack, acts, micro_batches):
        part = {
            "weights": sharded(weight_bytes, 3, parts) + gathered,
            "gradients": sharded(stack.grad_reduce_bytes, 2, parts),
            "optimizer_state": sharded(stack.optimizer_state_bytes, 1, parts),
            "activations": rank_acts,
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
    groups = [(p.dp * p.cp, p.tp, dense)]
    expert_group = p.tp * p.cp * p.dp / (p.ep * p.etp)
    has_experts = bool(np.any(expert > 0))
    if has_experts:
        groups.append((expert_group, p.ep * p.etp, expert))
    t_fwd, _ = windows
    grad = np.zeros_like(t_fwd)
    gather = np.zeros_like(t_fwd)
    fsdp = np.zeros_like(t_fwd)
    for index, (group, stride, params) in enumerate(groups):
        grads = params * stack.grad_reduce_bytes
        values = params * stack.param_gather_bytes
        allreduce = coll.allreduce_time_s(cluster, eff, group, stride, grads)
        reduce_scatter = coll.reduce_scatter_time_s(cluster, eff, group, stride, grads)
        all_gather = coll.allgather_time_s(cluster, eff, group, stride, values)
        mask = np.ones_like(t_fwd) if index == 0 else (params > 0) & (group > 1)
        grad = grad + np.where(mask, np.where(p.zero >= 1, reduce_scatter, allreduce), 0.0)
        gather = gather + np.where(mask, all_gather, 0.0)
        layered = _fsdp_exposed_s(cluster, eff, stack, (group, stride, params), layer_work)
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


def _fsdp_exposed_s(
    cluster: Cluster,
    eff: Efficiency,
    stack: Stack,
    group: tuple[FloatArray, FloatArray, FloatArray],
    layer_work: tuple[FloatArray, FloatArray, FloatArray],
) -> FloatArray:
    """Exposed ZeRO-3 / FSDP communication of one micro-batch on one stage.

    FSDP wraps each transformer layer as a unit: forward all-gathers its parameters, backward
    gathers them again and reduce-scatters its gradients (Zhao et al. 2023, arXiv 2304.11277,
    Sec. 3.3). Each is one small collective, so the ring's per-step latency, which grows with
    the group ((n-1) steps for NCCL's ring all-gather and reduce-scatter), is paid L times per
    pass. Prefetch issues layer i+1's gather while layer i computes (``fsdp_prefetch_layers``
    ahead), so per layer only what exceeds that compute shows, and the first gather and the
    last reduce-scatter of a pass are never hidden:
    exposed = c_f + L max(0, c_f - k t_f) + c_b + r + L max(0, c_b + r - k t_b)."""
    n, stride, params = group
    layers, t_fwd, t_bwd = layer_work
    per_layer = params / np.maximum(layers, 1.0)
    gather = coll.allgather_time_s(cluster, eff, n, stride, per_layer * stack.param_gather_bytes)
    scatter = coll.reduce_scatter_time_s(
        cluster, eff, n, stride, per_layer * stack.grad_reduce_bytes
    )
    k = stack.fsdp_prefetch_layers
    f_layer, b_layer = t_fwd / np.maximum(layers, 1.0), t_bwd / np.maximum(layers, 1.0)
    fwd = gather + layers * np.maximum(gather - k * f_layer, 0.0)
    bwd = gather + scatter + layers * np.maximum(gather + scatter - k * b_layer, 0.0)
    total = layers * (2.0 * gather + scatter)
    hidden = np.maximum(total - fwd - bwd, 0.0)
    result: FloatArray = fwd + bwd + eff.overlap_compute_slowdown_frac * hidden
    return result


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


def _stage_sums(
    model: ModelSpec, p: PlanBatch, dense: _LayerTimes, sparse: _LayerTimes | None
) -> dict[str, dict[str, FloatArray]]:
    """Per stage: forward, backward and breakdown parts summed over its dense and MoE layers."""
    out: dict[str, dict[str, FloatArray]] = {}
    dense_parts = dense.parts()
    sparse_parts = sparse.parts() if sparse is not None else {}
    for name, (n_dense, n_moe) in moe.stage_layer_mix(model, p).items():
        sums = {"fwd": n_dense * dense.fwd, "bwd": n_dense * dense.bwd}
        sums.update({k: n_dense * v for k, v in dense_parts.items()})
        if sparse is not None:
            sums["fwd"] = sums["fwd"] + n_moe * sparse.fwd
            sums["bwd"] = sums["bwd"] + n_moe * sparse.bwd
            for k, v in sparse_parts.items():
                sums[k] = sums[k] + n_moe * v
        out[name] = sums
    return out


def step_model(
    model: ModelSpec, cluster: Cluster, p: PlanBatch, eff: Efficiency, stack: Stack
) -> StepArrays:
    """Evaluate every plan of the batch: step time with its breakdown, FLOP rates, memory."""
    dev = Device.of(cluster.accelerator, p.precision, eff)
    micro_batches = p.global_batch / (p.dp * p.micro_batch)
    dense_lt, moe_lt = _distinct_layer_times(model, cluster, p, eff, stack)
    sums = _stage_sums(model, p, dense_lt, moe_lt)
    head_f, head_b = _head_times(model, p, dev, eff, stack)
    last_f, last_b = sums["last"]["fwd"] + head_f, sums["last"]["bwd"] + head_b
    if model.mtp_layers:
        mtp_layer = moe_lt if moe_lt is not None else dense_lt
        mtp_f, mtp_b = _mtp_times(model, p, dev, eff, mtp_layer, (head_f, head_b))
        last_f, last_b = last_f + mtp_f, last_b + mtp_b
    single = p.pp == 1
    t_first = np.where(single, last_f + last_b, sums["first"]["fwd"] + sums["first"]["bwd"])
    t_middle = np.where(p.pp > 2, sums["middle"]["fwd"] + sums["middle"]["bwd"], 0.0)
    t_last = np.where(single, 0.0, last_f + last_b)
    t_max = np.maximum(np.maximum(t_first, t_middle), t_last)
    t_sum = t_first + np.maximum(p.pp - 2.0, 0.0) * t_middle + t_last
    bubble = (t_sum - t_max) / p.vpp
    if stack.dualpipe:
        # DualPipe (DeepSeek-V3 Table 2): (pp/2 - 1) chunk pairs of bubble instead of pp - 1.
        bubble = bubble * np.maximum(p.pp / 2.0 - 1.0, 0.0) / np.maximum(p.pp - 1.0, 1.0)

    # Pipeline point-to-point: per micro-batch and virtual chunk, activations forward and
    # gradients backward to the neighbour stage, tp*cp*dp ranks away.
    tokens = p.micro_batch * p.seq_len / p.cp
    p2p_bytes = tokens * model.hidden * ACT_BYTES / np.where(stack.scatter_gather_p2p, p.tp, 1.0)
    p2p = coll.p2p_time_s(cluster, eff, p.tp * p.cp * p.dp, p2p_bytes)
    p2p_exposed = 1.0 - (eff.pp_p2p_overlap_frac if stack.overlap_p2p else 0.0)
    pp_comm = np.where(
        p.pp > 1, micro_batches * 2.0 * p.vpp * (p2p * p2p_exposed + eff.pp_p2p_sync_s), 0.0
    )

    params = _stage_param_parts(model, p)
    totals = {k: v[0] + v[1] for k, v in params.items()}
    use_first = totals["first"] >= np.where(single, 0.0, totals["last"])
    use_middle = (p.pp > 2) & (totals["middle"] > np.maximum(totals["first"], totals["last"]))
    use_middle &= ~single
    pick = {
        i: np.where(
            use_middle,
            params["middle"][i],
            np.where(use_first, params["first"][i], params["last"][i]),
        )
        for i in (0, 1)
    }
    first_f, first_b = sums["first"]["fwd"], sums["first"]["bwd"]
    window_f = np.where(single, sums["last"]["fwd"], np.maximum(first_f, sums["last"]["fwd"]))
    window_b = np.where(single, sums["last"]["bwd"], np.maximum(first_b, sums["last"]["bwd"]))
    stage_layers = np.where(
        use_middle, p.layers_middle, np.where(use_first, p.layers_first, p.layers_last)
    )
    dp_comm, fsdp_comm = _dp_times(
        cluster,
        p,
        eff,
        stack,
        (pick[0], pick[1]),
        dp_overlap_windows(window_f, window_b, bubble, p.vpp),
        (stage_layers, window_f, window_b),
        micro_batches,
    )
    opt_params = pick[0] / np.where(p.zero >= 1, p.dp * p.cp, 1.0)
    if model.is_moe:
        opt_params = opt_params + pick[1] / np.where(
            p.zero >= 1, p.tp * p.cp * p.dp / (p.ep * p.etp), 1.0
        )
    optimizer = memory_bound_time_s(opt_params * eff.optimizer_bytes_per_param, dev, eff)
    if stack.dualpipe:
        optimizer = 2.0 * optimizer

    # Split m * t_max into named parts in proportion to the critical stage's layer parts.
    steady = micro_batches * t_max
    crit_first = (t_first >= t_max) & ~single
    crit_middle = ~crit_first & (t_middle >= t_max) & (p.pp > 2)

    def critical(key: str) -> FloatArray:
        result: FloatArray = np.where(
            crit_first,
            sums["first"][key],
            np.where(crit_middle, sums["middle"][key], sums["last"][key]),
        )
        return result

    layer_total = critical("total")
    names = ("recompute", "tp_comm", "cp_comm", "ep_comm", "moe_imbalance", "host_overhead")
    breakdown = {k: steady * critical(k) / layer_total for k in names}
    breakdown["compute"] = steady - sum(breakdown.values(), np.zeros_like(steady))
    num_gpus = p.tp * p.pp * p.dp * p.cp
    straggler = (
        (breakdown["compute"] + breakdown["recompute"])
        * eff.rank_jitter_cv
        * (expected_max_normal(num_gpus))
    )
    breakdown.update(
        pp_comm=pp_comm,
        pipeline_bubble=bubble,
        dp_comm=dp_comm,
        fsdp_comm=fsdp_comm,
        step_sync=step_sync_s(cluster, eff, num_gpus),
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
    headroom = 1.0 - total / cluster.accelerator.hbm_capacity_bytes
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
        fits=total <= cluster.accelerator.hbm_capacity_bytes,
        breakdown_s=breakdown,
        memory_headroom_frac=headroom,
        near_memory_limit=np.abs(headroom) <= eff.memory_fit_margin_frac,
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
