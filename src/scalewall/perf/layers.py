"""One layer's forward and backward on one GPU, dense, MoE or a hybrid model's Mamba-2,
attention, MLP or MoE block behind one interface (``layer_times(..., kind)``): GEMMs,
attention, element-wise kernels, TP/SP, CP and EP communication, recompute and host-bound
kernel issue; the output head, MTP modules, and the sums over a stage's layers. Layer times
depend only on ``LAYER_FIELDS`` and are computed once per distinct combination of them
(``distinct_layer_times``)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scalewall.catalog.schema import ModelSpec
from scalewall.perf import collectives as coll
from scalewall.perf import moe
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.perf.attention import (
    attention_linears,
    attention_times,
    cp_times,
)
from scalewall.perf.batch import PRECISION, RECOMPUTE, PlanBatch
from scalewall.perf.compute import (
    ACT_BYTES,
    FP32_BYTES,
    Device,
    linear_time_s,
    memory_bound_time_s,
)
from scalewall.plan.topology import Cluster
from scalewall.workload import counts
from scalewall.workload.counts import LayerKind

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, kw_only=True)
class LayerTimes:
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

    def take(self, index: NDArray[np.intp]) -> LayerTimes:
        """The times of the given rows."""
        return LayerTimes(**{f.name: getattr(self, f.name)[index] for f in fields(self)})

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


def cast_bytes(dev: Device, eff: Efficiency) -> FloatArray:
    """HBM bytes per element cast to FP8 or FP4: the cast, plus the amax pass of per-tensor FP8
    scaling and of NVFP4's per-tensor second-level scale."""
    per_tensor = (dev.precision_code == PRECISION["fp8"]) | dev.fp4
    cast = np.where(
        dev.fp4, eff.layers.fp4_cast_bytes_per_element, eff.layers.fp8_cast_bytes_per_element
    )
    result: FloatArray = cast + np.where(per_tensor, eff.layers.fp8_amax_bytes_per_element, 0.0)
    return result


def latency_bound_share(bytes_per_s_per_sm: Any, dev: Device, eff: Efficiency) -> Any:
    """Share of the part's peak HBM bandwidth an occupancy-bound kernel reaches: the rate each
    of its SMs sustains times the SMs (Little's law: the bytes in flight per SM over the
    memory latency), at most what streaming kernels reach (``hbm_efficiency``)."""
    return np.minimum(
        eff.compute.hbm_efficiency, bytes_per_s_per_sm * dev.sm_count / dev.hbm_bytes_per_s
    )


def mamba_linears(model: ModelSpec, tp: Any) -> list[tuple[Any, Any]]:
    """(n_out, k_in) of a Mamba-2 block's projections on one GPU: the input projection
    column-parallel and the output projection row-parallel over TP, as Megatron-Core's
    ``MambaMixer`` shards heads and groups."""
    width = float(counts.mamba_in_proj_width(model))
    inner = float(counts.mamba_inner(model))
    hidden = float(model.hidden)
    if model.mamba_version == 1:
        # Mamba-1: x_proj (B, C and the step-size rank, from the inner channels) and dt_proj
        # (the rank widened to the channels) sit between the input and output projections;
        # x_proj's small output is summed over TP.
        rank = float(model.mamba_dt_rank)
        x_proj = float(counts.mamba1_x_proj_width(model))
        return [
            (width / tp, hidden),
            (x_proj, inner / tp),
            (inner / tp, rank),
            (hidden, inner / tp),
        ]
    return [(width / tp, hidden), (hidden, inner / tp)]


def gdn_linears(model: ModelSpec, tp: Any) -> list[tuple[Any, Any]]:
    """(n_out, k_in) of a Gated DeltaNet block's projections on one GPU, heads split over TP:
    q, k, v and z with beta and a (``in_proj_qkvz`` and ``in_proj_ba``, one GEMM here), and
    the output projection."""
    _, value, width = counts.gdn_widths(model)
    hidden = float(model.hidden)
    return [(width / tp, hidden), (hidden, value / tp)]


