"""Mixture-of-experts layers: routed experts as grouped GEMMs, the expert-parallel all-to-all,
load imbalance, and which kinds of layer each pipeline stage holds.

Notation per GPU: T token rows of a micro-batch (b s / cp), E routed experts, k experts per
token, F_e the expert FFN width, ep and etp the expert-parallel and expert-tensor-parallel
widths, f the load factor (busiest rank over the mean).

Expert layers use their own rank order (Megatron-Core ``etp-ep-edp``): the tp x cp x dp ranks of
a stage are regrouped into etp x ep x edp. A stage's tp x cp x dp ranks hold dp b s distinct
tokens per micro-batch and route dp b s k copies, so one GPU computes
``T k etp / tp`` copies, ``T k etp ep / (tp E)`` per local expert, over E / ep local experts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from scalewall.catalog.schema import ModelSpec
from scalewall.perf import collectives as coll
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.perf.batch import RECOMPUTE, PlanBatch
from scalewall.perf.compute import ACT_BYTES, Device, grouped_linear_time_s
from scalewall.plan.topology import Cluster
from scalewall.workload import counts
from scalewall.workload.counts import LayerKind

FloatArray = NDArray[np.float64]

SCATTER_ADD_BYTES_PER_HIDDEN = 6.0
"""HBM bytes per hidden element of one BF16 copy added into its token's row by atomic
scatter-add: read the copy (2), read and write the row (4)."""


def gather_reduce_bytes_per_hidden(top_k: float) -> float:
    """HBM bytes per hidden element per copy of summing a token's k BF16 copies by a
    gather-reduce: read each copy (2), write the token once (2 / k); the part of
    ``Stack.moe_permute_bytes_per_hidden`` a scatter-add replaces, once forward (the
    unpermute) and once backward (the permute's gradient)."""
    return 2.0 + 2.0 / top_k


def load_factor(stack: Stack) -> float:
    """Tokens the busiest expert-parallel rank handles over the mean: the capacity factor when
    buffers are capped and padded, else the dropless imbalance factor."""
    if stack.moe_capacity_factor > 0:
        return stack.moe_capacity_factor
    return stack.moe_load_imbalance


def compute_load_factor(stack: Stack) -> float:
    """Rows the busiest rank's expert GEMMs run over, per mean token copy: the load factor, or
    the padded capacity when the whole iteration is replayed from CUDA graphs
    (``Stack.moe_graph_capacity_factor``)."""
    load = load_factor(stack)
    if stack.cuda_graphs == "full" and stack.moe_graph_capacity_factor > 0:
        return max(load, stack.moe_graph_capacity_factor)
    return load


def host_syncs(stack: Stack) -> bool:
    """Whether each MoE layer's forward waits on the host for the routed token counts: a
    dropless dispatcher sizes the all-to-all and the per-expert GEMMs from them
    (``Stack.moe_host_sync``); capacity-padded buffers (a capacity factor, or the padded
    expert buffers of full-iteration CUDA graphs) have fixed shapes and need no sync."""
    if not stack.moe_host_sync or stack.moe_capacity_factor > 0:
        return False
    return not (stack.cuda_graphs == "full" and stack.moe_graph_capacity_factor > 0)


def swiglu_factor(model: ModelSpec) -> float:
    """Width of the FFN up projection over the FFN width (gate and up for SwiGLU)."""
    return 2.0 if model.activation == "swiglu" else 1.0


def ffn_activation_elements(model: ModelSpec) -> float:
    """Activation bytes an FFN keeps per FFN-hidden element (Korthikanti et al.: 4F for GeLU;
    SwiGLU keeps gate, up and the product: 6F)."""
    return 6.0 if model.activation == "swiglu" else 4.0


def tokens_per_expert(model: ModelSpec, p: PlanBatch, tokens: FloatArray) -> FloatArray:
    """Mean routed token copies per local expert per micro-batch: T k etp ep / (tp E)."""
    result: FloatArray = tokens * model.top_k * p.etp * p.ep / (p.tp * model.routed_experts)
    return result


def moe_layers_before(model: ModelSpec, layer: FloatArray) -> FloatArray:
    """MoE layers among the first ``layer`` layers: after ``first_dense_layers`` dense ones,
    every ``moe_layer_freq``-th layer."""
    if not model.is_moe:
        return np.zeros_like(layer)
    dense = float(model.first_dense_layers)
    freq = float(max(model.moe_layer_freq, 1))
    result: FloatArray = np.where(layer <= dense, 0.0, np.ceil((layer - dense) / freq))
    return result


def stage_layer_mix(model: ModelSpec, p: PlanBatch) -> dict[str, dict[LayerKind, FloatArray]]:
    """Layers of each kind (``counts.layer_kinds``) on the first stage, the busiest middle stage
    and the last stage. A transformer's busiest middle stage is the last one, as MoE layers
    follow the dense ones; a hybrid model's is the middle stage with the most matmul weights
    a token passes through (``counts.kind_matmul_params``)."""
    kinds = counts.layer_kinds(model)
    if model.layer_pattern or model.mixer_pattern:
        return _pattern_mix(model, p, kinds)
    total = float(model.layers)
    if not model.is_moe:
        return {
            "first": {counts.DENSE: p.layers_first},
            "middle": {counts.DENSE: p.layers_middle},
            "last": {counts.DENSE: p.layers_last},
        }
    ranges = {
        "first": (np.zeros_like(p.layers_first), p.layers_first),
        "middle": (total - p.layers_last - p.layers_middle, total - p.layers_last),
        "last": (total - p.layers_last, np.full_like(p.layers_last, total)),
    }
    mix: dict[str, dict[LayerKind, FloatArray]] = {}
    for name, (start, end) in ranges.items():
        n_moe = moe_layers_before(model, end) - moe_layers_before(model, start)
        both = {counts.DENSE: end - start - n_moe, counts.MOE: n_moe}
        mix[name] = {kind: both[kind] for kind in kinds}
    return mix


def _pattern_mix(
    model: ModelSpec, p: PlanBatch, kinds: tuple[LayerKind, ...]
) -> dict[str, dict[LayerKind, FloatArray]]:
    """``stage_layer_mix`` of a model whose layers differ (``counts.layer_sequence``), from
    prefix counts of each kind."""
    sequence = counts.layer_sequence(model)
    total = len(sequence)
    prefix = {
        kind: np.concatenate(([0.0], np.cumsum([layer == kind for layer in sequence])))
        for kind in kinds
    }
    weight = {kind: counts.kind_matmul_params(model, kind) for kind in kinds}
    work = sum((prefix[kind] * weight[kind] for kind in kinds), np.zeros(total + 1))

    def at(table: FloatArray, layer: FloatArray) -> FloatArray:
        result: FloatArray = table[np.clip(layer, 0, total).astype(np.intp)]
        return result

    middle_start = p.layers_first.copy()
    best = np.full_like(p.layers_first, -1.0)
    stages = int(np.max(p.pp, initial=2.0)) - 2
    for i in range(max(stages, 1)):
        start = p.layers_first + i * p.layers_middle
        load = at(work, start + p.layers_middle) - at(work, start)
        take = (i < np.maximum(p.pp - 2.0, 1.0)) & (load > best)
        middle_start = np.where(take, start, middle_start)
        best = np.where(take, load, best)
    ranges = {
        "first": (np.zeros_like(p.layers_first), p.layers_first),
        "middle": (middle_start, middle_start + p.layers_middle),
        "last": (total - p.layers_last, np.full_like(p.layers_last, float(total))),
    }
    return {
        name: {kind: at(prefix[kind], end) - at(prefix[kind], start) for kind in kinds}
        for name, (start, end) in ranges.items()
    }


@dataclass(frozen=True, kw_only=True)
class RoutedTimes:
    """The routed experts of one MoE layer on the busiest GPU, per micro-batch."""

    fwd: FloatArray
    bwd: FloatArray
    imbalance: FloatArray
    """Of ``fwd + bwd``: the busiest rank's expert GEMM time over the mean rank's."""
    elementwise_bytes: FloatArray
    """Token permutation and the expert activation function, forward and backward."""
    cast_elements: FloatArray
    """GEMM operand elements cast to FP8 (inputs forward, output gradients backward)."""


def routed_expert_times(
    model: ModelSpec, p: PlanBatch, dev: Device, eff: Efficiency, stack: Stack, tokens: FloatArray
) -> RoutedTimes:
    """Grouped GEMMs of the E/ep local experts (up and down projections) with f x the mean
    tokens each, on the tile/wave model of ``grouped_gemm_time_s``; their input and output
    are ``counts.expert_width_in`` wide."""
    hidden = float(counts.expert_width_in(model))
    width = model.expert_ffn_hidden / p.etp
    up = width * swiglu_factor(model)
    local = model.routed_experts / p.ep
    mean = tokens_per_expert(model, p, tokens)
    load = load_factor(stack)

    def experts(rows: FloatArray) -> tuple[FloatArray, FloatArray]:
        f1, b1 = grouped_linear_time_s(rows, up, hidden * np.ones_like(rows), local, dev, eff)
        f2, b2 = grouped_linear_time_s(rows, hidden * np.ones_like(rows), width, local, dev, eff)
        return f1 + f2, b1 + b2

    fwd, bwd = experts(mean * compute_load_factor(stack))
    fwd_mean, bwd_mean = experts(mean)
    copies = mean * local * load
    permute: FloatArray | float = stack.moe_permute_bytes_per_hidden
    if stack.moe_token_dispatcher == "alltoall":
        permute = permute + np.where(local > 1, stack.moe_sort_chunks_bytes_per_hidden, 0.0)
    if stack.moe_unpermute == "scatter-add":
        # The unpermute forward and the permute's gradient add each copy into its token's row
        # atomically: 6 bytes per hidden element each (read the copy, read-modify-write the
        # row) at the scatter-add's share of the bandwidth, counted as streaming bytes that
        # take as long, in place of the gather-reduce's 2 + 2/k each.
        slower = eff.compute.hbm_efficiency / eff.layers.scatter_add_hbm_efficiency
        replaced = gather_reduce_bytes_per_hidden(float(model.top_k))
        permute = permute + 2.0 * (SCATTER_ADD_BYTES_PER_HIDDEN * slower - replaced)
    elementwise = copies * (hidden * permute + up / 2.0 * stack.elementwise_bytes_per_ffn)
    return RoutedTimes(
        fwd=fwd,
        bwd=bwd,
        imbalance=np.maximum(fwd + bwd - fwd_mean - bwd_mean, 0.0),
        elementwise_bytes=elementwise,
        cast_elements=copies * (hidden + up + width + hidden),
    )


def local_expert_weights(model: ModelSpec, p: PlanBatch) -> FloatArray:
    """Weight elements of the routed experts one GPU holds in one MoE layer: its
    ``routed_experts / ep`` experts' up (gated: gate and up) and down projections, split over
    ``etp``."""
    width = model.expert_ffn_hidden / p.etp
    per_expert = (width * swiglu_factor(model) + width) * counts.expert_width_in(model)
    result: FloatArray = model.routed_experts / p.ep * per_expert
    return result


def expert_comm_times(
    model: ModelSpec,
    cluster: Cluster,
    p: PlanBatch,
    eff: Efficiency,
    stack: Stack,
    tokens: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """Dispatch and combine all-to-all of one MoE layer at the mean load, forward (dispatch in
    ``moe_dispatch_bytes``, combine) and backward (the two reversed, in BF16 gradients), each
    with the dispatcher's fixed time per routed row (``expert_dispatch_copy_s``).

    Each GPU sends its T etp / tp tokens, k copies each, over the EP group, whose ranks lie
    ``etp`` apart in rank order; ``expert_alltoall_time_s`` places it on the tiers. A token
    is ``counts.expert_width_in`` wide (LatentMoE dispatches its latent)."""
    sent = tokens * p.etp / p.tp * counts.expert_width_in(model)

    def a2a(bytes_per_element: float) -> FloatArray:
        return coll.expert_alltoall_time_s(
            cluster,
            eff,
            p.ep,
            p.etp,
            sent * bytes_per_element,
            float(model.top_k),
            stack.moe_max_nodes_per_token,
            stack.moe_token_dispatcher == "flex",
            model.router_groups,
            model.router_group_topk,
            model.routed_experts,
            stack.moe_consecutive_experts,
        )

    # The dispatcher's fixed work per routed row: k copies per token, or one per destination
    # rank where a flex dispatcher sends a token once to each rank holding its experts.
    copies: FloatArray | float = float(model.top_k)
    if stack.moe_token_dispatcher == "flex":
        copies = coll.distinct_ranks(
            model.routed_experts, float(model.top_k), p.ep, stack.moe_consecutive_experts
        )
    rows = np.where(p.ep > 1, tokens * p.etp / p.tp * copies * eff.comm.expert_dispatch_copy_s, 0.0)
    combine = a2a(stack.moe_combine_bytes) + rows
    return a2a(stack.moe_dispatch_bytes) + rows + combine, 2.0 * combine


def expert_tp_comm_time(
    model: ModelSpec,
    cluster: Cluster,
    p: PlanBatch,
    eff: Efficiency,
    stack: Stack,
    tokens: FloatArray,
) -> FloatArray:
    """Expert tensor parallelism, forward: the etp ranks of an expert all-gather its tokens
    before the up projection and reduce-scatter the partial outputs after the down projection
    (backward the same reversed)."""
    copies = tokens_per_expert(model, p, tokens) * model.routed_experts / p.ep
    message = copies * load_factor(stack) * counts.expert_width_in(model) * ACT_BYTES
    one = np.ones_like(tokens)
    result: FloatArray = 2.0 * coll.reduce_scatter_time_s(cluster, eff, p.etp, one, message)
    return result


def routed_activation_bytes(
    model: ModelSpec, p: PlanBatch, stack: Stack, tokens: FloatArray, fp8: NDArray[np.bool_]
) -> FloatArray:
    """Activations the routed experts keep for backward per micro-batch per GPU: per token
    copy its dispatched input and combined output (D each) and the expert FFN activations;
    FP8 recipes keep the linear inputs in FP8 (DeepSeek-V3 Sec. 3.3.3, Transformer Engine).
    A stack that recomputes the experts' activation function under selective recompute
    (``Stack.recompute_moe_act``) keeps per copy only its input and the activation's inputs
    (gate and up, 2F for SwiGLU), in FP8 under FP8 recipes: DeepSeek-V3 Sec. 3.3.3 caches the
    SwiGLU inputs in FP8 and recomputes its output; with the routing weights applied inside
    the activation (Megatron-Core's memory-efficient permutation) the combine's backward needs
    no expert output."""
    copies = tokens_per_expert(model, p, tokens) * model.routed_experts / p.ep * load_factor(stack)
    width = model.expert_ffn_hidden / p.etp
    wide = float(counts.expert_width_in(model))
    per_copy = 2.0 * ACT_BYTES * wide + ffn_activation_elements(model) * width
    saved = np.where(fp8, wide + width, 0.0)
    result: FloatArray = copies * (per_copy - saved)
    if stack.recompute_moe_act:
        act_inputs = (ffn_activation_elements(model) - 2.0) / 2.0 * width
        lean = copies * (wide + act_inputs) * np.where(fp8, 1.0, ACT_BYTES)
        result = np.where(p.recompute == RECOMPUTE["selective"], lean, result)
    return result
