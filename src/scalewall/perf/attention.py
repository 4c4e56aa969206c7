"""Attention of one layer: the fused (flash) or unfused core, the projections' shapes, and
context-parallel exchange (ring or all-to-all), per GPU, over a batch of plans."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from scalewall.catalog.schema import ModelSpec
from scalewall.perf import collectives as coll
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.perf.batch import CP_MODE, PlanBatch
from scalewall.perf.compute import (
    ACT_BYTES,
    Device,
    gemm_time_s,
    memory_bound_time_s,
)
from scalewall.plan.topology import Cluster

FloatArray = NDArray[np.float64]


def head_dims(model: ModelSpec) -> tuple[float, float]:
    """Query/key and value head widths (MLA: 128 no-RoPE + 64 RoPE and 128 for DeepSeek-V3)."""
    if model.kv_lora_rank:
        return float(model.qk_nope_head_dim + model.qk_rope_head_dim), float(model.v_head_dim)
    d = float(model.head_size)
    return d, d


def head_width_factor(head_dim: float, eff: Efficiency) -> float:
    """A fused kernel's rate at head width ``head_dim`` over its rate at the width its
    fractions are quoted at: d / (d + d_half) against the reference width's."""
    half = eff.attention.attention_half_head_dim
    ref = eff.attention.attention_reference_head_dim
    return (head_dim / (head_dim + half)) / (ref / (ref + half))


def keys_per_query(seq_len: FloatArray, window: int) -> FloatArray:
    """Mean keys a causal query attends to: s/2, or w (1 - w / 2s) under a sliding window
    w < s (the first w queries see fewer than w keys); ``window`` 0 is full attention."""
    half: FloatArray = seq_len * 0.5
    if not window:
        return half
    w = float(window)
    result: FloatArray = np.where(w < seq_len, w * (1.0 - w / (2.0 * seq_len)), half)
    return result


def attention_times(
    model: ModelSpec, p: PlanBatch, dev: Device, eff: Efficiency, stack: Stack
) -> tuple[FloatArray, ...]:
    """Forward time, backward time and selective-recompute time of the attention core (scores
    and context) of one layer, per GPU: the mean over the model's windowed and full layers
    (``ModelSpec.attention_windows``). Attention stays in BF16 under every FP8 recipe."""
    parts = [
        tuple(share * t for t in _attention_times(model, p, dev, eff, stack, window))
        for window, share in model.attention_windows
    ]
    if len(parts) == 1:
        return parts[0]
    return tuple(a + b for a, b in zip(*parts, strict=True))


def _attention_times(
    model: ModelSpec, p: PlanBatch, dev: Device, eff: Efficiency, stack: Stack, window: int
) -> tuple[FloatArray, ...]:
    """``attention_times`` for layers that see ``window`` keys (0: the whole sequence)."""
    heads = model.heads / p.tp
    d_qk, d_v = head_dims(model)
    tokens = p.micro_batch * p.seq_len / p.cp
    if stack.flash_attention:
        # A causal kernel skips the masked half; with CP, causal load balancing gives each rank
        # the same share. FlashAttention's backward recomputes the scores: 2.5x forward FLOPs.
        flop = 2.0 * tokens * keys_per_query(p.seq_len, window) * heads * (d_qk + d_v)
        frac, half = dev.attention_frac, dev.attention_half_tokens
        if stack.attention_kernel_frac > 0:
            frac = stack.attention_kernel_frac * dev.clock_frac
            half = eff.attention.attention_half_tokens
        # Keys one kernel call loops over: the sequence (or window), or one ring step's chunk.
        keys = np.where((p.cp > 1) & (p.cp_mode == CP_MODE["ring"]), p.seq_len / p.cp, p.seq_len)
        if window:
            keys = np.minimum(keys, float(window))
        rate = frac * keys / (keys + half)
        rate = rate * head_width_factor(0.5 * (d_qk + d_v), eff)
        forward = flop / (dev.peak_bf16_flop_per_s * rate)
        return forward, 2.5 * forward, np.zeros_like(forward)
    # Unfused (Megatron 2021-22): QK^T and AV as batched GEMMs over the full s x s square, then
    # scale-mask-softmax and dropout stream the scores through HBM.
    batch = p.micro_batch * heads
    s = p.seq_len / p.cp
    span = p.seq_len
    if window:
        span = np.minimum(p.seq_len, float(window))
    qk = gemm_time_s(s, span, d_qk, dev, eff, batch=batch)
    av = gemm_time_s(s, d_v, span, dev, eff, batch=batch)
    scores = batch * s * span
    per_score = eff.attention.unfused_attention_bytes_per_score + (
        eff.attention.attention_dropout_bytes_per_score if model.dropout else 0.0
    )
    fused = softmax_fused(stack, p.micro_batch, heads, s, span)
    extra_f = np.where(fused, 0.0, eff.attention.softmax_fallback_bytes_per_score_fwd)
    extra_b = np.where(fused, 0.0, eff.attention.softmax_fallback_bytes_per_score_bwd)
    gemms = qk + av
    forward = gemms + memory_bound_time_s(scores * (per_score + extra_f), dev, eff)
    backward = 2.0 * gemms + memory_bound_time_s(scores * (2.0 * per_score + extra_b), dev, eff)
    return forward, backward, forward