def gdn_core_bytes(model: ModelSpec, seq_len: FloatArray) -> tuple[FloatArray, FloatArray]:
    """HBM bytes per token, forward and backward, of one Gated DeltaNet block's work outside its
    projections, over TP: (streaming kernels, chunk kernels at
    ``Efficiency.layers.linear_attention_bytes_per_s_per_sm``).

    Streaming: the causal convolution reads and writes q, k and v, the gated norm reads the
    output and z and writes its result; backward moves twice the forward bytes, the
    element-wise convention of ``layer_times``. Chunk kernels, per kernel of
    flash-linear-attention's ``chunk_gated_delta_rule`` (2025), in Q and K (query and key rows,
    repeated to the value heads), V (a value-wide row: v, the corrected v, o, do, dv), W and U
    (the WY factors, key- and value-wide), A (the K K^T chunk matrix, C per value head, FP32)
    and S (the chunk states, d_k d_v per value head per chunk, FP32). Forward: K K^T (k; A),
    its triangular solve (A read and written), the WY factors (k, v, A; w, u), the states
    (k, w, u; the states and the corrected v) and the output (q, k, corrected v, states; o):
    Q + 4 K + 4 V + 2 W + 2 U + 4 A + 2 S. Backward (``chunk_gated_delta_rule_bwd``): the WY
    factors and the states again, then the local dv (q, k, do), the state gradients (q, k, w,
    do, dv; dh, dv), dq, dk, dw and dg (q, k, corrected v, w, the states, dv, do, dh), the WY
    backward (k, v, A, dw, du; dk, dv, dbeta) and the sum of the two dk: 4 Q + 11 K + 13 V +
    6 W + 2 U + 2 A + 4 S, near three times the forward's traffic."""
    key, value, _ = counts.gdn_widths(model)
    heads = float(model.linear_value_heads)
    qk = ACT_BYTES * heads * model.linear_key_head_dim  # one of q, k, w (repeated)
    v = ACT_BYTES * value
    chunk = np.minimum(float(model.linear_chunk), seq_len)
    a = FP32_BYTES * heads * chunk
    state = model.linear_key_head_dim * model.linear_value_head_dim  # per value head
    s = FP32_BYTES * heads * state / chunk
    conv = 2.0 * ACT_BYTES * (2.0 * key + value)
    gated_norm = 3.0 * ACT_BYTES * value
    # Q, K and W are key-wide rows (qk), V and U value-wide (v).
    forward = (1.0 + 4.0 + 2.0) * qk + (4.0 + 2.0) * v + 4.0 * a + 2.0 * s
    backward = (4.0 + 11.0 + 6.0) * qk + (13.0 + 2.0) * v + 2.0 * a + 4.0 * s
    streaming: FloatArray = 3.0 * (conv + gated_norm) * np.ones_like(chunk)
    chunked: FloatArray = forward + backward
    return streaming, chunked


def mamba_core_bytes(model: ModelSpec, seq_len: FloatArray) -> tuple[FloatArray, FloatArray]:
    """HBM bytes per token, forward and backward, of one Mamba block's work outside its
    projections, over TP: (streaming kernels, SSD kernels). Both are memory-bound (the PyTorch
    blog "Accelerating Mamba2 with kernel fusion", 2025: the SSD kernels are "mostly
    bottlenecked by memory bandwidth and latency"); the SSD kernels move their bytes at
    ``Efficiency.layers.ssd_bytes_per_s_per_sm`` per SM. Mamba-1: ``mamba1_core_bytes``.

    Streaming: the causal convolution reads and writes x, B and C, and the gated norm reads y
    and z and writes its output; backward moves twice the forward bytes, the element-wise
    convention of ``layer_times``. SSD, per kernel of state-spaces/mamba's
    ``mamba_chunk_scan_combined`` (``ssd_combined.py``), in X (an inner-wide BF16 row: x, y,
    dout, dx), BC (one of B, C or their gradients: G N), CB (the FP32 C B^T chunk matrix, G Q
    per token) and S (the FP32 chunk states, h P N per chunk): the forward's five kernels read
    x twice and B and C twice each, write and read CB, write the states and pass them on
    (written, read and written by state passing, read by the chunk scan) and write y: 3 X +
    4 BC + 2 CB + 4 S. Its backward (``_mamba_chunk_scan_combined_bwd``) first runs four of
    them again (C B^T, the chunk states and their passing: 3 BC + X + CB + 3 S), then the
    dstates kernel (C, dout; the state gradients), state passing backward (4 S), the dx kernel
    (x, B, CB, dout, dstates; dx), the dB and dC kernels (x or dout, dstates or the states, B
    or C; the gradient), the d(C B^T) kernel (x, dout), the two chunked-BMM backward kernels
    and the decay gradient's (x, dout, CB): 11 X + 13 BC + 6 CB + 11 S in all, three times the
    forward's traffic at Nemotron 3 Nano's shape, where the element-wise convention's two
    would undercount it."""
    inner = float(counts.mamba_inner(model))
    if model.mamba_version == 1:
        return mamba1_core_bytes(model, seq_len)
    groups_state = float(model.mamba_groups * model.mamba_state)
    chunk = np.minimum(float(model.mamba_chunk), seq_len)
    conv = 2.0 * ACT_BYTES * (inner + 2.0 * groups_state)
    gated_norm = 3.0 * ACT_BYTES * inner
    row = ACT_BYTES * inner
    bc = ACT_BYTES * groups_state
    cb = FP32_BYTES * model.mamba_groups * chunk
    states = FP32_BYTES * model.mamba_heads * model.mamba_head_dim * model.mamba_state / chunk
    forward = 3.0 * row + 4.0 * bc + 2.0 * cb + 4.0 * states
    backward = 11.0 * row + 13.0 * bc + 6.0 * cb + 11.0 * states
    streaming: FloatArray = 3.0 * (conv + gated_norm) * np.ones_like(chunk)
    ssd_bytes: FloatArray = forward + backward
    return streaming, ssd_bytes


