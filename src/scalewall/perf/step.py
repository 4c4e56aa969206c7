"""The training-step model: time, memory and FLOPs of one optimizer step, over a batch of plans.

Notation per GPU: t = tp, c = cp, b = micro-batch, s = sequence length, T = b*s/c token rows a
GPU processes per micro-batch, m = micro-batches per step, D, F, H, K, d, V from the model.

The composition of the parts, each in its own module: ``layers`` (one dense or MoE layer,
attention from ``attention``), ``pipeline`` (the schedule's bubble and point-to-point traffic),
``data_parallel`` (gradient reduction, parameter gather, ZeRO-3 per-layer collectives and the
per-step synchronisation), ``memory`` (the most loaded rank's bytes). ``step_model`` adds them
into the step time with a named breakdown whose parts add up to it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from numpy.typing import NDArray

from scalewall import _heap as heap
from scalewall.catalog.schema import ModelSpec
from scalewall.perf import moe, pipeline
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.perf.batch import RECOMPUTE, PlanBatch, is_quantized
from scalewall.perf.compute import (
    Device,
    memory_bound_time_s,
)
from scalewall.perf.data_parallel import (
    dp_times,
    fsdp_whole_stage,
    grad_accumulation_bytes,
    per_layer_sharding,
    step_sync_s,
)
from scalewall.perf.layers import (
    alternate_matmuls,
    distinct_layer_times,
    per_row_constants,
    recompute_modules_set,
    stage_sums,
)
from scalewall.perf.memory import (
    host_bytes_per_gpu,
    memory_model,
    offload_layer_bytes,
    offloaded_bytes,
    stage_activations,
    stage_param_parts,
)
from scalewall.plan.topology import Cluster
from scalewall.workload import counts

FloatArray = NDArray[np.float64]


LAYER_PARTS = (
    "recompute",
    "tp_comm",
    "cp_comm",
    "ep_comm",
    "moe_imbalance",
    "host_overhead",
    "grad_accumulation",
    "offload",
)
"""Parts of the critical stage's per-micro-batch time: the steady state is split among them in
proportion to that stage's layers (compute is what they leave)."""