def batches_per_block(keys: FloatArray) -> FloatArray:
    """Rows of the score matrix one 128-thread block of Megatron's scaled masked softmax
    kernel takes, by the key length it is given (``get_batch_per_block`` in
    ``megatron/fused_kernels/scaled_masked_softmax.h``): warps of min(2^ceil(log2 k), 32)
    threads, two rows per warp up to 128 keys and one beyond."""
    pow2 = 2.0 ** np.ceil(np.log2(np.maximum(keys, 1.0)))
    warp = np.minimum(pow2, 32.0)
    result: FloatArray = (128.0 / warp) * np.where(pow2 <= 128.0, 2.0, 1.0)
    return result


def softmax_fused(
    stack: Stack, micro_batch: FloatArray, heads: FloatArray, queries: FloatArray, keys: Any
) -> NDArray[np.bool_]:
    """Whether the unfused attention core runs the fused causal scale-mask-softmax kernel
    (``Stack.softmax_fusion``): Megatron's ``is_kernel_available`` on the [b, np, sq, sk] scores
    of one GPU."""
    keys = np.broadcast_to(np.asarray(keys, dtype=np.float64), np.shape(queries))
    if stack.softmax_fusion == "always":
        return np.ones(np.shape(queries), dtype=np.bool_)
    batches = micro_batch * heads
    block_of = heads if stack.softmax_fusion == "heads-as-keys" else keys
    ok: NDArray[np.bool_] = (
        (keys > 16.0)
        & (keys <= stack.softmax_fusion_max_keys)
        & (np.mod(queries, 4.0) == 0.0)
        & (np.mod(batches, 4.0) == 0.0)
        & (np.mod(batches, batches_per_block(block_of)) == 0.0)
    )
    return ok


def attention_linears(model: ModelSpec, tp: FloatArray) -> list[tuple[Any, Any]]:
    """(n_out, k_in) of the attention projections on one GPU. MLA (DeepSeek-V2/V3): the
    down projections to the query and KV latents are replicated over TP, the up projections
    to the heads and the output projection are split."""
    hidden, heads = float(model.hidden), float(model.heads)
    if model.kv_lora_rank:
        d_qk, d_v = head_dims(model)
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
    # A gated attention's query projection carries the gate too (Qwen3-Next, Qwen3.5).
    gate = heads if model.attention_output_gate else 0.0
    return [((heads + gate + 2.0 * kv) * d / tp, hidden), (hidden, heads * d / tp)]


def cp_times(
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
    if not (p.cp > 1).any():
        # No context parallelism in the batch: nothing exchanged (a single estimate skips
        # the collectives below, whose rows would all be masked to 0).
        zero = np.zeros_like(p.cp)
        return zero, zero.copy()
    tokens = p.micro_batch * p.seq_len / p.cp
    d_qk, d_v = head_dims(model)
    kv_per_token = model.kv_heads * (d_qk + d_v)
    kv_bytes = tokens * kv_per_token / np.minimum(p.tp, model.kv_heads) * ACT_BYTES
    steps = p.cp - 1.0
    ring_f = steps * coll.p2p_time_s(cluster, eff, p.tp, kv_bytes)
    ring_fwd = np.maximum(ring_f - attn_fwd, 0.0)
    ring_bwd = np.maximum(2.0 * ring_f - attn_bwd, 0.0)
    qkvo = model.heads * (d_qk + d_v) + kv_per_token
    qkvo_bytes = tokens * qkvo / p.tp * ACT_BYTES
    a2a = coll.alltoall_time_s(cluster, eff, p.cp, p.tp, qkvo_bytes)
    fwd = np.where(p.cp > 1, np.where(p.cp_mode == CP_MODE["ring"], ring_fwd, a2a), 0.0)
    bwd = np.where(p.cp > 1, np.where(p.cp_mode == CP_MODE["ring"], ring_bwd, a2a), 0.0)
    return fwd, bwd