MAMBA1_SCAN_CHUNK = 2048.0
"""Tokens a Mamba-1 selective-scan forward runs between the FP32 states it writes for the
backward: its thread block's 128 threads x 16 items each (state-spaces/mamba, 2023,
``csrc/selective_scan/selective_scan_fwd_kernel.cuh``, ``kChunkSize``)."""


def mamba1_core_bytes(model: ModelSpec, seq_len: FloatArray) -> tuple[FloatArray, FloatArray]:
    """HBM bytes per token, forward and backward, of one Mamba-1 block's work outside its
    projections, over TP: (streaming kernels, the selective scan at
    ``Efficiency.layers.ssd_bytes_per_s_per_sm``).

    Forward: the causal convolution reads and writes x, and RMSNorms over dt, B and C read and
    write them (Jamba; streaming); the fused scan (state-spaces/mamba ``selective_scan_cuda``:
    softplus of dt, the recurrence in registers, the D skip and the z gate) reads x, dt, z, B
    and C, writes y, and writes each channel's N FP32 states every ``MAMBA1_SCAN_CHUNK``
    tokens. Backward moves twice the forward bytes, the element-wise convention of
    ``layer_times``."""
    inner, state = float(counts.mamba_inner(model)), float(model.mamba_state)
    small = float(counts.mamba1_x_proj_width(model))
    conv = 2.0 * ACT_BYTES * inner + 2.0 * ACT_BYTES * small
    scan = ACT_BYTES * (4.0 * inner + 2.0 * state)
    states = FP32_BYTES * inner * state / MAMBA1_SCAN_CHUNK
    one = np.ones_like(np.asarray(seq_len, dtype=np.float64))
    streaming: FloatArray = 3.0 * conv * one
    scan_bytes: FloatArray = 3.0 * (scan + states) * one
    return streaming, scan_bytes


def recompute_modules_set(stack: Stack) -> bool:
    """Whether the stack recomputes any of Megatron-Core's modules beyond the core attention
    and the expert activation (which cost the model no modelled time)."""
    return (
        stack.recompute_layernorm
        or stack.recompute_mlp
        or stack.recompute_moe
        or stack.recompute_shared_experts
    )


def recompute_module_parts(
    model: ModelSpec, stack: Stack, kind: LayerKind
) -> tuple[bool, bool, int]:
    """What Megatron-Core's recompute modules rebuild in a layer of this kind under selective
    recompute: (the whole FFN block: ``recompute_moe`` for an MoE block, ``recompute_mlp``
    for a dense one; the shared experts alone, ``recompute_shared_experts``; the norms whose
    output feeds a separate module, ``recompute_layernorm``: an MoE block's pre-MLP norm
    unless the block is rebuilt whole, and an MLA block's input norm)."""
    whole = (kind.ffn == "moe" and stack.recompute_moe) or (
        kind.ffn == "dense" and stack.recompute_mlp
    )
    shared = kind.ffn == "moe" and stack.recompute_shared_experts and not whole
    norms = 0
    if stack.recompute_layernorm:
        norms = int(kind.ffn == "moe" and not whole) + int(
            kind.mixer == "attention" and bool(model.kv_lora_rank)
        )
    return whole, shared, norms


def module_recompute_s(
    model: ModelSpec,
    stack: Stack,
    kind: LayerKind,
    ffn_parts: tuple[FloatArray, FloatArray, FloatArray],
    norm_s: FloatArray,
) -> FloatArray:
    """Backward time Megatron-Core's recompute modules add to a layer under selective
    recompute: the forward of what ``memory.recompute_module_bytes`` drops. ``ffn_parts`` =
    (the FFN block's linears and element-wise kernels, the router with the routed experts,
    the exposed dispatch and combine all-to-all) forward; ``norm_s`` = one norm's forward
    (read and write the activation). ``recompute_moe`` runs the whole MoE block again, its
    all-to-all included; ``recompute_mlp`` a dense MLP block; ``recompute_shared_experts`` the
    shared experts; ``recompute_layernorm`` each norm feeding a separate module."""
    dense, routed, alltoall = ffn_parts
    whole, shared, norms = recompute_module_parts(model, stack, kind)
    result = norms * norm_s
    if whole:
        result = result + dense + (routed + alltoall if kind.ffn == "moe" else 0.0)
    elif shared:
        result = result + dense
    out: FloatArray = result
    return out


