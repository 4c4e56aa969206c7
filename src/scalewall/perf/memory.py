"""Per-GPU memory of the most loaded pipeline rank: weights, gradients, optimizer state
(ZeRO sharding), activations (Korthikanti et al. 2022, generalised to GQA/SwiGLU/MLA/MoE) and
the reserve; cheap enough for the search to prune with."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from scalewall import _heap as heap
from scalewall.catalog.schema import ModelSpec
from scalewall.perf import moe
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.perf.attention import (
    head_dims,
)
from scalewall.perf.batch import PRECISION, RECOMPUTE, PlanBatch, is_fp4, is_quantized
from scalewall.perf.compute import ACT_BYTES
from scalewall.perf.data_parallel import fsdp_whole_stage, shard_groups
from scalewall.perf.layers import (
    alternate_matmuls,
    recompute_module_parts,
    recompute_modules_set,
)
from scalewall.workload import counts
from scalewall.workload.counts import LayerKind

FloatArray = NDArray[np.float64]


WEIGHT_BYTES = 2.0  # low-precision weight copy used by the GEMMs


def stage_param_parts(model: ModelSpec, p: PlanBatch) -> dict[str, tuple[FloatArray, FloatArray]]:
    """Parameters per GPU of the first, the busiest middle and the last stage, split into
    those replicated over DP x CP (after TP) and the routed experts (after EP x ETP)."""
    embed = float(model.vocab * model.hidden)
    if model.position_embedding == "learned":
        embed += model.max_seq_len * model.hidden
    out = float(model.vocab * model.hidden)  # tied: the last stage keeps its own copy
    single = p.pp == 1
    mix = moe.stage_layer_mix(model, p)
    replicated: dict[LayerKind, float] = {}
    routed: dict[LayerKind, Any] = {}
    for kind in counts.layer_kinds(model):
        params = counts.kind_params(model, kind)
        replicated[kind] = params.total - params.mlp_routed
        # A layer without routed experts holds none: no array to divide.
        routed[kind] = params.mlp_routed / (p.ep * p.etp) if params.mlp_routed else 0.0
    mtp_kind = counts.MOE if model.is_moe else counts.DENSE
    mtp_layer = counts.kind_params(model, mtp_kind)
    mtp_dense = model.mtp_layers * (
        mtp_layer.total - mtp_layer.mlp_routed + 2.0 * model.hidden**2 + model.hidden
    )
    mtp_expert = model.mtp_layers * mtp_layer.mlp_routed / (p.ep * p.etp)

    def total(name: str, per_layer: dict[LayerKind, Any]) -> FloatArray:
        result: FloatArray = np.zeros_like(p.tp)
        for kind, n in mix[name].items():
            result = result + n * per_layer[kind]
        return result

    def dense(name: str) -> FloatArray:
        return total(name, replicated)

    def expert(name: str) -> FloatArray:
        return total(name, routed)

    first = dense("first") + embed + np.where(single, 0.0 if model.tied_embeddings else out, 0.0)
    last = np.where(single, first, dense("last") + out) + mtp_dense
    return {
        "first": (first / p.tp, expert("first") + np.where(single, mtp_expert, 0.0)),
        "middle": (dense("middle") / p.tp, expert("middle")),
        "last": (last / p.tp, expert("last") + mtp_expert),
    }


def mamba_activation_elements(model: ModelSpec) -> float:
    """Activation elements per token one Mamba layer keeps for backward beyond its block
    input and normed copy (the replicated part every block keeps), sharded over TP: the input
    projection's output z, x, B, C, dt; the convolution's output x, B, C; the SSD output y and
    the gated norm's output (h P each); dt and its cumulative decay in FP32 (2 x 2 h, in BF16
    elements)."""
    inner = float(counts.mamba_inner(model))
    if model.mamba_version == 1:
        # Mamba-1: x and z, the convolution's output, x_proj's output (dt rank, B, C), the
        # step size dt and the scan's output y.
        return 2.0 * inner + inner + counts.mamba1_x_proj_width(model) + 2.0 * inner
    groups_state = float(model.mamba_groups * model.mamba_state)
    sharded = counts.mamba_in_proj_width(model) + (inner + 2.0 * groups_state) + 2.0 * inner
    return sharded + 4.0 * model.mamba_heads


def gdn_activation_elements(model: ModelSpec) -> float:
    """Activation elements per token one Gated DeltaNet layer keeps for backward, sharded over
    TP: the input projections' output (q, k, v, z, beta, a), the convolution's output (q, k,
    v), the chunk kernels' output and the gated norm's, and the FP32 decay and beta per value
    head (2 x 2, in BF16 elements)."""
    key, value, width = counts.gdn_widths(model)
    return float(width + (2 * key + value) + 2 * value + 4 * model.linear_value_heads)


def activation_bytes_per_layer(
    model: ModelSpec,
    p: PlanBatch,
    stack: Stack,
    fp8: NDArray[np.bool_],
    kind: LayerKind = counts.DENSE,
) -> FloatArray:
    """Activation memory one layer keeps for backward, per micro-batch per GPU.

    Korthikanti et al. 2022 (eq. 1-2): replicated part (norm inputs 4D, linear inputs 4D,
    dropout masks 2D) plus TP-sharded part (Q, K, V, projection input, FFN activations and the
    attention scores 5 a s when the kernel is unfused and not recomputed); SP shards it all.
    MLA adds its query and KV latents (replicated); an MoE layer's FFN is its shared experts
    plus the routed experts' copies; a stack that recomputes MLA's up projections under
    selective recompute (``Stack.recompute_mla_up_proj``) keeps no Q, K, V of the heads. FP8
    keeps linear inputs in one byte: 2D of the replicated part, the projection input and the
    FFN down-projection input. Full recompute keeps only the layer input. A hybrid model's
    layer holds one block (half the replicated part) and a Mamba-2 block keeps
    ``mamba_activation_elements``.
    """
    tokens = p.micro_batch * p.seq_len / p.cp
    hidden = float(model.hidden)
    d_qk, d_v = head_dims(model)
    blocks = (kind.mixer != "") + (kind.ffn != "")
    attention = kind.mixer == "attention"
    replicated: Any = (4.0 + (1.0 if model.dropout else 0.0)) * hidden * blocks
    if model.kv_lora_rank and attention:
        latents = model.q_lora_rank + model.kv_lora_rank + model.qk_rope_head_dim
        replicated += ACT_BYTES * latents
    ffn = counts.kind_ffn_width(model, kind)
    ffn_acts = moe.ffn_activation_elements(model) * ffn
    if kind.ffn == "moe" and model.moe_latent:
        # LatentMoE: the up projection's input, the combined latent (its down projection's
        # input is the block's normed input, counted above).
        ffn_acts = ffn_acts + ACT_BYTES * model.moe_latent
    qkvo = model.heads * (d_qk + d_v) + model.kv_heads * (d_qk + d_v) if attention else 0.0
    if attention and model.attention_output_gate:
        qkvo += model.heads * d_v  # the gate, kept for the product's backward
    sharded: FloatArray | float = 2.0 * qkvo
    if model.kv_lora_rank and attention and stack.recompute_mla_up_proj:
        # Q, K and V are rebuilt from the latents in backward: only the context is kept.
        sharded = np.where(p.recompute == RECOMPUTE["selective"], 2.0 * model.heads * d_v, sharded)
    sharded = sharded + ffn_acts
    if kind.mixer == "mamba":
        sharded = sharded + ACT_BYTES * mamba_activation_elements(model)
    elif kind.mixer == "gdn":
        sharded = sharded + ACT_BYTES * gdn_activation_elements(model)
    if attention and not stack.flash_attention:
        scores = (5.0 if model.dropout else 2.0) * model.heads * p.seq_len
        sharded = sharded + np.where(p.recompute == RECOMPUTE["none"], scores, 0.0)
    per_token = np.where(
        p.sequence_parallel > 0, (replicated + sharded) / p.tp, replicated + sharded / p.tp
    )
    per_token = per_token - np.where(
        fp8, blocks * hidden / np.where(p.sequence_parallel > 0, p.tp, 1.0), 0.0
    )
    # The projection (attention or Mamba-2 output) and FFN down-projection inputs in FP8.
    projection = model.heads * d_v if attention else 0.0
    if kind.mixer == "mamba":
        projection = float(counts.mamba_inner(model))
    elif kind.mixer == "gdn":
        projection = float(counts.gdn_widths(model)[1])
    per_token = per_token - np.where(fp8, (projection + ffn) / p.tp, 0.0)
    layer_input = np.where(p.sequence_parallel > 0, ACT_BYTES * hidden / p.tp, ACT_BYTES * hidden)
    if stack.selective_recompute == "alternate-matmuls":
        # The block's input, the attention kernel's output and every other matmul's output;
        # an output of the model width is replicated over TP (sharded with SP).
        up_width = ffn * moe.swiglu_factor(model)
        kept = alternate_matmuls(model, p.tp, kind, ffn, up_width)[0::2]
        wide = np.where(p.sequence_parallel > 0, hidden / p.tp, hidden)
        outputs = sum((wide if replicated else n) for n, _, replicated in kept)
        lean = layer_input + ACT_BYTES * (outputs + projection / p.tp)
        per_token = np.where(p.recompute == RECOMPUTE["selective"], lean, per_token)
    modules = (
        stack.selective_recompute == "attention" and kind.ffn != "" and recompute_modules_set(stack)
    )
    whole_ffn = modules and recompute_module_parts(model, stack, kind)[0]
    if modules:
        selective = p.recompute == RECOMPUTE["selective"]
        dropped = recompute_module_bytes(model, p, fp8, kind, stack)
        per_token = per_token - np.where(selective, dropped, 0.0)
    result: FloatArray = tokens * np.where(p.recompute == RECOMPUTE["full"], layer_input, per_token)
    if kind.ffn == "moe":
        routed = moe.routed_activation_bytes(model, p, stack, tokens, fp8)
        kept = p.recompute == RECOMPUTE["none"] if whole_ffn else p.recompute != RECOMPUTE["full"]
        result = result + np.where(kept, routed, 0.0)
    return result


def recompute_module_bytes(
    model: ModelSpec,
    p: PlanBatch,
    fp8: NDArray[np.bool_],
    kind: LayerKind,
    stack: Stack,
) -> FloatArray:
    """Bytes per token of a layer's activations that Megatron-Core's recompute modules drop
    under selective recompute (``layers.recompute_module_parts``; the routed experts' copies
    apart, ``activation_bytes_per_layer``): a block rebuilt whole keeps only its input (the
    norm output with its FP8 copy, the dropout mask, the dense or shared experts' activations
    and a LatentMoE block's latent go); rebuilt shared experts keep none of theirs; a rebuilt
    norm drops its output as the layer counts it: two bytes per element, one where the linear
    input is kept in FP8."""
    hidden = float(model.hidden)
    whole, shared, norms = recompute_module_parts(model, stack, kind)
    replicated_scale = np.where(p.sequence_parallel > 0, 1.0 / p.tp, 1.0)
    norm_output = (ACT_BYTES - np.where(fp8, 1.0, 0.0)) * hidden
    ffn = counts.kind_ffn_width(model, kind)
    ffn_acts = moe.ffn_activation_elements(model) * ffn - np.where(fp8, ffn, 0.0)
    dropped = norms * norm_output * replicated_scale
    if whole:
        mask = hidden if model.dropout else 0.0
        latent = ACT_BYTES * model.moe_latent if kind.ffn == "moe" else 0.0
        dropped = dropped + (norm_output + mask) * replicated_scale + (ffn_acts + latent) / p.tp
    elif shared:
        dropped = dropped + ffn_acts / p.tp
    result: FloatArray = dropped
    return result


def stage_activations(
    model: ModelSpec, p: PlanBatch, stack: Stack, fp8: NDArray[np.bool_]
) -> dict[str, FloatArray]:
    """Activation bytes of one micro-batch through each stage's layers."""
    per_kind = {
        kind: activation_bytes_per_layer(model, p, stack, fp8, kind)
        for kind in counts.layer_kinds(model)
    }
    out: dict[str, FloatArray] = {}
    for name, mix in moe.stage_layer_mix(model, p).items():
        out[name] = sum((n * per_kind[kind] for kind, n in mix.items()), np.zeros_like(p.tp))
    if model.mtp_layers:
        mtp_kind = counts.MOE if model.is_moe else counts.DENSE
        mtp = per_kind.get(mtp_kind)
        if mtp is None:  # a hybrid model: its module's block is attention and an FFN
            mtp = activation_bytes_per_layer(model, p, stack, fp8, mtp_kind)
        out["last"] = out["last"] + model.mtp_layers * mtp
    return out


def offload_layer_bytes(p: PlanBatch, acts: dict[str, FloatArray]) -> FloatArray:
    """Activation bytes one layer keeps per micro-batch on a plan without pipeline stages (the
    whole model's, ``acts["first"]``, over its layers): what offloading that layer moves to the
    host in forward and back in backward."""
    result: FloatArray = acts["first"] / np.maximum(p.layers_first, 1.0)
    return result


def offloaded_bytes(p: PlanBatch, acts: dict[str, FloatArray], eff: Efficiency) -> FloatArray:
    """Activation bytes a plan's ``offload_layers`` take out of HBM at the peak: every
    offloaded layer's but the ones still being copied (``offload_buffer_layers``)."""
    away = np.maximum(p.offload_layers - eff.memory.offload_buffer_layers, 0.0)
    result: FloatArray = away * offload_layer_bytes(p, acts)
    return result


def host_bytes_per_gpu(host_memory_bytes: float, gpus_per_node: int, eff: Efficiency) -> float:
    """Host memory offloaded activations may take per GPU: the node's
    (``System.host_memory_bytes``) split over its GPUs, times ``host_memory_usable_frac``;
    infinite where the system states none."""
    if host_memory_bytes <= 0:
        return float("inf")
    return host_memory_bytes / max(gpus_per_node, 1) * eff.memory.host_memory_usable_frac


def offload_to_fit(
    model: ModelSpec,
    p: PlanBatch,
    eff: Efficiency,
    stack: Stack,
    capacity_bytes: float,
    host_bytes: float = float("inf"),
    total: FloatArray | None = None,
) -> FloatArray:
    """The fewest layers to offload (``offload_layers``) for each plan to fit in
    ``capacity_bytes``, as a practitioner sets ``cpu_offloading_num_layers``: 0 where the plan
    fits already or cannot offload (pipeline stages, recompute, a stack without
    ``activation_offload``, a plan that states its own count), and where even all but one layer
    would not make it fit or the offloaded layers would not fit in ``host_bytes``
    (``host_bytes_per_gpu``). ``total``: the plans' memory without offloading, where the
    caller has it."""
    if total is None:
        micro_batches = p.global_batch / (p.dp * p.micro_batch)
        _, total = memory_model(model, p, eff, stack, micro_batches)
    zero = np.zeros_like(total)
    if not stack.activation_offload:
        return zero
    open_rows = (p.pp == 1) & (p.recompute == RECOMPUTE["none"]) & (p.offload_layers == 0)
    acts = stage_activations(model, p, stack, is_quantized(p.precision))
    per_layer = np.maximum(offload_layer_bytes(p, acts), 1.0)
    need = np.ceil((total - capacity_bytes) / per_layer) + eff.memory.offload_buffer_layers
    on_host = np.maximum(need - eff.memory.offload_buffer_layers, 0.0) * per_layer
    ok = open_rows & (total > capacity_bytes) & (need < model.layers) & (on_host <= host_bytes)
    result: FloatArray = np.where(ok, need, zero)
    return result


def largest_layer_params(model: ModelSpec, p: PlanBatch) -> FloatArray:
    """Parameters one GPU holds of its largest layer once ZeRO-3 has gathered it: the layer's
    replicated weights over TP, its routed experts over EP x ETP."""
    result: FloatArray = np.zeros_like(p.tp)
    for kind in counts.layer_kinds(model):
        params = counts.kind_params(model, kind)
        size = (params.total - params.mlp_routed) / p.tp + params.mlp_routed / (p.ep * p.etp)
        result = np.maximum(result, size)
    return result


def weight_bytes_per_param(eff: Efficiency, stack: Stack, precision: FloatArray) -> FloatArray:
    """Bytes per parameter of the weights a rank keeps for its GEMMs (outside the optimizer).

    BF16 training weights (2), plus under FP8 a row-wise and a column-wise FP8 copy
    (``Efficiency.memory.fp8_weight_copy_bytes``), under NVFP4 the two 4-bit copies with their
    block scales (``fp4_weight_copy_bytes``). A recipe whose FP8 weights are the only model
    weights (``Stack.fp8_primary_weights``: Megatron-Core ``--fp8-param-gather``, DeepSeek-V3's
    FP32 master weights cast straight to FP8) keeps no BF16 copy; its full-precision main
    weights are part of the optimizer state. ``Stack.fp8_block_keeps_bf16_weights`` exempts the
    block-scaled recipe (``fp8-block``), which keeps its BF16 weights there."""
    quantized = is_quantized(precision)
    fp4 = is_fp4(precision)
    primary = quantized & ~fp4 & stack.fp8_primary_weights
    if stack.fp8_block_keeps_bf16_weights:
        primary = primary & (np.asarray(precision) != PRECISION["fp8-block"])
    training = np.where(primary, 0.0, WEIGHT_BYTES)
    copies = np.where(
        fp4,
        eff.memory.fp4_weight_copy_bytes,
        np.where(quantized, eff.memory.fp8_weight_copy_bytes, 0.0),
    )
    result: FloatArray = training + copies
    return result


def rank_loads(
    model: ModelSpec,
    p: PlanBatch,
    stack: Stack,
    acts: dict[str, FloatArray],
    micro_batches: FloatArray,
    params: dict[str, tuple[FloatArray, FloatArray]] | None = None,
) -> list[tuple[tuple[FloatArray, FloatArray], FloatArray]]:
    """(dense, expert) parameters and activation bytes of the candidate most loaded ranks.

    1F1B: the first stage keeps min(m, pp) micro-batches in flight (interleaving adds
    (pp - 1) / (pp vpp) of that; Korthikanti et al. 2022, Sec. 4.2.3), the last one micro-batch
    plus the logits. DualPipe (DeepSeek-V3 report Sec. 3.2.1, Table 2): a rank holds stage i
    of one direction and stage pp - 1 - i of the other, so the first rank holds the first and
    the last stage ("two copies of the model parameters" of 1F1B's one stage), with pp + 1
    micro-batch chunks of activations in flight, counted here at the first stage's size.
    ``params``: ``stage_param_parts(model, p)`` where the caller has it."""
    if params is None:
        params = stage_param_parts(model, p)
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
    model: ModelSpec,
    p: PlanBatch,
    eff: Efficiency,
    stack: Stack,
    micro_batches: FloatArray,
    *,
    params: dict[str, tuple[FloatArray, FloatArray]] | None = None,
) -> tuple[dict[str, FloatArray], FloatArray]:
    """Per-GPU memory by part on the most loaded pipeline rank, and the total.

    Per parameter: the GEMMs' weights (``weight_bytes_per_param``), the main gradient in the
    reduce dtype (``Stack.grad_reduce_bytes``) and the optimizer state
    (``Stack.optimizer_state_bytes``: FP32 main weights and Adam moments), sharded by ZeRO
    stage 3, 2 and 1 respectively over DP x CP for replicated parameters and over the experts'
    data-parallel width tp cp dp / (ep etp) for routed experts (Megatron-Core's distributed
    optimizer with BF16 weights and FP32 gradients: 6 + 12 / d bytes per parameter); weights
    and gradients whole where a pipeline keeps FSDP's units gathered (``fsdp_whole_stage``).
    Cheaper than the full step model: the search calls it to prune plans that do not fit.
    ``params``: ``stage_param_parts(model, p)`` where the caller has computed it.
    """
    heap.for_batch(len(p))
    shard, _ = shard_groups(p, stack)
    expert_shard = p.tp * p.cp * p.dp / (p.ep * p.etp)
    quantized = is_quantized(p.precision)
    acts = stage_activations(model, p, stack, quantized)
    tokens = p.micro_batch * p.seq_len / p.cp
    weight_bytes = weight_bytes_per_param(eff, stack, p.precision)
    # A pipeline that keeps FSDP's gathered weights and unsharded gradients through the step
    # holds them whole (``fsdp_whole_stage``); only the optimizer state stays sharded.
    whole = fsdp_whole_stage(p, stack)
    gathered = np.where(
        (p.zero >= 3) & ~whole,
        eff.memory.zero3_gathered_layers * largest_layer_params(model, p) * weight_bytes,
        0.0,
    )

    def sharded(per_param: Any, zero_stage: int, parts: tuple[FloatArray, FloatArray]) -> Any:
        dense_p, expert_p = parts
        split = (p.zero >= zero_stage) & ~(whole & (zero_stage >= 2))
        dense_b = dense_p * per_param / np.where(split, shard, 1.0)
        if not model.is_moe:
            return dense_b
        return dense_b + expert_p * per_param / np.where(split, expert_shard, 1.0)

    best: dict[str, FloatArray] | None = None
    best_total = np.zeros_like(tokens)
    # Offloading needs a single stage (``plan.validate``): both candidate ranks are that stage.
    away = offloaded_bytes(p, acts, eff) if (p.offload_layers > 0).any() else 0.0
    for parts, rank_acts in rank_loads(model, p, stack, acts, micro_batches, params):
        part = {
            "weights": sharded(weight_bytes, 3, parts) + gathered,
            "gradients": sharded(stack.grad_reduce_bytes, 2, parts),
            "optimizer_state": sharded(stack.optimizer_state_bytes, 1, parts),
            "activations": rank_acts - away,
            "reserved": np.full_like(tokens, eff.memory.memory_reserved_bytes),
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