BREAKDOWN_PARTS = (
    "compute",
    *LAYER_PARTS,
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
    """The headroom is within ``Efficiency.memory.memory_fit_margin_frac`` of zero either way: the
    memory model cannot tell whether the plan fits."""


def step_model(
    model: ModelSpec, cluster: Cluster, p: PlanBatch, eff: Efficiency, stack: Stack
) -> StepArrays:
    """Evaluate every plan of the batch: step time with its breakdown, FLOP rates, memory."""
    heap.for_batch(len(p))
    dev = Device.of(cluster.accelerator, p.precision, eff)
    micro_batches = p.global_batch / (p.dp * p.micro_batch)
    times = distinct_layer_times(model, cluster, p, eff, stack)
    sums = stage_sums(model, p, times.layers)
    params = stage_param_parts(model, p)
    # Each micro-batch's weight gradients are added into the reduced buffer at the end of its
    # backward (unless the GEMM accumulates in place): one pass over the stage's parameters.
    acc_bytes = grad_accumulation_bytes(stack, p.precision)
    fused = stack.grad_accumulation == "fused"
    for name, stage in sums.items():
        acc = (
            np.zeros_like(micro_batches)
            if fused
            else memory_bound_time_s((params[name][0] + params[name][1]) * acc_bytes, dev, eff)
        )
        stage["grad_accumulation"] = acc
        stage["bwd"] = stage["bwd"] + acc
        stage["total"] = stage["total"] + acc
    offload_f, offload_b = offload_exposed_s(model, cluster, p, eff, stack, sums)
    for stage in sums.values():
        stage["offload"] = offload_f + offload_b
        stage["fwd"] = stage["fwd"] + offload_f
        stage["bwd"] = stage["bwd"] + offload_b
        stage["total"] = stage["total"] + offload_f + offload_b
    head_f, head_b = times.head
    last_f, last_b = sums["last"]["fwd"] + head_f, sums["last"]["bwd"] + head_b
    if times.mtp is not None:
        last_f, last_b = last_f + times.mtp[0], last_b + times.mtp[1]
    single = p.pp == 1
    t_first = np.where(single, last_f + last_b, sums["first"]["fwd"] + sums["first"]["bwd"])
    t_middle = np.where(p.pp > 2, sums["middle"]["fwd"] + sums["middle"]["bwd"], 0.0)
    t_last = np.where(single, 0.0, last_f + last_b)
    t_max = np.maximum(np.maximum(t_first, t_middle), t_last)
    t_sum = t_first + np.maximum(p.pp - 2.0, 0.0) * t_middle + t_last
    bubble = pipeline.bubble_s(stack, p.pp, p.vpp, t_sum, t_max)
    bubble = bubble * pipeline.schedule_runs(p, stack)

    pp_comm = pipeline.p2p_s(model, cluster, p, eff, stack, micro_batches)
    pp_comm = pp_comm + pipeline.tied_embedding_sync_s(model, cluster, p, eff, stack)

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
    dp_comm, fsdp_comm = dp_times(
        cluster,
        p,
        eff,
        stack,
        (pick[0], pick[1]),
        (window_f, window_b),
        (stage_layers, window_f, window_b),
        micro_batches,
    )
    opt_params = pick[0] / np.where(p.zero >= 1, p.dp * p.cp, 1.0)
    if model.is_moe:
        opt_params = opt_params + pick[1] / np.where(
            p.zero >= 1, p.tp * p.cp * p.dp / (p.ep * p.etp), 1.0
        )
    optimizer = memory_bound_time_s(opt_params * eff.step.optimizer_bytes_per_param, dev, eff)
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
    breakdown = {k: steady * critical(k) / layer_total for k in LAYER_PARTS}
    breakdown["compute"] = steady - sum(breakdown.values(), np.zeros_like(steady))
    num_gpus = p.tp * p.pp * p.dp * p.cp
    covered = breakdown["compute"] + breakdown["recompute"]
    straggler = covered * eff.step.rank_jitter_cv * expected_max_normal(num_gpus)
    # Synchronisations per layer and micro-batch: FSDP's gathers and reduce-scatter, else the
    # forward's and the backward's collectives.
    kept = fsdp_whole_stage(p, stack)
    per_layer = np.where(
        per_layer_sharding(p, stack) & ~kept, stack.zero3_gathers_per_micro_batch, 1.0
    )
    syncs = (1.0 + per_layer) * micro_batches * np.maximum(stage_layers, 1.0)
    straggler = straggler + sync_noise_s(covered, syncs, coupled_ranks(model, p, stack), eff)
    breakdown.update(
        pp_comm=pp_comm,
        pipeline_bubble=bubble,
        dp_comm=dp_comm,
        fsdp_comm=fsdp_comm,
        step_sync=_per_size(step_sync_s, cluster, eff, num_gpus),
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
    # forward (a hybrid's scans too), selective only the attention core (or, under op-level
    # selective checkpointing, every second matmul of each block).
    attention = counts.attention_flop_per_token(model, 1, causal_half=False) * p.seq_len
    layer_fwd_flop = (
        counts.matmul_flop_per_token(model)
        - 2.0 * model.hidden * model.vocab
        + _scan_flop_per_token(model, p)
    )
    selective = attention
    if stack.selective_recompute == "alternate-matmuls":
        selective = np.full_like(attention, selective_matmul_flop_per_token(model))
    elif recompute_modules_set(stack):
        selective = selective + module_recompute_flop_per_token(model, stack)
    redone = np.where(
        p.recompute == RECOMPUTE["full"],
        layer_fwd_flop + attention,
        np.where(p.recompute == RECOMPUTE["selective"], selective, 0.0),
    )
    hw_rate = model_rate + redone * tokens_step / step / num_gpus
    memory, total = memory_model(model, p, eff, stack, micro_batches, params=params)
    headroom = 1.0 - total / cluster.accelerator.hbm_capacity_bytes
    fits = total <= cluster.accelerator.hbm_capacity_bytes
    if (p.offload_layers > 0).any():
        # Offloaded activations must fit in the host memory the GPU's share of the node gives.
        away = offloaded_bytes(
            p, stage_activations(model, p, stack, is_quantized(p.precision)), eff
        )
        system = cluster.system
        fits = fits & (
            away <= host_bytes_per_gpu(system.host_memory_bytes, system.gpus_per_node, eff)
        )
    peak = cluster.accelerator.peak_16bit_flop_per_s
    return StepArrays(
        step_time_s=step,
        tokens_per_s=tokens_step / step,
        mfu=model_rate / peak,
        hfu=hw_rate / peak,
        model_tflops_per_gpu=model_rate / 1e12,
        hardware_tflops_per_gpu=hw_rate / 1e12,
        memory_bytes=memory,
        memory_total_bytes=total,
        fits=fits,
        breakdown_s=breakdown,
        memory_headroom_frac=headroom,
        near_memory_limit=np.abs(headroom) <= eff.memory.memory_fit_margin_frac,
    )


def offload_exposed_s(
    model: ModelSpec,
    cluster: Cluster,
    p: PlanBatch,
    eff: Efficiency,
    stack: Stack,
    sums: dict[str, dict[str, FloatArray]],
) -> tuple[FloatArray, FloatArray]:
    """Forward and backward time per micro-batch that activation offloading
    (``offload_layers``) adds: each offloaded layer's activations cross the host link
    (``System.host_link_bytes_per_s_per_gpu`` at ``host_copy_bw_efficiency``; PCIe 5.0 where
    the system gives none) to the host while the next layer computes and back while the layer
    after it runs backward (Megatron-Core's offload handler overlaps both with compute), so only
    a copy longer than a layer's time shows. Zero without offloading (always with pipeline
    stages, which offloading excludes). Whether the stack can offload is for the plan checks
    (``plan.stack_allows``): a plan that offloads is costed as it runs."""
    zero = np.zeros_like(p.tp)
    if not (p.offload_layers > 0).any():
        return zero, zero
    acts = stage_activations(model, p, stack, is_quantized(p.precision))
    link = cluster.system.host_link_bytes_per_s_per_gpu or eff.memory.host_link_fallback_bytes_per_s
    copy_s = offload_layer_bytes(p, acts) / (link * eff.memory.host_copy_bw_efficiency)
    layers = np.maximum(p.layers_first, 1.0)
    fwd = np.maximum(copy_s - sums["first"]["fwd"] / layers, 0.0) * p.offload_layers
    bwd = np.maximum(copy_s - sums["first"]["bwd"] / layers, 0.0) * p.offload_layers
    return fwd, bwd


def coupled_ranks(model: ModelSpec, p: PlanBatch, stack: Stack) -> FloatArray:
    """Ranks one layer's collectives tie together on a pipeline stage: the tensor- and
    context-parallel group, times the data-parallel ranks under per-layer sharding (each layer
    all-gathers and reduce-scatters over its shard group and, hybrid, all-reduces over the
    replicas: ``per_layer_sharding``) or, in an MoE model, the expert-parallel
    group (each MoE layer's all-to-all), at most the stage's ranks."""
    # Hybrid sharding all-reduces each layer's gradient shard over the replicas too: every
    # data-parallel rank either way.
    fsdp = np.where(per_layer_sharding(p, stack), p.dp, 1.0)
    # Megatron-Core draws an expert group's ranks across TP x DP: its TP ranks are among them.
    experts = p.ep * p.etp / np.minimum(p.ep * p.etp, p.tp) if model.is_moe else 1.0
    result: FloatArray = np.minimum(p.tp * p.cp * np.maximum(fsdp, experts), p.tp * p.cp * p.dp)
    return result


def sync_noise_s(
    covered: FloatArray, syncs: FloatArray, ranks: FloatArray, eff: Efficiency
) -> FloatArray:
    """Host noise amplified by synchronisation: the time ``syncs`` group-wide synchronisations
    over ``ranks`` ranks add to ``covered`` seconds of work between them.

    Each rank stalls now and then (an unaligned Python garbage collection, an OS or driver
    event): stalls of ``Efficiency.step.rank_noise_event_s`` at a rate that loses
    ``rank_noise_duty_frac`` of one rank's time. A synchronisation waits for every rank, so an
    interval of ``dt = covered / syncs`` is late by one stall whenever any of the n ranks
    stalled in it: ``syncs D (1 - exp(-n f dt))``, f = duty / D. The loss grows as n d while
    n f dt << 1 and stops at D per synchronisation (Petrini et al. SC'03, "The case of the
    missing supercomputer performance": noise amplified by collectives; Hoefler et al. SC'10
    by simulation; torchtnt's GarbageCollector callback on unaligned collections as
    stragglers). Per-layer collectives over the whole group (FSDP, ZeRO-3) amplify it; tensor
    parallelism within a node and once-per-step data parallelism hardly do."""
    # Arrays too: calibration passes one value per draw. A zero stall length is no noise
    # (syncs x 1e-12 s).
    event = np.maximum(np.asarray(eff.step.rank_noise_event_s, dtype=np.float64), 1e-12)
    rate = eff.step.rank_noise_duty_frac / event
    late = -np.expm1(-ranks * rate * covered / np.maximum(syncs, 1.0))
    result: FloatArray = syncs * event * late
    return result


def distinct_values(values: FloatArray) -> tuple[FloatArray, NDArray[np.intp]]:
    """The distinct values of a batch column and each row's index into them, for work done
    once per value and spread to the rows; a column of one value (a search batch's job size or
    sequence length) needs no sort over its rows."""
    flat = np.asarray(values, dtype=np.float64).ravel()
    if flat.size and flat.min() == flat.max():
        return flat[:1], np.zeros(flat.size, dtype=np.intp)
    uniques, index = np.unique(flat, return_inverse=True)
    return uniques, index


def expected_max_normal(n: FloatArray) -> FloatArray:
    """E[max of n standard normals] by Blom's formula Phi^-1((n - 0.375) / (n + 0.25))
    (Blom 1958; within 1% of the exact value for n >= 2: 0.56 at 2, 3.2 at 1,024)."""
    # A batch holds few distinct job sizes: invert the normal once per size (the standard
    # library's inverse CDF, so a single estimate does not load scipy).
    sizes, index = distinct_values(n)
    quantiles = [
        NormalDist().inv_cdf((k - 0.375) / (k + 0.25)) if k > 1 else 0.0 for k in sizes.tolist()
    ]
    result: FloatArray = np.asarray(quantiles, dtype=np.float64)[index.reshape(np.shape(n))]
    return result


def _per_size(
    fn: Callable[[Cluster, Efficiency, FloatArray], FloatArray],
    cluster: Cluster,
    eff: Efficiency,
    num_gpus: FloatArray,
) -> FloatArray:
    """``fn(cluster, eff, num_gpus)`` evaluated once per distinct job size and spread to the
    rows (a search batch is one size): the same values, without a pass over every row."""
    shared = num_gpus.size > 1 and not per_row_constants(eff, cluster)
    if shared and num_gpus.min() == num_gpus.max():
        return np.full_like(num_gpus, fn(cluster, eff, num_gpus[:1])[0])
    return fn(cluster, eff, num_gpus)


def _scan_flop_per_token(model: ModelSpec, p: PlanBatch) -> FloatArray:
    """Forward FLOPs per token of a hybrid model's chunked scans (Mamba-2's SSD, Gated
    DeltaNet's delta rule) at each row's sequence length; 0 for a transformer."""
    if not (model.layer_pattern or model.mixer_pattern):
        return np.zeros_like(p.seq_len)

    mamba, gdn = counts.mamba_layers(model), counts.gdn_layers(model)

    def scans(seq_len: float) -> float:
        s = int(seq_len)
        return mamba * counts.ssd_flop_per_token(model, s) + gdn * counts.gdn_flop_per_token(
            model, s
        )

    # Once per distinct sequence length (a search batch has one), not once per row.
    lengths, index = distinct_values(p.seq_len)
    result: FloatArray = np.array([scans(s) for s in lengths], dtype=np.float64)[index]
    return result.reshape(p.seq_len.shape)


def _model_flop_per_token(model: ModelSpec, p: PlanBatch) -> FloatArray:
    """Megatron's model FLOPs per token (6N-style matmuls plus full-square attention, and a
    hybrid model's chunked-scan products: ``counts.model_flop_per_token`` per plan row)."""
    matmul = counts.matmul_flop_per_token(model)
    attention = counts.attention_flop_per_token(model, 1, causal_half=False)
    result: FloatArray = 3.0 * (matmul + attention * p.seq_len + _scan_flop_per_token(model, p))
    return result


def module_recompute_flop_per_token(model: ModelSpec, stack: Stack) -> float:
    """Forward matmul FLOPs per token Megatron-Core's recompute modules run again under
    selective recompute (``layers.module_recompute_s``): every dense MLP block
    (``recompute_mlp``), every MoE block's router, top-k routed and shared experts
    (``recompute_moe``), or its shared experts alone (``recompute_shared_experts``)."""
    total = 0.0
    for kind, count in counts.kind_counts(model).items():
        params = counts.kind_params(model, kind)
        if kind.ffn == "dense" and stack.recompute_mlp:
            total += count * 2.0 * params.mlp_dense
        elif kind.ffn == "moe" and stack.recompute_moe:
            routed = params.mlp_routed * model.top_k / model.routed_experts
            total += count * 2.0 * (params.mlp_dense + routed + params.router)
        elif kind.ffn == "moe" and stack.recompute_shared_experts:
            shared = model.shared_experts * counts.ffn_params(
                model, counts.shared_expert_width(model)
            )
            total += count * 2.0 * shared
    return total


def selective_matmul_flop_per_token(model: ModelSpec) -> float:
    """Forward FLOPs per token of the matmuls op-level selective checkpointing runs again
    (``Stack.selective_recompute`` ``alternate-matmuls``): every second one of each block in
    forward order (``layers.alternate_matmuls``), over the layers of every kind."""
    one = np.ones(1)
    total = 0.0
    for kind, count in counts.kind_counts(model).items():
        if count <= 0:
            continue
        ffn = counts.kind_ffn_width(model, kind)
        again = alternate_matmuls(model, one, kind, ffn, ffn * moe.swiglu_factor(model))
        total += count * sum(
            2.0 * float(np.asarray(n).item()) * float(np.asarray(k).item())
            for n, k, _ in again[1::2]
        )
    return total


__all__ = [
    "BREAKDOWN_PARTS",
    "StepArrays",
    "coupled_ranks",
    "expected_max_normal",
    "memory_model",
    "step_model",
    "sync_noise_s",
]