def layer_times(
    model: ModelSpec,
    cluster: Cluster,
    p: PlanBatch,
    dev: Device,
    eff: Efficiency,
    stack: Stack,
    kind: LayerKind = counts.DENSE,
) -> LayerTimes:
    """One layer of the given kind (``counts.LayerKind``): a transformer's dense layer, its MoE
    layer (shared experts in place of the dense FFN, router, routed experts, expert all-to-all),
    or one block of a hybrid model (Mamba-2, attention, MLP or MoE)."""
    tp = p.tp
    tokens = p.micro_batch * p.seq_len / p.cp
    hidden = float(model.hidden)
    moe_layer = kind.ffn == "moe"
    attention = kind.mixer == "attention"
    blocks = (kind.mixer != "") + (kind.ffn != "")
    ffn = counts.kind_ffn_width(model, kind)
    up_width = ffn * moe.swiglu_factor(model)
    shapes: list[tuple[Any, Any]] = []
    if attention:
        shapes += attention_linears(model, tp)
    elif kind.mixer == "mamba":
        shapes += mamba_linears(model, tp)
    elif kind.mixer == "gdn":
        shapes += gdn_linears(model, tp)
    first_ffn = len(shapes)
    if ffn > 0:
        shapes += [(up_width / tp, hidden), (hidden, ffn / tp)]
    if moe_layer and model.moe_latent:
        # LatentMoE's projections to and from the experts' width, on the layer's tokens.
        latent = float(model.moe_latent)
        shapes += [(latent / tp, hidden), (hidden, latent / tp)]
    zero = np.zeros_like(tokens)
    if shapes:
        # All linears of the layer in one call: one row per linear, one column per plan.
        n_arr = np.stack(
            [np.broadcast_to(np.asarray(n, dtype=np.float64), tokens.shape) for n, _ in shapes]
        )
        k_arr = np.stack(
            [np.broadcast_to(np.asarray(k, dtype=np.float64), tokens.shape) for _, k in shapes]
        )
        f, b = linear_time_s(tokens[np.newaxis, :], n_arr, k_arr, dev, eff)
        fwd, bwd = f.sum(axis=0), b.sum(axis=0)
        # The FFN block's linears (dense, shared experts, LatentMoE projections), forward:
        # what recompute modules run again.
        ffn_fwd = f[first_ffn:].sum(axis=0) if recompute_modules_set(stack) else zero
        cast = (tokens * (n_arr + k_arr)).sum(axis=0)
        if not stack.fp8_weight_cache:
            # The weights are quantized again in every micro-batch's forward.
            cast = cast + (n_arr * k_arr).sum(axis=0)
    else:
        fwd, bwd, cast, ffn_fwd = zero, zero, zero, zero
    if attention:
        attn_f, attn_b, attn_re = attention_times(model, p, dev, eff, stack)
    else:
        attn_f, attn_b, attn_re = zero, zero, zero
    norm_tokens = np.where(p.sequence_parallel > 0, tokens / tp, tokens)
    # The stack's per-hidden bytes are a transformer layer's: two blocks, each a norm and a
    # residual add.
    per_hidden = (
        stack.elementwise_bytes_per_hidden
        + (eff.layers.dropout_bytes_per_hidden if model.dropout else 0.0)
    ) * (blocks / 2.0)
    elem_bytes = (
        norm_tokens * hidden * per_hidden + tokens * up_width / tp * stack.elementwise_bytes_per_ffn
    )
    if kind.mixer in ("mamba", "gdn"):
        if kind.mixer == "mamba":
            streaming, core = mamba_core_bytes(model, p.seq_len)
            per_sm = eff.layers.ssd_bytes_per_s_per_sm
        else:
            streaming, core = gdn_core_bytes(model, p.seq_len)
            per_sm = eff.layers.linear_attention_bytes_per_s_per_sm
        # The chunk kernels' bytes at their own share of the bandwidth, as streaming bytes
        # that take as long.
        slower = eff.compute.hbm_efficiency / latency_bound_share(per_sm, dev, eff)
        elem_bytes = elem_bytes + tokens * (streaming + core * slower) / tp
    imbalance, ep_f, ep_b, etp_comm, routed_after = zero, zero, zero, zero, zero
    rf = zero
    if moe_layer:
        routed = moe.routed_expert_times(model, p, dev, eff, stack, tokens)
        experts = model.routed_experts * np.ones_like(tokens)
        rf, rb = linear_time_s(norm_tokens, experts, hidden + zero, dev.without_quantization(), eff)
        fwd, bwd = fwd + routed.fwd + rf, bwd + routed.bwd + rb
        elem_bytes = elem_bytes + routed.elementwise_bytes
        cast = cast + routed.cast_elements
        if not stack.fp8_weight_cache:
            cast = cast + moe.local_expert_weights(model, p)
        imbalance = routed.imbalance
        routed_after = routed.fwd + memory_bound_time_s(
            routed.elementwise_bytes / 3.0
            + np.where(dev.quantized, routed.cast_elements * cast_bytes(dev, eff) / 2.0, 0.0),
            dev,
            eff,
        )
        ep_f, ep_b = moe.expert_comm_times(model, cluster, p, eff, stack, tokens)
        etp_comm = moe.expert_tp_comm_time(model, cluster, p, eff, stack, tokens)
    elem = memory_bound_time_s(elem_bytes, dev, eff)
    cast_time = np.where(
        dev.quantized, memory_bound_time_s(cast * cast_bytes(dev, eff), dev, eff), 0.0
    )
    fwd_compute = fwd + attn_f + elem / 3.0 + cast_time / 2.0
    bwd_compute = bwd + attn_b + elem * 2.0 / 3.0 + cast_time / 2.0
    # TP/SP: per layer two all-reduces (or reduce-scatter + all-gather pairs with SP) forward
    # and two backward, each of the full [T, D] activation (Korthikanti et al. 2022, Sec. 4.2).
    message = tokens * hidden * ACT_BYTES
    one = np.ones_like(tokens)
    sp = p.sequence_parallel > 0
    if sp.all():  # one kind of collective in the batch: the other is not computed
        pair = 2.0 * coll.reduce_scatter_time_s(cluster, eff, tp, one, message)
    elif not sp.any():
        pair = coll.allreduce_time_s(cluster, eff, tp, one, message)
    else:
        pair = np.where(
            sp,
            2.0 * coll.reduce_scatter_time_s(cluster, eff, tp, one, message),
            coll.allreduce_time_s(cluster, eff, tp, one, message),
        )
    # One collective pair per block: the attention (or Mamba-2) and the FFN output projections.
    tp_total = blocks * pair
    tp_total = tp_total + etp_comm
    # The hidden share still costs compute: communication kernels take SMs and HBM bandwidth.
    hidden_share = stack.tp_comm_overlap_frac * (1.0 - eff.layers.tp_overlap_compute_slowdown_frac)
    tp_fwd = tp_total * (1.0 - hidden_share)
    if attention:
        cp_fwd, cp_bwd = cp_times(model, cluster, p, eff, attn_f, attn_b)
    else:
        cp_fwd, cp_bwd = zero, zero
    ep_fwd, ep_bwd, overhead, imbalance_comm = zero, zero, zero, zero
    if moe_layer:
        ep_fwd, ep_bwd, overhead, imbalance_comm = ep_exposed(
            p, stack, ep_f, ep_b, fwd_compute + bwd_compute
        )
        share = fwd_compute / (fwd_compute + bwd_compute)
        fwd_compute = fwd_compute + overhead * share
        bwd_compute = bwd_compute + overhead * (1.0 - share)
        imbalance = imbalance + imbalance_comm
    full = p.recompute == RECOMPUTE["full"]
    if stack.selective_recompute == "alternate-matmuls":
        # Every second matmul of the block and every element-wise kernel run again; the
        # attention kernel's output is kept, so none of its recompute.
        again = alternate_matmuls(model, tp, kind, ffn, up_width)[1::2]
        re_total = zero
        if again:
            n_re = np.stack(
                [
                    np.broadcast_to(np.asarray(n, dtype=np.float64), tokens.shape)
                    for n, _, _ in again
                ]
            )
            k_re = np.stack(
                [
                    np.broadcast_to(np.asarray(k, dtype=np.float64), tokens.shape)
                    for _, k, _ in again
                ]
            )
            re_f, _ = linear_time_s(tokens[np.newaxis, :], n_re, k_re, dev, eff)
            re_total = re_f.sum(axis=0)
        selective = re_total + elem / 3.0
    else:
        selective = attn_re
        if kind.ffn != "" and recompute_modules_set(stack):
            ffn_elem = memory_bound_time_s(
                tokens * up_width / tp * stack.elementwise_bytes_per_ffn, dev, eff
            )
            selective = selective + module_recompute_s(
                model,
                stack,
                kind,
                (ffn_fwd + ffn_elem / 3.0, routed_after + rf, ep_fwd),
                memory_bound_time_s(norm_tokens * hidden * 2.0 * ACT_BYTES, dev, eff),
            )
    recompute = np.where(
        full,
        fwd_compute + tp_fwd + cp_fwd + ep_fwd,
        np.where(p.recompute == RECOMPUTE["selective"], selective, 0.0),
    )
    host_f = host_issue_s(model, p, eff, stack, kind)
    host_b = host_f * (eff.host.host_ops_bwd_ratio + np.where(full, 1.0, 0.0))
    gpu_f = fwd_compute + tp_fwd + cp_fwd + ep_fwd
    gpu_b = bwd_compute + tp_fwd + cp_bwd + ep_bwd + recompute
    exposed_f = np.maximum(host_f - gpu_f, 0.0)
    if moe_layer and moe.host_syncs(stack):
        # The host waits for the router's token counts before it issues the dispatch, so
        # what follows cannot be issued ahead: the GPU idles for the issue time of the
        # operations after the sync beyond their own GPU time (routed experts, all-to-all).
        after = post_sync_host_s(model, p, eff, stack) - routed_after - ep_fwd
        exposed_f = np.maximum(exposed_f, after)
    return LayerTimes(
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
        fwd_host=exposed_f,
        bwd_host=np.maximum(host_b - gpu_b, 0.0),
    )


