"""Every efficiency and overlap assumption of the step model: named fields with documented defaults.

Two groups: ``Efficiency`` holds hardware-behaviour constants (one set for every case, fitted to
microbenchmarks and published runs); ``Stack`` holds what the training software does (which
communication it overlaps, which kernels it fuses). Presets name real software stacks.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from scalewall.errors import SpecError


@dataclass(frozen=True, kw_only=True)
class Efficiency:
    """Hardware-behaviour constants of the step model (one set for all cases)."""

    gemm_tile_m: int = 128
    """Output tile rows of a tensor-core GEMM kernel (CUTLASS/cuBLAS 128x256 or 256x128 tiles)."""
    gemm_tile_n: int = 256
    """Output tile columns; tiles are spread over SMs in waves, a partial last wave idles SMs."""
    gemm_k_half_efficiency: float = 64.0
    """Inner dimension at which a GEMM's main loop reaches half its asymptotic rate: prologue and
    epilogue (loading the first K-slices, writing C) are amortised over K, so efficiency scales
    as K / (K + k_half)."""
    gemm_launch_s: float = 4e-6
    """Fixed cost per GEMM kernel (launch and tail), seconds."""
    hbm_efficiency: float = 0.80
    """Achieved fraction of HBM bandwidth for streaming element-wise kernels (STREAM-like copies
    reach 80-90% on A100/H100)."""
    flash_attention_frac: float = 0.50
    """Fraction of the dense tensor peak reached by fused (flash) attention, forward and backward
    together (FlashAttention-2 reports 50-73% of peak forward and lower backward on A100;
    Dao 2023)."""
    gemm_sustained_ratio: float = 0.91
    """GEMM rate inside a training step over the accelerator's best-shape microbenchmark ceiling
    (``gemm_max_frac``): library heuristics on arbitrary shapes, clocks settling at the power
    limit over a whole step. Calibrated once on the published runs (``scalewall validate``)."""
    unfused_attention_bytes_per_score: float = 6.0
    """HBM bytes per attention score in the unfused forward chain without dropout: write QK^T
    (2), fused scale-mask-softmax read and write (4)."""
    attention_dropout_bytes_per_score: float = 5.0
    """Extra bytes per score when attention dropout runs: read, write and a 1-byte mask."""
    dropout_bytes_per_hidden: float = 20.0
    """HBM bytes per hidden element per layer for the two hidden dropouts, forward (read 2,
    write 2, mask 1) and backward (read grad 2, mask 1, write 2)."""
    scale_up_bw_efficiency: float = 0.80
    """Ring bus bandwidth over NVLink line rate: 8x A100 235/300 = 0.78, 8x H100 370/450 = 0.82
    (nccl-tests all_reduce, 16 GiB)."""
    scale_up_nvls_algbw_efficiency: float = 0.61
    """All-reduce algorithm bandwidth with NVLink SHARP over line rate: 8x H100 275/450."""
    scale_out_bw_efficiency: float = 0.92
    """Ring bus bandwidth over NIC line rate: DGX A100 8x HDR 192/200 = 0.96, H100 NDR 46-48/50."""
    collective_launch_s: float = 20e-6
    """Fixed cost of one collective call (launch, protocol setup): small-message all-reduce on
    8x H200 takes ~40 us at 32 KiB with NVLS, about 20-40 us without the bandwidth term."""
    ring_step_latency_scale_up_s: float = 1.0e-6
    """Latency of one ring step between GPUs of a scale-up domain."""
    ring_step_latency_scale_out_s: float = 4.0e-6
    """Latency of one ring step across the network, on top of the switch hops."""
    optimizer_bytes_per_param: float = 32.0
    """HBM traffic of one Adam step per parameter: read fp32 grad, master, m, v (16 B), write
    master, m, v (12 B), write the low-precision copy (2-4 B)."""
    memory_reserved_bytes: float = 3.0 * 2**30
    """HBM not available to the model: CUDA context, NCCL buffers, allocator fragmentation."""
    dp_overlap_efficiency: float = 1.0
    """Fraction of the overlap window that hides data-parallel communication (fitted on the
    published runs: the whole window)."""
    pp_p2p_overlap_frac: float = 0.8
    """Fraction of pipeline point-to-point time hidden when the stack overlaps it."""
    pp_p2p_sync_s: float = 50e-6
    """Handshake of one pipeline send/receive pair that no overlap hides (posting the
    operations, waiting for the peer): paid per micro-batch, per virtual stage, per direction."""
    ecmp_flows_per_path: float = 16.0
    """Flows a collective spreads over each hashed path (NCCL channels x queue pairs; Meta's
    enhanced ECMP hashes extra header fields to the same end, Llama 3 report Sec. 3.3.1).
    With k flows per path over U paths the busiest path carries about
    1 + sqrt(2 ln U / k) times the mean (Raab and Steger 1998, balls into bins, m >> n)."""
    rank_jitter_cv: float = 0.01
    """Coefficient of variation of one healthy rank's compute time per step. Synchronous
    training waits for the slowest of N ranks: E[max] of N normals ~ sqrt(2 ln N) standard
    deviations (Gumbel limit). The ByteDance straggler study (OSDI'25, arXiv 2505.05713) bounds
    it: 10.4% of GPU-hours lost overall, most of it to persistent slow nodes and data skew that
    healthy-rank jitter excludes; 1% gives 3-4% at 1K-16K ranks."""
    attention_half_tokens: float = 240.0
    """Key length at which a fused attention kernel runs at half its long-sequence rate: each
    (sequence, head, query tile) pays a fixed prologue and epilogue amortised over the loop
    over keys, so the rate scales as L / (L + L_half). FlashAttention-3 forward on H100 with
    16K tokens per batch and head dim 128 (pytorch/benchmark commit ff65cb6, 2024) reaches
    430.3, 517.1, 565.5, 590.2, 614.2 and 620.7 TFLOP/s at sequence 512, 1K, 2K, 4K, 8K and
    16K: L_half = 240 fits all six within 1.5%. The accelerator's and the stack's attention
    fractions are the long-sequence rates; ring context parallelism runs the kernel on
    s / cp keys per step, which is where this matters."""
    zero3_gathered_layers: float = 2.0
    """Layers whose full (unsharded) parameters a ZeRO-3 / FSDP rank holds at once: the layer
    it computes and the next one, gathered ahead (FSDP's default backward prefetch; DeepSpeed
    ZeRO-3 prefetches by a parameter-count budget to the same end)."""
    host_op_s: float = 50e-6
    """CPU time to issue one counted GPU operation from an eager PyTorch training step (Python
    module code, the dispatcher, Transformer Engine's C++ front end and the CUDA launch). The
    host enqueues work ahead of the GPU, so a layer takes the longer of its GPU time and the
    time to issue its operations: host time only shows where the per-operation GPU work is
    small (small micro-batches, wide tensor parallelism, many experts per GPU). CUDA graphs
    replay captured operations with one launch (``Stack.cuda_graphs``). The operation counts
    below are a coarse tally of the main kernels, so this is the host time per counted
    operation including the small ones around it. Fitted on the published runs: the
    Megatron-Bridge MoE rows without CUDA graphs (Qwen3 and DeepSeek-V3 on B200 and H100) set
    it from below, the 2022 Megatron A100 runs (Korthikanti et al.), which turn host-bound
    above about 55 us, from above."""
    host_ops_attention_fwd: float = 24.0
    """Operations the host issues for one attention block forward: norm, the QKV projection
    and its FP8 casts, rotary embedding, the attention kernel, the output projection, the
    residual add, tensor-parallel collectives and the reshapes around them."""
    host_ops_mla_extra_fwd: float = 12.0
    """Further operations of a multi-head latent attention block forward: the low-rank down and
    up projections of queries and keys/values, their norms, and the split and concatenation of
    the rotary and non-rotary head parts."""
    host_ops_mlp_fwd: float = 12.0
    """Operations of one dense MLP block forward: norm, up and down projections with their
    casts, the activation, the residual add and tensor-parallel collectives."""
    host_ops_moe_fwd: float = 40.0
    """Operations of one MoE block forward outside the expert GEMMs: router GEMM, top-k and
    score normalisation, load-balancing statistics, token permutation, dispatch and combine
    all-to-all with their bookkeeping, un-permutation and the weighted sum."""
    host_ops_router_fwd: float = 16.0
    """The share of ``host_ops_moe_fwd`` spent before the dispatch: the router GEMM, top-k and
    score normalisation, the load-balancing statistics and the dispatcher's preprocessing
    (tokens per expert, the permutation map); Megatron-Core captures these in CUDA graphs with
    ``cuda_graph_scope`` moe_router and moe_preprocess (``Stack.cuda_graphs`` router or
    attention)."""
    host_ops_per_local_expert_fwd: float = 2.0
    """Operations per local expert of one MoE layer forward: Transformer Engine's grouped linear
    issues one GEMM per expert for each of the two expert projections."""
    host_ops_bwd_ratio: float = 2.0
    """Backward operations per forward operation (autograd runs a data-gradient and a
    weight-gradient kernel per linear, and the element-wise backward kernels)."""
    fp8_gemm_ceiling_ratio: float = 1.0
    """FP8 large-GEMM ceiling over the BF16 one, as fractions of each peak, on Hopper (and any
    part without hardware microscaling); Blackwell: ``fp8_gemm_ceiling_ratio_blackwell``.
    DeepGEMM reaches up to 1,550 of 1,979 TFLOP/s FP8 on H800 (deepseek-ai/DeepGEMM README,
    2025-04-18 entry), 0.783 of peak with block-wise scaling promoted on CUDA cores, i.e. 0.98
    of the BF16 ceiling's 0.803 (794.5 TFLOP/s, stas00/ml-engineering) and 1.03 with the
    ``fp8_block_scaling_gemm_slowdown_frac`` loss restored; a cuBLASLt E4M3 8192^3 GEMM
    measured on 16 H100-class GPUs gives 1,599-1,630 TFLOP/s (1.01; han.zhao/test_gpu_scripts
    reports_cublaslt_fp8_crosscheck_20260524.md, which also shows PyTorch ``_scaled_mm`` at
    1,170-1,180 on the same GPUs): 1.0. The mamf-finder FP8 figure in stas00/ml-engineering
    (1,402.6 TFLOP/s, 0.88) sits below both kernel libraries; the dense FP8 H100 runs of the
    frontier validation file (NeMo 24.07, Megatron-Bridge 26.02) came out 9-17% slow with it."""
    fp8_gemm_ceiling_ratio_blackwell: float = 0.98
    """The same ratio on parts with hardware microscaling (Blackwell): the same table measures
    B200 0.98 and GB200 0.99 (fifth-generation tensor cores run FP8 at the BF16 efficiency;
    Hopper's FP8 WGMMA loses more to operand staging); the lower figure is taken."""
    fp8_cast_bytes_per_element: float = 4.0
    """HBM bytes to quantize one BF16 GEMM operand element to FP8: read 2, write 2, as the
    fused cast writes a row-wise and a column-wise (transposed) FP8 copy: Hopper's FP8 GEMMs
    take only the TN layout, and MXFP8's 32-element scales run along the contraction dimension,
    so the weight-gradient GEMM needs its own quantization (Transformer Engine
    ``cast_transpose`` / MXFP8 ``rowwise`` and ``columnwise`` usage). Paid on the
    inputs of every FP8 linear forward (X) and backward (dY); weights are cast once per step
    and cached across micro-batches (Transformer Engine ``is_first_microbatch``)."""
    fp8_amax_bytes_per_element: float = 2.0
    """Per-tensor scaling's extra pass over each cast tensor for its absolute maximum (current
    scaling, or delayed scaling's amax history update): one more BF16 read. Block-wise and
    MXFP8 scales are computed inside the cast kernel over 128- or 32-element blocks."""
    fp8_block_scaling_gemm_slowdown_frac: float = 0.05
    """GEMM time lost to block-wise (1x128 / 128x128) scaling done in software on Hopper: the
    partial sums are promoted to FP32 and rescaled on CUDA cores every 128 elements of K
    (DeepSeek-V3 report Sec. 3.3.2; DeepGEMM overlaps most of it with the WGMMA pipeline).
    MXFP8 on Blackwell applies its 32-element block scales inside the tensor core: no loss."""
    fp8_weight_copy_bytes: float = 2.0
    """HBM bytes per parameter for the FP8 weight copies kept beside the BF16 weights: a
    row-wise and a column-wise (transposed) FP8 copy, as the forward and the backward GEMMs
    read the weight in different layouts (Transformer Engine on Hopper and MXFP8)."""
    expert_alltoall_bw_efficiency: float = 1.0
    """Achieved fraction of a tier's collective bandwidth for the MoE dispatch/combine
    all-to-all. DeepEP on H800 reaches 153-158 GB/s NVLink of the 160 GB/s the report measures
    and 43-58 GB/s RDMA per 50 GB/s NIC (deepseek-ai/DeepEP README), i.e. what the ring
    efficiencies above already give: 1.0."""
    overlap_compute_slowdown_frac: float = 0.0
    """Compute time lost per second of communication hidden behind it: collective kernels
    occupy SMs (NCCL uses up to 32 of 132 on H100) and share HBM bandwidth. The published runs
    show no measurable effect once the other constants are fitted, so the default is 0; set it
    to study SM contention."""
    step_sync_allreduces: float = 3.0
    """Scalar all-reduces over every rank that each step waits for outside the overlapped
    gradient traffic: Megatron-LM's gradient-norm all-reduce for clipping
    (``clip_grad_norm_fp32``), its found-inf / NaN check over the gradients and the loss
    average over the data-parallel group (``average_losses_across_data_parallel_group``).
    Each is latency-bound, so its cost grows with log2 of the job size."""


CUDA_GRAPH_SCOPES = ("none", "router", "attention", "layer", "full")
"""``Stack.cuda_graphs`` values, from nothing captured to the whole iteration."""


@dataclass(frozen=True, kw_only=True)
class Stack:
    """What the training software does; defaults match current Megatron-Core training recipes."""

    name: str = "megatron-core"
    overlap_grad_reduce: bool = True
    """Gradient reduce-scatter/all-reduce in buckets during the backward pass."""
    overlap_param_gather: bool = True
    """Distributed-optimizer parameter all-gather during the next forward pass."""
    tp_comm_overlap_frac: float = 0.0
    """Fraction of TP/SP collective time hidden behind GEMMs (userbuffers overlap)."""
    overlap_p2p: bool = True
    """Pipeline sends/receives overlapped with compute."""
    flash_attention: bool = True
    """Fused attention (FlashAttention / cuDNN); False: unfused QK^T, softmax, dropout, AV."""
    attention_kernel_frac: float = 0.0
    """Fraction of the BF16 peak the stack's fused attention reaches, forward and backward
    together, at the sustained clock. 0: the accelerator's catalog figure (FlashAttention-2
    generation: 35% on H100) or ``Efficiency.flash_attention_frac``. Warp-specialised
    asynchronous kernels (FlashAttention-3, cuDNN 9 fused attention on Hopper and Blackwell)
    reach 75% forward and about 55% backward (Shah et al. 2024, arXiv 2407.08608, Sec. 4.1:
    740 TFLOP/s forward of 989; backward 1.5-1.75x FlashAttention-2's ~330); weighted by the
    backward's 2.5x FLOPs: 3.5 / (1/0.75 + 2.5/0.55) = 0.60."""
    elementwise_bytes_per_hidden: float = 40.0
    """HBM bytes moved per hidden element per layer per token by non-GEMM ops, forward+backward
    (norms, residual adds, bias, dropout, rotary), with the stack's kernel fusion."""
    elementwise_bytes_per_ffn: float = 14.0
    """HBM bytes per FFN-hidden element per layer per token (activation function fwd+bwd)."""
    grad_reduce_bytes: float = 4.0
    """Bytes per gradient element in the gradient buffer the backward pass accumulates into and
    the data-parallel reduction sends (Megatron-Core ``grad_reduce_in_fp32``; Megatron-LM forces
    fp32 accumulation for BF16 training: 4). NVIDIA's performance recipes reduce in BF16: 2
    (NeMo-Framework-Launcher gpt3/175b_fp8_performance.yaml ``optim.grad_sync_dtype: bf16``;
    Megatron-Bridge scripts/performance DeepSeek-V3 and Qwen3 configs
    ``cfg.ddp.grad_reduce_in_fp32 = False``)."""
    param_gather_bytes: float = 2.0
    """Bytes per parameter in the distributed-optimizer all-gather (bf16)."""
    grad_buckets: int = 8
    """Gradient buckets per step when reductions overlap the backward pass; the last bucket's
    reduction stays exposed (Megatron-Core default bucket 40M parameters)."""
    loss_bytes_per_logit: float = 12.0
    """HBM bytes per logit of the fused vocab-parallel cross-entropy, forward and backward
    (read bf16 logits, fp32 max/exp/sum passes, write the bf16 gradient)."""
    step_overhead_s: float = 0.0
    """Fixed per-step cost outside the model (data loading, logging)."""
    scatter_gather_p2p: bool = True
    """Pipeline activations sent as 1/tp shards and all-gathered over NVLink (Megatron)."""
    optimizer_state_bytes: float = 12.0
    """Bytes of optimizer state per parameter: fp32 master weights and fp32 Adam m and v
    (Rajbhandari et al. 2020). DeepSeek-V3 keeps m and v in BF16: 8."""
    moe_load_imbalance: float = 1.1
    """Tokens of the busiest expert-parallel rank over the mean (max/mean), dropless routing.
    The slowest rank sets the expert GEMMs and the all-to-all of the whole EP group. Balanced
    routing (auxiliary loss or DeepSeek-V3's bias-based auxiliary-loss-free balancing) keeps
    it near 1.1 over a training batch; unbalanced routers reach 1.5-2."""
    moe_capacity_factor: float = 0.0
    """0: dropless. Otherwise each expert's buffer holds capacity_factor x the mean tokens:
    overflow is dropped and buffers are padded (GShard / Switch style), so every expert
    computes exactly capacity_factor x the mean and the imbalance factor no longer applies."""
    moe_graph_capacity_factor: float = 0.0
    """Capacity, over the mean, that each expert-parallel rank's expert buffers are padded to
    when the whole iteration is replayed from CUDA graphs (``cuda_graphs`` full): dropless
    routing has data-dependent shapes a graph cannot hold, so the expert GEMMs run over the
    padded buffers (the padded rows show in the ``moe_imbalance`` part; the all-to-all still
    carries the routed tokens only). 0: no padding."""
    moe_max_nodes_per_token: int = 0
    """Node-limited routing: a token is sent to experts on at most this many scale-up domains
    and crosses the network once per domain, forwarded inside it over the scale-up fabric
    (DeepSeek-V3: 4). 0: unlimited, each of the top-k copies travels separately."""
    moe_dispatch_bytes: float = 2.0
    """Bytes per hidden element of a dispatched token (BF16; DeepSeek-V3 dispatches in FP8
    with 128-element block scales: about 1.03)."""
    moe_combine_bytes: float = 2.0
    """Bytes per hidden element of a combined (returned) token, and of both backward passes."""
    moe_permute_bytes_per_hidden: float = 8.0
    """HBM bytes per hidden element per routed token copy for permuting tokens into expert
    order and back, forward and backward (gather and scatter: read 2, write 2, each twice)."""
    ep_comm_overlap_frac: float = 0.0
    """Fraction of the expert all-to-all hidden behind computation of another micro-batch
    (DeepSeek-V3's DualPipe overlaps dispatch and combine with attention and MLP of the paired
    chunk: ~1; Megatron-Core's 1F1B all-to-all overlap likewise). At most the layer's compute."""
    ep_overlap_sm_frac: float = 0.0
    """Fraction of SMs the communication kernels take while they overlap computation
    (DeepSeek-V3: 20 of 132 H800 SMs): compute of the overlapped layers runs that much slower."""
    cuda_graphs: str = "none"
    """What the stack captures in CUDA graphs, which removes the host's per-operation issue time
    from it: ``none``; ``router`` (the MoE router and token preprocessing: Megatron-Core
    ``cuda_graph_scope`` moe_router, moe_preprocess); ``attention`` (attention blocks as well:
    attn, moe_router, moe_preprocess; the expert GEMMs and the dispatch stay eager in both);
    ``layer`` (whole transformer layers); ``full`` (the whole iteration, ``cuda_graph_impl``
    full_iteration)."""
    dualpipe: bool = False
    """DeepSeek-V3's bidirectional DualPipe schedule: bubble (pp/2 - 1) (F&B + B - 3W) instead
    of 1F1B's (pp - 1)(F + B) (report Table 2), so about (pp/2 - 1)/(pp - 1) of it; two
    copies of each rank's parameters, pp + 1 micro-batches of activations in flight."""

    fsdp_prefetch_layers: float = 1.0
    """Layers whose ZeRO-3 / FSDP parameter all-gather is issued ahead of the layer that
    computes: PyTorch FSDP ``backward_prefetch=BACKWARD_PRE`` and ``forward_prefetch`` (and
    FSDP2's default) gather one layer ahead, so each layer's collectives hide behind one
    layer's compute."""

    def __post_init__(self) -> None:
        if self.cuda_graphs not in CUDA_GRAPH_SCOPES:
            raise SpecError(
                "cuda_graphs", self.cuda_graphs, f"one of {', '.join(CUDA_GRAPH_SCOPES)}"
            )


_UNFUSED_NO_OVERLAP = Stack(
    name="megatron-2021",
    overlap_grad_reduce=False,
    overlap_param_gather=False,
    tp_comm_overlap_frac=0.0,
    overlap_p2p=False,
    flash_attention=False,
    elementwise_bytes_per_hidden=40.0,
    elementwise_bytes_per_ffn=16.0,
)
"""Megatron-LM 2021-22 and Megatron-DeepSpeed 2023: unfused attention, no communication
overlap; the stacks differ only in gradient bucketing."""

_DISPATCHER_SM_FRAC = 20.0 / 132.0
"""SMs the DeepEP/HybridEP dispatch and combine kernels hold while they overlap computation:
DeepEP's default 20 (deepseek-ai/DeepEP ``Buffer.num_sms``), as DeepSeek-V3 reserves 20 of
132 H800 SMs; Megatron-Core's overlapped all-to-all (``moe_a2a_overlap``) runs them."""

_MEGATRON_BRIDGE = Stack(
    name="megatron-bridge",
    tp_comm_overlap_frac=0.6,
    attention_kernel_frac=0.60,
    grad_reduce_bytes=2.0,
    moe_load_imbalance=1.0,
    moe_graph_capacity_factor=1.5,
    moe_max_nodes_per_token=4,
)
"""NVIDIA Megatron-Bridge performance recipes (NeMo containers 25.09-26.02): Megatron-Core with
cuDNN fused attention (Transformer Engine's default backend on Hopper and Blackwell). Its MoE
benchmarks force-balance tokens among experts (``moe_router_force_load_balancing``; the
performance page's footnote): load factor 1.0. Gradients are kept and reduced in BF16
(``grad_reduce_in_fp32 = False`` in its performance configs). Under full-iteration CUDA
graphs its MoE recipes pad each rank's expert buffers to 1.5x the mean
(``set_full_iter_cg_configs``: ``moe_pad_experts_for_cuda_graph_inference``,
``moe_expert_rank_capacity_factor = 1.5``, paged stashing for the memory). The HybridEP/DeepEP
dispatcher sends a token once per destination node and forwards it over NVLink, and
DeepSeek-V3's group-limited router (8 groups, top 4) keeps it to 4 nodes
(scripts/performance/configs/deepseek)."""

PRESETS: dict[str, Stack] = {
    "megatron-core": Stack(tp_comm_overlap_frac=0.6),
    "deepseek-v3": Stack(
        name="deepseek-v3",
        tp_comm_overlap_frac=0.0,
        optimizer_state_bytes=8.0,
        moe_max_nodes_per_token=4,
        moe_dispatch_bytes=1.03,
        ep_comm_overlap_frac=1.0,
        ep_overlap_sm_frac=20.0 / 132.0,
        dualpipe=True,
    ),
    "megatron-core-moe": Stack(
        name="megatron-core-moe",
        tp_comm_overlap_frac=0.6,
        ep_comm_overlap_frac=1.0,
        ep_overlap_sm_frac=_DISPATCHER_SM_FRAC,
    ),
    "megatron-core-no-overlap": Stack(
        name="megatron-core-no-overlap",
        overlap_grad_reduce=False,
        overlap_param_gather=False,
        tp_comm_overlap_frac=0.0,
    ),
    "megatron-bridge": _MEGATRON_BRIDGE,
    "megatron-bridge-moe": dataclasses.replace(
        _MEGATRON_BRIDGE,
        name="megatron-bridge-moe",
        ep_comm_overlap_frac=1.0,
        ep_overlap_sm_frac=_DISPATCHER_SM_FRAC,
    ),
    "fsdp-2024": Stack(name="fsdp-2024", tp_comm_overlap_frac=0.0),
    "megatron-2021": _UNFUSED_NO_OVERLAP,
    "megatron-2022": dataclasses.replace(_UNFUSED_NO_OVERLAP, name="megatron-2022"),
    "megatron-deepspeed": dataclasses.replace(
        _UNFUSED_NO_OVERLAP, name="megatron-deepspeed", grad_buckets=1
    ),
}


def preset(name: str) -> Stack:
    """A named software-stack preset."""
    if name not in PRESETS:
        raise SpecError("stack", name, f"one of {', '.join(PRESETS)}")
    return PRESETS[name]