def alternate_matmuls(
    model: ModelSpec, tp: FloatArray, kind: LayerKind, ffn: float, up_width: float
) -> list[tuple[Any, Any, bool]]:
    """(n_out, k_in, output replicated over TP) of a block's matmuls on one GPU in forward
    order, as torchtitan's op-level selective checkpointing counts them (``aten.mm`` calls:
    separate Q, K, V and output projections, the MoE router, the SwiGLU w1, w3 and w2 or the
    GeLU fc1 and fc2; the routed experts' grouped GEMMs are saved and not counted)."""
    hidden = float(model.hidden)
    out: list[tuple[Any, Any, bool]] = []
    if kind.mixer in ("mamba", "gdn"):
        block = mamba_linears(model, tp) if kind.mixer == "mamba" else gdn_linears(model, tp)
        # The output projection's result is summed over TP, and so is Mamba-1's x_proj (the
        # second of its four projections).
        mamba1 = kind.mixer == "mamba" and model.mamba_version == 1
        summed = {len(block) - 1} | ({1} if mamba1 else set())
        out = [(n, k, i in summed) for i, (n, k) in enumerate(block)]
    elif kind.mixer == "attention" and model.kv_lora_rank:
        linears = attention_linears(model, tp)
        out = [(n, k, i == len(linears) - 1) for i, (n, k) in enumerate(linears)]
    elif kind.mixer == "attention":
        d, heads, kv = float(model.head_size), float(model.heads), float(model.kv_heads)
        gate = 2.0 if model.attention_output_gate else 1.0
        out = [(gate * heads * d / tp, hidden, False), (kv * d / tp, hidden, False)]
        out += [(kv * d / tp, hidden, False), (hidden, heads * d / tp, True)]
    if kind.ffn == "moe":
        out.append((float(model.routed_experts), hidden, True))
    if ffn > 0:
        if up_width > ffn:  # gated: w1 (gate) and w3 (up), then w2
            out += [(ffn / tp, hidden, False), (ffn / tp, hidden, False)]
        else:
            out.append((ffn / tp, hidden, False))
        out.append((hidden, ffn / tp, True))
    return out


def expert_gemm_ops(model: ModelSpec, p: PlanBatch, eff: Efficiency, stack: Stack) -> Any:
    """Host operations of one MoE layer's routed-expert GEMMs forward: per local expert
    (``host_ops_per_local_expert_fwd`` each), or one per projection where the stack launches
    them as one grouped kernel (``Stack.moe_expert_gemms``)."""
    if stack.moe_expert_gemms == "single-kernel":
        return eff.host.host_ops_per_local_expert_fwd
    return eff.host.host_ops_per_local_expert_fwd * (model.routed_experts / p.ep)


def host_issue_s(
    model: ModelSpec, p: PlanBatch, eff: Efficiency, stack: Stack, kind: LayerKind
) -> FloatArray:
    """Host time to issue one layer's forward operations outside the stack's CUDA graphs.

    The host runs ahead of the GPU, so only the excess of this over the layer's GPU time is
    lost. ``router`` replays an MoE layer's router and dispatch preprocessing from a graph,
    ``attention`` the attention block as well; ``layer`` and ``full`` capture everything."""
    one = np.ones_like(p.tp)
    if stack.cuda_graphs in ("layer", "full"):
        return 0.0 * one
    mixer = 0.0
    if kind.mixer == "attention" and stack.cuda_graphs != "attention":
        mixer = eff.host.host_ops_attention_fwd + (
            eff.host.host_ops_mla_extra_fwd if model.kv_lora_rank else 0.0
        )
    elif kind.mixer == "mamba":
        mixer = eff.host.host_ops_mamba_fwd
    elif kind.mixer == "gdn":
        mixer = eff.host.host_ops_linear_attention_fwd
    ffn: Any = 0.0
    if kind.ffn == "moe":
        ffn = eff.host.host_ops_moe_fwd + expert_gemm_ops(model, p, eff, stack)
        if stack.cuda_graphs in ("router", "attention"):
            ffn = ffn - eff.host.host_ops_router_fwd
        if model.shared_experts:
            ffn = ffn + eff.host.host_ops_mlp_fwd
    elif kind.ffn == "dense":
        ffn = eff.host.host_ops_mlp_fwd
    result: FloatArray = (ffn + mixer) * eff.host.host_op_s * one
    return result


def post_sync_host_s(model: ModelSpec, p: PlanBatch, eff: Efficiency, stack: Stack) -> FloatArray:
    """Host time to issue what an MoE layer's forward runs after the dispatcher's host sync:
    the dispatch and combine with their bookkeeping, the un-permutation and the per-expert
    GEMMs (``host_ops_moe_fwd`` less the router's share, plus the local experts'); 0 where
    whole layers are replayed from CUDA graphs."""
    one = np.ones_like(p.tp)
    if stack.cuda_graphs in ("layer", "full"):
        return 0.0 * one
    ops = (
        eff.host.host_ops_moe_fwd
        - eff.host.host_ops_router_fwd
        + expert_gemm_ops(model, p, eff, stack)
    )
    result: FloatArray = ops * eff.host.host_op_s * one
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


_KEY_LIMIT = 2**52
"""Largest combined key the factorisation builds before renumbering it (exact in int64)."""
_DIRECT_SPAN = 2**20
"""A whole-valued column whose values span fewer than this many integers is coded by offset
(no sort); others are coded by their sorted distinct values."""


def _codes(column: NDArray[np.float64], lo: float, hi: float) -> tuple[NDArray[np.float64], int]:
    """Whole-numbered codes in [0, span) that are equal exactly where the column's values (from
    ``lo`` to ``hi``) are, as floats (exact below 2^53; float to integer conversion is the
    slowest pass, so the key is converted once)."""
    if hi - lo < _DIRECT_SPAN and np.array_equal(column, np.round(column)):
        return column - lo, int(hi - lo) + 1
    uniques, inverse = np.unique(column, return_inverse=True)
    return inverse.astype(np.float64).ravel(), len(uniques)


def distinct_rows(
    p: PlanBatch, names: tuple[str, ...]
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """The first row of each distinct combination of the ``names`` columns, and for every row
    the index of its combination among those: the columns' codes combined in mixed radix
    (renumbered, order kept, when the product would pass the table's span or ``_KEY_LIMIT``),
    then that key factorised by a table (or, past the table's span, one sort); columns with
    one value are left out (radix 1)."""
    if p.tp.size <= 1:
        # One plan (a single estimate): nothing to share, and no factorisation to pay for.
        return np.arange(p.tp.size, dtype=np.intp), np.zeros(p.tp.size, dtype=np.intp)
    key: NDArray[np.float64] = np.zeros(p.tp.size)
    span = 1  # the key's values lie in [0, span), whole numbers below _KEY_LIMIT
    table_span = _TABLE_SPAN_PER_ROW * key.size
    for name in names:
        column = np.asarray(getattr(p, name), dtype=np.float64)
        lo, hi = float(column.min()), float(column.max())
        if lo == hi:
            continue  # one value in the whole batch: radix 1, the key is unchanged
        codes, radix = _codes(column, lo, hi)
        if 1 < span <= table_span < span * radix:
            # Renumber the key by rank (its order kept) so that it stays within the table.
            seen, dense = _table_factorize(key.astype(np.int64), span)
            key, span = dense.astype(np.float64), seen.size
        if span * radix >= _KEY_LIMIT:
            uniques, dense = np.unique(key, return_inverse=True)  # renumber before overflow
            key, span = dense.astype(np.float64).ravel(), len(uniques)
        key = key * radix + codes
        span *= radix
    if span <= table_span:
        return _table_factorize(key.astype(np.int64), span)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return first.astype(np.intp), inverse.astype(np.intp).ravel()


_TABLE_SPAN_PER_ROW = 4
"""A key whose values span at most this many times the rows is factorised with a table indexed
by the key (linear passes) instead of a sort."""


def _table_factorize(
    key: NDArray[np.int64], span: int
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """``np.unique(key, return_index=True, return_inverse=True)``'s first rows and inverse for
    keys in [0, span), without sorting: distinct keys in increasing order, each one's first
    row (the least row index holding it), each row's rank among them."""
    present = np.bincount(key, minlength=span) > 0
    rank = np.cumsum(present, dtype=np.intp) - 1
    first_row = np.full(span, key.size, dtype=np.intp)
    np.minimum.at(first_row, key, np.arange(key.size, dtype=np.intp))
    return first_row[present], rank[key]


def per_row_constants(eff: Efficiency, cluster: Cluster) -> bool:
    """Whether constants come as arrays, one value per plan row (calibration's draws): then
    rows that agree on their plan fields still differ, and nothing is shared between them."""
    return eff.has_arrays() or np.ndim(cluster.accelerator.training_clock_frac) > 0


@dataclass(frozen=True)
class DistinctTimes:
    """What one GPU's layers, output head and multi-token-prediction modules take per
    micro-batch, for every row of a batch (computed once per distinct layer configuration)."""

    layers: dict[LayerKind, LayerTimes]
    """One layer of each kind the model has (``counts.layer_kinds``)."""
    head: tuple[FloatArray, FloatArray]
    """Output layer and loss, forward and backward."""
    mtp: tuple[FloatArray, FloatArray] | None
    """Multi-token-prediction modules, forward and backward (None: the model has none)."""


def distinct_layer_times(
    model: ModelSpec, cluster: Cluster, p: PlanBatch, eff: Efficiency, stack: Stack
) -> DistinctTimes:
    """Layer times of each kind, output-head and MTP times, computed once per distinct layer
    configuration (a search batch holds many plans that differ only in pp, dp, ZeRO or the
    layer split) and spread to every row. Constants given as arrays (one value per plan, as
    calibration's interval draws pass them) pair with the rows as they are, so such a batch is
    evaluated row by row."""
    if per_row_constants(eff, cluster):
        first = inverse = np.arange(p.tp.size, dtype=np.intp)
    else:
        first, inverse = distinct_rows(p, LAYER_FIELDS)
    # Every row its own configuration (or a single plan): no gather needed either way.
    identity = first.size == p.tp.size and np.array_equal(first, inverse)
    sub = p if identity else p.take(first)
    dev = Device.of(cluster.accelerator, sub.precision, eff)

    def spread(times: LayerTimes) -> LayerTimes:
        return times if identity else times.take(inverse)

    def spread_pair(pair: tuple[FloatArray, FloatArray]) -> tuple[FloatArray, FloatArray]:
        return pair if identity else (pair[0][inverse], pair[1][inverse])

    kinds = {
        kind: layer_times(model, cluster, sub, dev, eff, stack, kind)
        for kind in counts.layer_kinds(model)
    }
    head = head_times(model, sub, dev, eff, stack)
    mtp = None
    if model.mtp_layers:
        # A module's block is attention and an MoE (or dense) FFN, in a hybrid model too
        # (Nemotron 3's ``mtp_hybrid_override_pattern`` "*E").
        mtp_kind = counts.MOE if model.is_moe else counts.DENSE
        mtp_layer = kinds.get(mtp_kind) or layer_times(
            model, cluster, sub, dev, eff, stack, mtp_kind
        )
        mtp = spread_pair(mtp_times(model, sub, dev, eff, mtp_layer, head))
    return DistinctTimes(
        layers={kind: spread(times) for kind, times in kinds.items()},
        head=spread_pair(head),
        mtp=mtp,
    )


def ep_exposed(
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


def head_times(
    model: ModelSpec, p: PlanBatch, dev: Device, eff: Efficiency, stack: Stack
) -> tuple[FloatArray, FloatArray]:
    """Output layer (logits, in BF16 under FP8 recipes) and loss on the last stage: forward
    and backward time."""
    tokens = p.micro_batch * p.seq_len / p.cp
    vocab = model.vocab / p.tp
    one = np.ones_like(tokens)
    f, b = linear_time_s(tokens, vocab * one, model.hidden * one, dev.without_quantization(), eff)
    loss = memory_bound_time_s(tokens * vocab * stack.loss_bytes_per_logit, dev, eff)
    return f + loss / 3.0, b + loss * 2.0 / 3.0


def mtp_times(
    model: ModelSpec,
    p: PlanBatch,
    dev: Device,
    eff: Efficiency,
    layer: LayerTimes,
    head: tuple[FloatArray, FloatArray],
) -> tuple[FloatArray, FloatArray]:
    """Multi-token prediction modules on the last stage (DeepSeek-V3 Sec. 2.2): each is a
    projection of [h; emb] (2D -> D), one transformer layer and the shared output head."""
    tokens = p.micro_batch * p.seq_len / p.cp
    one = np.ones_like(tokens)
    pf, pb = linear_time_s(tokens, model.hidden / p.tp * one, 2.0 * model.hidden * one, dev, eff)
    n = float(model.mtp_layers)
    return n * (pf + layer.fwd + head[0]), n * (pb + layer.bwd + head[1])


def stage_sums(
    model: ModelSpec, p: PlanBatch, layers: dict[LayerKind, LayerTimes]
) -> dict[str, dict[str, FloatArray]]:
    """Per stage: forward, backward and breakdown parts summed over its layers of each kind."""
    out: dict[str, dict[str, FloatArray]] = {}
    parts = {kind: times.parts() for kind, times in layers.items()}
    for name, mix in moe.stage_layer_mix(model, p).items():
        sums: dict[str, FloatArray] = {}
        for kind, n in mix.items():
            times = layers[kind]
            terms = {"fwd": times.fwd, "bwd": times.bwd, **parts[kind]}
            for key, value in terms.items():
                sums[key] = sums[key] + n * value if key in sums else n * value
        out[name] = sums
    return out
