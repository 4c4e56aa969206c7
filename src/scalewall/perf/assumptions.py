"""Every efficiency and overlap assumption of the step model: named fields with documented defaults.

``Efficiency`` holds hardware-behaviour constants (one set for every case, fitted to
microbenchmarks and published runs). What the training software does (which communication it
overlaps, which kernels it fuses) is a ``Stack``: catalog data (``catalog/data/stacks``), resolved
by ``scalewall.stack.resolve_stack``; it is re-exported here for the step model.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Any

from scalewall.catalog.schema import CUDA_GRAPH_SCOPES, Stack
from scalewall.errors import SpecError


@dataclass(frozen=True, kw_only=True)
class ComputeEfficiency:
    """GEMM and memory-bound kernel rates of ``perf/compute.py``: the tile/wave and short-K
    model, launch cost, the sustained GEMM ceiling, HBM and fused-attention rates, FP8 GEMMs."""

    gemm_tile_m: int = 128
    """Output tile rows of a tensor-core GEMM kernel (CUTLASS/cuBLAS 128x256 or 256x128 tiles). Set
    by: the kernel libraries' tile shapes, not fitted."""
    gemm_tile_n: int = 256
    """Output tile columns; tiles are spread over SMs in waves, a partial last wave idles SMs. Set
    by: the kernel libraries' tile shapes, not fitted."""
    gemm_k_half_efficiency: float = 150.0
    """Inner dimension at which a 16-bit GEMM's main loop reaches half its asymptotic rate on an
    SM of ``gemm_k_half_reference_sm_flop_per_s``: prologue and epilogue (loading the first
    K-slices, writing C) are amortised over K, so efficiency scales as K / (K + k_half); an SM
    r times faster needs r times the K (``compute.k_half``). Set by: a GEMM shape sweep on an
    H200 (``catalog/data/measurements/h200-2026-12-04-kernels.jsonl``, ``benchmarks/kernels.py``:
    BF16 ``torch.matmul``, m = n = 8192, K 128-16384, after 10 s of large GEMMs, three passes
    in shuffled order): 151 fits the 24 times with this module's roofline (``gemm_time_s``),
    133-163 pass by pass; XLA's GEMM table for sm_90 (tensorflow/tensorflow
    third_party/xla/xla/service/gpu/model/matmul_interpolator_data.h, 2025: BF16, m = n = 4096,
    batch 4, K 256-4096) gives about 150 too. A cold pass in order of K gave 106: the first,
    short-K shapes ran at higher clocks. ``scalewall calibrate`` fits it to a user's probe."""
    gemm_k_half_reference_sm_flop_per_s: float = 989.4e12 / 132
    """The tensor rate of one SM that ``gemm_k_half_efficiency`` is stated at: an H100/H200 SXM's
    dense BF16 peak over its 132 SMs (catalog ``h100-sxm-80gb``, ``h200``). Set by: the
    accelerator the K sweep ran on, not fitted."""
    gemm_k_half_fp8_factor: float = 2.0
    """FP8 GEMMs' k_half over what their rate alone gives (``gemm_k_half_efficiency`` times the
    FP8 rate's ratio to BF16): their K slices and scaling epilogue amortise more slowly. Set by:
    the H200 sweep above, FP8 E4M3 ``torch._scaled_mm`` with per-tensor scales (cuBLASLt):
    2.05 fits the 24 times with this module's roofline and ``gemm_k_half_efficiency`` 150
    (1.94-2.20 pass by pass; the probe's shapes give 2.3; row-wise scales the same or slower),
    an FP8 k_half of about 600 on an H100/H200 SM; taken for every FP8 recipe, Blackwell's
    block-scaled ones too, not for FP4, which no sweep covered."""
    gemm_launch_s: float = 4e-6
    """Fixed cost per GEMM kernel (launch and tail), seconds. Set by: small-shape GEMM
    microbenchmarks (``scalewall calibrate`` fits it to a user's)."""
    hbm_efficiency: float = 0.80
    """Achieved fraction of HBM bandwidth for streaming element-wise kernels (STREAM-like copies
    reach 80-90% on A100/H100). Set by: STREAM-like copy microbenchmarks (``scalewall probe`` hbm
    records)."""
    flash_attention_frac: float = 0.50
    """Fraction of the dense tensor peak reached by fused (flash) attention, forward and backward
    together (FlashAttention-2 reports 50-73% of peak forward and lower backward on A100; Dao
    2023). Set by: the FlashAttention-2 paper's kernel benchmarks (``scalewall probe`` attention
    records)."""
    gemm_sustained_ratio: float = 0.925
    """GEMM rate inside a training step over the accelerator's best-shape microbenchmark ceiling
    (``gemm_max_frac``): library heuristics on arbitrary shapes, clocks settling at the power
    limit over a whole step. Fitted: ``scalewall fit`` over the shipped runs files
    (``calibrate/data/defaults.toml``): every group informs it (0.1 moves each group's step times
    by 4-8%), with the A100 clock as the reference (``training_clock_frac`` 1): 0.927 +- 0.007
    (0.925 kept, within a standard error) over the paper and measurement files together with
    the framework tables (BLOOM and MT-NLG under DeepSpeed's pipeline engine, LLM Foundry's A100
    and FP8 tables, the NeMo and Megatron-Bridge performance pages); 0.951 +- 0.0075 over the
    paper and measurement files alone, whose hero configurations the tables' runs trail by about
    5%."""
    fp8_gemm_ceiling_ratio: float = 1.0
    """FP8 large-GEMM ceiling over the BF16 one, as fractions of each peak, on Hopper (and any part
    without hardware microscaling); Blackwell: ``fp8_gemm_ceiling_ratio_blackwell``. DeepGEMM
    reaches up to 1,550 of 1,979 TFLOP/s FP8 on H800 (deepseek-ai/DeepGEMM README, 2025-04-18
    entry), 0.783 of peak with block-wise scaling promoted on CUDA cores, i.e. 0.98 of the BF16
    ceiling's 0.803 (794.5 TFLOP/s, stas00/ml-engineering) and 1.03 with the
    ``fp8_block_scaling_gemm_slowdown_frac`` loss restored; a cuBLASLt E4M3 8192^3 GEMM measured
    on 16 H100-class GPUs gives 1,599-1,630 TFLOP/s (1.01; han.zhao/test_gpu_scripts
    reports_cublaslt_fp8_crosscheck_20260524.md, which also shows PyTorch ``_scaled_mm`` at
    1,170-1,180 on the same GPUs): 1.0. The mamf-finder FP8 figure in stas00/ml-engineering
    (1,402.6 TFLOP/s, 0.88) sits below both kernel libraries. Set by: the FP8 GEMM
    microbenchmarks above."""
    fp8_gemm_ceiling_ratio_blackwell: float = 0.98
    """The same ratio on parts with hardware microscaling (Blackwell): the same table measures B200
    0.98 and GB200 0.99 (fifth-generation tensor cores run FP8 at the BF16 efficiency; Hopper's
    FP8 WGMMA loses more to operand staging); the lower figure is taken. Set by: the same FP8
    GEMM microbenchmarks."""
    fp4_gemm_ceiling_ratio: float = 0.65
    """NVFP4 GEMM rate over the FP4 peak, as a fraction of the BF16 ceiling's share of the BF16
    peak (``gemm_max_frac x gemm_sustained_ratio x training_clock_frac``): 1 would be FP4 tensor
    cores at the BF16 and FP8 efficiency, as fifth-generation tensor cores run FP8
    (``fp8_gemm_ceiling_ratio_blackwell``). No NVFP4 GEMM microbenchmark was found, so the prior
    centre was 1. Fitted: ``scalewall fit`` over the shipped runs files
    (``calibrate/data/defaults.toml``): informed by the NVFP4 rows of the frontier file
    (Megatron-Bridge 26.02, Llama 3 70B and 405B on GB200 and GB300, the only NVFP4 runs):
    0.654 +- 0.045 once FP8's short-K term took the H200 sweep (0.679 +- 0.041 before): the
    2-3x FP4 peak buys 1.2-1.5x the MXFP8 throughput, as measured. No
    microbenchmark backs the figure; it absorbs whatever NVFP4 costs beyond the counted casts."""
    fp8_block_scaling_gemm_slowdown_frac: float = 0.05
    """GEMM time lost to block-wise (1x128 / 128x128) scaling done in software on Hopper: the
    partial sums are promoted to FP32 and rescaled on CUDA cores every 128 elements of K
    (DeepSeek-V3 report Sec. 3.3.2; DeepGEMM overlaps most of it with the WGMMA pipeline). MXFP8
    on Blackwell applies its 32-element block scales inside the tensor core: no loss. Set by: the
    DeepSeek-V3 report's description of the promotion, not fitted."""


@dataclass(frozen=True, kw_only=True)
class AttentionEfficiency:
    """The attention core of ``perf/attention.py``: the fused kernel's rate against the keys it
    loops over, and the unfused chain's score traffic."""

    attention_half_tokens: float = 240.0
    """Key length at which a fused attention kernel runs at half its long-sequence rate: each
    (sequence, head, query tile) pays a fixed prologue and epilogue amortised over the loop over
    keys, so the rate scales as L / (L + L_half). FlashAttention-3 forward on H100 with 16K
    tokens per batch and head dim 128 (pytorch/benchmark commit ff65cb6, 2024) reaches 430.3,
    517.1, 565.5, 590.2, 614.2 and 620.7 TFLOP/s at sequence 512, 1K, 2K, 4K, 8K and 16K: L_half
    = 240 fits all six within 1.5%. The accelerator's and the stack's attention fractions are the
    long-sequence rates; ring context parallelism runs the kernel on s / cp keys per step, which
    is where this matters. Set by: the FlashAttention-3 benchmark above. Forward and backward
    together the kernels measured on an H200 (``catalog/data/measurements/
    h200-2026-12-04-attention-moe.jsonl``, 4K-32K tokens) approach their long-sequence rate more
    slowly, about L / (L + 1000) for both FlashAttention-2 and cuDNN: a part whose catalog
    kernel was measured states its own (``Accelerator.attention_half_tokens``); the stacks'
    FlashAttention-3-class fractions keep this one."""
    attention_half_head_dim: float = 56.0
    """Head width at which a fused attention kernel runs at half the rate of infinitely wide
    heads: per score the tensor cores do 2 (d_qk + d_v) FLOPs while the softmax's exponential,
    max and rescale run on the much slower special-function and CUDA cores at a cost that does
    not grow with the head, so the rate scales as d / (d + d_half) (Shah et al. 2024,
    FlashAttention-3, Sec. 3.1 on the exponential's throughput). FlashAttention-3's forward on
    H100 (arXiv 2407.08608, Fig. 5, BF16, non-causal, 16K tokens) reaches 497 TFLOP/s at head
    dim 64 and 648 at 128: d_half = 56. The accelerator's and the stack's attention fractions are
    quoted at ``attention_reference_head_dim``; other widths scale by the ratio of the two rates
    (head dim 64: 0.77; MLA's 192 + 128: 1.07). Set by: the FlashAttention-3 figures above.
    Checked on one H200 (``catalog/data/measurements/h200-2026-12-04-attention-moe.jsonl``,
    cuDNN's causal kernels through PyTorch SDPA, 4K to 32K tokens): 64 over 128 is 0.73-0.80
    forward and 0.78-0.82 forward and backward. Past 128 the backward falls
    (head width 256 ran at 0.79-0.83 of 128's rate), which the law does not follow. The same run
    measured the rates at 128 themselves, forward and backward: cuDNN 0.45-0.54 of the BF16 peak
    at full clock and FlashAttention-2 through SDPA 0.27-0.32 (the Hopper parts'
    ``Accelerator.attention_frac`` and ``attention_half_tokens``)."""
    attention_reference_head_dim: float = 128.0
    """Head width the attention fractions (``Accelerator.attention_frac``,
    ``Stack.attention_kernel_frac``) are quoted at: the FlashAttention-2 and -3 papers' headline
    figures are head dim 128. Set by: those papers' figures."""
    unfused_attention_bytes_per_score: float = 6.0
    """HBM bytes per attention score in the unfused forward chain without dropout: write QK^T (2),
    fused scale-mask-softmax read and write (4). Set by: counting the kernels' reads and writes."""
    softmax_fallback_bytes_per_score_fwd: float = 33.0
    """Extra HBM bytes per attention score in the forward when the fused scale-mask-softmax
    kernel is unavailable (``Stack.softmax_fusion``): Megatron's ``forward_torch_softmax`` casts
    the 16-bit scores to FP32 (read 2, write 4), scales them (read 4, write 4), masks them in
    place (read 4, write 4, the boolean mask 1), runs ``torch.nn.Softmax`` (read 4, write 4) and
    casts back (read 4, write 2): 37 bytes, less the fused kernel's 4 (read 2, write 2). FP32
    softmax as Megatron runs it whenever the scores are scaled (its constructor asserts it).
    Set by: counting the kernels' reads and writes."""
    softmax_fallback_bytes_per_score_bwd: float = 35.0
    """Extra bytes per score in the backward of that chain: autograd through the cast back
    (read 2, write 4), the softmax (read the gradient and the output 4 each, write 4), the mask
    (read 4, write 4, mask 1), the scale (read 4, write 4) and the cast (read 4, write 2): 41
    bytes, less the fused backward's 6 (read the gradient and the probabilities, write 2 each).
    Set by: counting the kernels' reads and writes."""
    attention_dropout_bytes_per_score: float = 5.0
    """Extra bytes per score when attention dropout runs: read, write and a 1-byte mask. Set by:
    counting the kernels' reads and writes."""


@dataclass(frozen=True, kw_only=True)
class LayerEfficiency:
    """One layer's element-wise traffic and overlap cost in ``perf/layers.py`` (also read by
    ``perf/data_parallel.py`` for the gradient traffic it overlaps with the layers)."""

    ssd_bytes_per_s_per_sm: float = 1.15e10
    """HBM bytes per second each SM moves for the Mamba-2 SSD kernels (mamba_ssm's five Triton
    kernels, ``mamba_chunk_scan_combined``) on the traffic ``layers.mamba_core_bytes`` counts
    for them. They are latency- and occupancy-bound rather than streaming (TensorRT-LLM PR
    #11345: Nsight Compute gives ``_chunk_scan_fwd_kernel`` 12.5% theoretical occupancy), so
    by Little's law their bandwidth is the bytes each SM keeps in flight over the memory
    latency, times the SMs: it grows with the SM count, not with the part's HBM rate (capped
    at ``hbm_efficiency`` of that rate, ``layers.latency_bound_share``). Set by: vLLM PR
    #27299's measurement on one H100 SXM (132 SMs, 3.35 TB/s), forward at 128 heads of 64,
    state 128, one group, chunk 256: 1.29e7 tokens/s at 16K tokens; that shape's SSD traffic is
    117.8 KB per token (the forward's count), 1.52 TB/s (0.45 of that part's peak) = 1.15e10
    per SM. The backward's kernels, their traffic counted the same way, are taken at the same
    rate (no measurement at a training shape was found); not fitted. Taken as 0.45 of every
    part's bandwidth instead, the Blackwell rows of the Nemotron 3 file (out of the fit) came
    out 10 points faster than per SM, the GB300 ones 8-22% fast where their GB200 twins were
    within 10%."""
    scatter_add_hbm_efficiency: float = 0.15
    """Share of peak HBM bandwidth an atomic row scatter-add reaches (a stack whose
    ``moe_unpermute`` is ``scatter-add``), on its read of each copy and read-modify-write of its
    token row. Set by: measured on one H200 (``catalog/data/measurements``, kind ``permute``, op
    ``index_add``, BF16, top-8 over 4K-16K tokens at hidden 2048-7168): 619, 727, 761 and 725
    GB/s over those three passes, 0.147 of its 4.8 TB/s on average, where the row gather
    (``index_select``) of the same copies reaches 4.1-4.5 TB/s; not fitted."""
    linear_attention_bytes_per_s_per_sm: float = 1.15e10
    """HBM bytes per second each SM moves for flash-linear-attention's chunked gated-delta-rule
    kernels on the traffic ``layers.gdn_core_bytes`` counts for them (capped as
    ``ssd_bytes_per_s_per_sm``). Set by: no measurement at a training shape was found;
    ``ssd_bytes_per_s_per_sm``'s measured figure is taken, the same structure (Triton kernels
    over chunks of 64 to 256 tokens passing FP32 states between chunks), not fitted."""
    dropout_bytes_per_hidden: float = 20.0
    """HBM bytes per hidden element per layer for the two hidden dropouts, forward (read 2, write 2,
    mask 1) and backward (read grad 2, mask 1, write 2). Set by: counting the kernels' reads and
    writes."""
    fp8_cast_bytes_per_element: float = 4.0
    """HBM bytes to quantize one BF16 GEMM operand element to FP8: read 2, write 2, as the fused
    cast writes a row-wise and a column-wise (transposed) FP8 copy: Hopper's FP8 GEMMs take only
    the TN layout, and MXFP8's 32-element scales run along the contraction dimension, so the
    weight-gradient GEMM needs its own quantization (Transformer Engine ``cast_transpose`` /
    MXFP8 ``rowwise`` and ``columnwise`` usage). Paid on the inputs of every FP8 linear forward
    (X) and backward (dY); weights are cast once per step and cached across micro-batches
    (Transformer Engine ``is_first_microbatch``). Set by: counting Transformer Engine's cast
    kernels' reads and writes."""
    fp4_cast_bytes_per_element: float = 3.125
    """HBM bytes to quantize one BF16 GEMM operand element to NVFP4: read 2, write a row-wise
    and a column-wise 4-bit copy (0.5 each) with one FP8 scale per 16 elements for each
    (0.0625 each); the random Hadamard transform on the weight-gradient operands runs inside the
    cast kernel (Transformer Engine NVFP4 quantization; NVIDIA, arXiv 2509.25149, Sec. 4: 16x16
    transforms on the Wgrad inputs, 1x16 blocks, 16x16 blocks for weights). The per-tensor FP32
    second-level scale needs an amax pass (``fp8_amax_bytes_per_element``). Set by: counting the
    cast kernels' reads and writes."""
    fp8_amax_bytes_per_element: float = 2.0
    """Per-tensor scaling's extra pass over each cast tensor for its absolute maximum (current
    scaling, or delayed scaling's amax history update): one more BF16 read. Block-wise and MXFP8
    scales are computed inside the cast kernel over 128- or 32-element blocks. Set by: counting
    the amax pass's reads."""
    overlap_compute_slowdown_frac: float = 1.0
    """Compute seconds lost per second of HBM traffic that data-parallel collectives (bucketed
    gradient reduction and parameter gather, FSDP / ZeRO-3 per-layer gathers and reduce-scatters)
    cause while they run hidden behind compute (``perf/data_parallel.py``
    ``hbm_contention_s``): 1 would be compute wholly bound by HBM bandwidth, 0 compute the
    traffic never slows. Fitted: ``scalewall fit`` over the shipped runs files
    (``calibrate/data/defaults.toml``): informed mostly by LLM Foundry's FSDP table, whose
    per-layer collectives overlap the whole step (its 13B series at two sequences per
    micro-batch, whose collectives carry most bytes per token, keeps the same per-GPU rate from
    8 GPUs on NVLink to 64 over InfiniBand, so the cost follows bytes, not seconds), and by the
    Megatron runs with overlapped gradient reduction. The fit reaches the upper bound, 1 (+-
    0.10): the step times ask for at least the whole HBM time of that traffic."""
    collective_hbm_bytes_per_byte: float = 2.0
    """HBM bytes a ring collective moves per byte a rank sends: each chunk is written to HBM when
    it arrives and read when it is forwarded or reduced into the next step (NCCL's ring
    all-gather and reduce-scatter, one receive and one send buffer pass per step). Set by:
    counting the ring kernels' reads and writes, not fitted."""
    tp_overlap_compute_slowdown_frac: float = 0.0
    """The same loss for tensor-parallel communication hidden behind the layer's GEMMs by the
    stack's comm-GEMM overlap (``Stack.tp_comm_overlap_frac``). A separate constant because the
    mechanism differs: Transformer Engine's userbuffers overlap the all-gathers by ring exchange
    of point-to-point copies and the reduce-scatters by a pipelined kernel on a set number of
    SMs (``initialize_ub``'s default methods ``ring_exchange`` / ``pipeline`` / ``bulk``),
    not by NCCL collectives. Fitted: ``scalewall fit`` over the shipped runs files
    (``calibrate/data/defaults.toml``): informed by Megatron-Core r0.8 on H100 and the frontier
    file's Megatron-Bridge rows, the runs with TP overlap: 0 (the lower bound) +- 0.09, i.e. the
    overlapped TP communication costs the GEMMs nothing the data can see."""


@dataclass(frozen=True, kw_only=True)
class HostEfficiency:
    """Host-bound kernel issue in ``perf/layers.py``: operations counted per block and the CPU
    time to issue one."""

    host_op_s: float = 49e-6
    """CPU time to issue one counted GPU operation from an eager PyTorch training step (Python
    module code, the dispatcher, Transformer Engine's C++ front end and the CUDA launch). The
    host enqueues work ahead of the GPU, so a layer takes the longer of its GPU time and the time
    to issue its operations: host time only shows where the per-operation GPU work is small
    (small micro-batches, wide tensor parallelism, many experts per GPU). CUDA graphs replay
    captured operations with one launch (``Stack.cuda_graphs``). The operation counts below are a
    coarse tally of the main kernels, so this is the host time per counted operation including
    the small ones around it; an eager step's per-operation host cost is tens of microseconds.
    Fitted: ``scalewall fit`` over the shipped runs files (``calibrate/data/defaults.toml``):
    informed by the runs without CUDA graphs whose layers are short: the frontier file's MoE runs
    (many local experts, one sequence per micro-batch), the small-micro-batch runs of Korthikanti
    et al. and a few vTrain runs (10 us more moves those by up to 13-18%); 4.9e-5 +- 1.0e-6 s
    there (5.0e-5 before the dispatcher's per-row time, ``expert_dispatch_copy_s``, took part
    of the MoE rows' time), the default 4.9e-5 s."""
    host_ops_attention_fwd: float = 24.0
    """Operations the host issues for one attention block forward: norm, the QKV projection and its
    FP8 casts, rotary embedding, the attention kernel, the output projection, the residual add,
    tensor-parallel collectives and the reshapes around them. Set by: a tally of the block's
    kernels, not fitted."""
    host_ops_mla_extra_fwd: float = 12.0
    """Further operations of a multi-head latent attention block forward: the low-rank down and up
    projections of queries and keys/values, their norms, and the split and concatenation of the
    rotary and non-rotary head parts. Set by: a tally of the block's kernels, not fitted."""
    host_ops_mlp_fwd: float = 12.0
    """Operations of one dense MLP block forward: norm, up and down projections with their casts,
    the activation, the residual add and tensor-parallel collectives. Set by: a tally of the
    block's kernels, not fitted."""
    host_ops_moe_fwd: float = 40.0
    """Operations of one MoE block forward outside the expert GEMMs: router GEMM, top-k and score
    normalisation, load-balancing statistics, token permutation, dispatch and combine all-to-all
    with their bookkeeping, un-permutation and the weighted sum. Set by: a tally of the block's
    kernels, not fitted."""
    host_ops_router_fwd: float = 16.0
    """The share of ``host_ops_moe_fwd`` spent before the dispatch: the router GEMM, top-k and score
    normalisation, the load-balancing statistics and the dispatcher's preprocessing (tokens per
    expert, the permutation map); Megatron-Core captures these in CUDA graphs with
    ``cuda_graph_scope`` moe_router and moe_preprocess (``Stack.cuda_graphs`` router or
    attention). Set by: a tally of the kernels before the dispatch, not fitted."""
    host_ops_mamba_fwd: float = 20.0
    """Operations of one Mamba-2 block forward: norm, the input projection and its casts, the
    split into z, x, B, C and dt, the causal convolution with its activation, the SSD kernels
    (chunk cumsum, C B^T, chunk states, state passing, chunk scan) with the dt preprocessing,
    the gated norm, the output projection, the residual add and tensor-parallel collectives.
    Set by: a tally of the block's kernels (Megatron-Core ``MambaMixer`` with mamba_ssm's
    ``mamba_chunk_scan_combined``), not fitted."""
    host_ops_linear_attention_fwd: float = 24.0
    """Operations of one Gated DeltaNet block forward: norm, the two input projections and their
    casts, the split into q, k, v, z, beta and a, the causal convolution with its activation, the
    decay and beta gates, the query and key L2 norms, flash-linear-attention's chunk kernels
    (local cumsum, K K^T, the triangular solve, the WY factors, the chunk states, the output),
    the gated norm, the output projection, the residual add and tensor-parallel collectives.
    Set by: a tally of the block's kernels (transformers ``Qwen3NextGatedDeltaNet`` with
    ``chunk_gated_delta_rule``), not fitted."""
    host_ops_per_local_expert_fwd: float = 2.0
    """Operations per local expert of one MoE layer forward: Transformer Engine's grouped linear
    issues one GEMM per expert for each of the two expert projections. Set by: Transformer
    Engine's grouped linear, not fitted."""
    host_ops_bwd_ratio: float = 2.0
    """Backward operations per forward operation (autograd runs a data-gradient and a
    weight-gradient kernel per linear, and the element-wise backward kernels). Set by: autograd's
    kernels per forward kernel, not fitted."""


@dataclass(frozen=True, kw_only=True)
class CommEfficiency:
    """Collective costs of ``perf/collectives.py``: bus-bandwidth factors, launch and ring-step
    latencies, ECMP hashing, the MoE all-to-all."""

    scale_up_bw_efficiency: float = 0.80
    """Ring bus bandwidth over NVLink line rate: 8x A100 235/300 = 0.78, 8x H100 370/450 = 0.82
    (nccl-tests all_reduce, 16 GiB). Set by: nccl-tests all_reduce bus bandwidth."""
    scale_up_nvls_algbw_efficiency: float = 0.61
    """All-reduce algorithm bandwidth with NVLink SHARP over line rate: 8x H100 275/450. Set by:
    nccl-tests all_reduce with NVLS."""
    scale_out_bw_efficiency: float = 0.92
    """Ring bus bandwidth over NIC line rate: DGX A100 8x HDR 192/200 = 0.96, H100 NDR 46-48/50. Set
    by: nccl-tests all_reduce bus bandwidth."""
    collective_launch_s: float = 20e-6
    """Fixed cost of one collective call (launch, protocol setup): small-message all-reduce on 8x
    H200 takes ~40 us at 32 KiB with NVLS, about 20-40 us without the bandwidth term. Set by:
    small-message nccl-tests."""
    ring_step_latency_scale_up_s: float = 3.4e-6
    """Latency of one ring step between GPUs of a scale-up domain. NCCL's own tuning model charges
    3.4 us per NVLink ring step with the Simple protocol, the one large messages use (NVIDIA/nccl
    ``src/graph/tuning.cc``, ``hwLat[NVLINK][RING][SIMPLE]``, 2.18-2.27); a ring all-gather or
    reduce-scatter pays it n - nodes times. Set by: NCCL's tuning model (``scalewall calibrate``
    fits it to a user's collectives)."""
    ring_step_latency_scale_out_s: float = 14.0e-6
    """Latency of one ring step across the network, added to the switch hops of the tier. NCCL's
    tuning model charges 14 us per network ring step with the Simple protocol
    (``hwLat[NET][RING][SIMPLE]``, the same source and releases), nodes - 1 times per ring
    all-gather or reduce-scatter; its figure includes the switches, so the tier's hop latency
    (under 1 us) is counted twice. Set by: NCCL's tuning model (``scalewall calibrate`` fits it to
    a user's collectives)."""
    ecmp_flows_per_path: float = 16.0
    """Flows a collective spreads over each hashed path (NCCL channels x queue pairs; Meta's
    enhanced ECMP hashes extra header fields to the same end, Llama 3 report Sec. 3.3.1). With k
    flows per path over U paths the busiest path carries about 1 + sqrt(2 ln U / k) times the
    mean (Raab and Steger 1998, balls into bins, m >> n). Set by: NCCL's channels and queue pairs
    per connection, not fitted."""
    expert_alltoall_bw_efficiency: float = 0.80
    """Achieved fraction of a tier's collective bandwidth for the MoE dispatch/combine all-to-all
    inside a training step. DeepEP's kernels alone reach 153-158 GB/s NVLink of the 160 GB/s
    the DeepSeek-V3 report measures on H800 and 43-58 GB/s RDMA per 50 GB/s NIC
    (deepseek-ai/DeepEP README), i.e. about the ring efficiencies above (1.0) in isolation;
    inside a step it also synchronises with its slowest peer. Fitted: ``scalewall fit`` over
    the shipped runs files (``calibrate/data/defaults.toml``): informed only by the frontier
    file's MoE runs whose expert all-to-all is exposed (Megatron-Bridge Qwen3 and DeepSeek-V3
    rows on H100, B200, GB200 and GB300; 0.1 moves those by up to 7%); 0.73 +- 0.04 there
    (0.72 refitted once a ``flex`` dispatcher's scale-up traffic counts a token once per
    destination rank, ``collectives.distinct_ranks``); 0.78 +- 0.05 once the dispatcher's
    fixed time per routed row (``expert_dispatch_copy_s``) is fitted with it; 0.80 +- 0.05 at
    8 ranks of a domain once wider groups in one domain lose bandwidth
    (``expert_alltoall_peer_exponent``), the default."""
    expert_alltoall_peer_exponent: float = 0.115
    """How an expert dispatch's bandwidth inside one scale-up domain falls with the ranks it
    spans there past ``expert_alltoall_reference_peers``: by (n / reference)^-exponent. More
    peers mean smaller messages per peer and more concurrent flows through the switches.
    NVIDIA's HybridEP kernels on a GB200 NVL72 (deepseek-ai/DeepEP ``Hybrid-EP_Implementation.md``,
    GB200 table, Torch API, 32 SMs, 4,096 tokens of hidden 7,168, top-8) reach 545.7, 523.5,
    507.3, 484.2 and 479.0 GB/s dispatching BF16 and 568.9, 521.6, 483.8, 464.5 and 447.9 GB/s
    combining over 8, 16, 24, 32 and 36 ranks: their mean falls to 0.94, 0.89, 0.85 and 0.83 of
    the 8-rank figure, and a least-squares power law through the 8-rank point gives 0.115
    (0.92, 0.88, 0.85, 0.84). The law of DeepEP's and HybridEP's kernels (a ``flex``
    dispatcher); NCCL's all-to-all has its own (``nccl_alltoall_peer_exponent``). Nothing
    changes in 8-GPU nodes. Set by: the HybridEP rank sweep, not fitted."""
    nccl_alltoall_peer_exponent: float = 0.22
    """The same falloff for NCCL's all-to-all (grouped sends and receives, one per peer: the
    ``alltoall`` token dispatcher), which falls faster with its peers than HybridEP's kernels:
    rapidsai/rapidsmpf issue 590 (2025, nccl-tests busbw, 1 GiB per GPU, one HGX B200) measures
    629, 446 and 383 GB/s over 2, 4 and 8 GPUs of one NVLink domain, 0.50 per doubling from 2 to
    4 and 0.22 from 4 to 8, slowing as the peers grow. No NCCL figure past 8 GPUs of one domain
    was found; the last measured doubling's rate, 0.22, is taken past the 8-GPU figure (64-way
    expert parallelism in an NVL72: 0.63 of the 8-GPU rate, against 0.79 under the HybridEP law).
    Set by: that measurement, not fitted."""
    expert_alltoall_reference_peers: float = 8.0
    """Ranks of one scale-up domain at which the dispatch bandwidths (the catalog's all-to-all
    figures, ``expert_alltoall_bw_efficiency``) are taken: 8, the GPUs of the measurements.
    Set by: the measurements' 8-GPU setups."""
    expert_dispatch_copy_s: float = 5e-9
    """Fixed time per token copy an expert-parallel dispatch (or combine) moves, beside its
    bytes: the work of one routed row that does not grow with its width (the routing-map and
    index lookups and, in token-granular kernels such as DeepEP's and HybridEP's, each row's
    own copy and completion signal). Not the local permutation: on one H200 a row gather runs
    at 4.1-4.5 TB/s at hidden 2048 to 7168 alike (``catalog/data/measurements``, kind
    ``permute``), so its cost is its bytes (``moe_permute_bytes_per_hidden``). One rank's dispatch
    of T tokens costs T c times this, c the copies it sends (k under an all-to-all dispatcher;
    the distinct destination ranks, ``collectives.distinct_ranks``, under a ``flex`` one), so
    narrow tokens pay more per byte: to a copy's transfer at 0.78 of NVLink 5's 383 GB/s it
    adds 37% at hidden 2048 in BF16 and 20% at DeepSeek-V3's 7168 in FP8. Fitted: ``scalewall
    fit`` over the shipped runs files (``calibrate/data/defaults.toml``): informed by the
    Megatron-Bridge MoE rows of the frontier file and the performance tables, whose models
    span hidden 2048 (Qwen3-30B-A3B) to 7168 (DeepSeek-V3) on the same hardware; 5.1e-9 +-
    1.5e-9 s with a flat prior (the fit then takes ``expert_alltoall_bw_efficiency`` to 0.78),
    4.7e-9 +- 1.4e-9 s with the peer law of ``expert_alltoall_peer_exponent``; the default
    5e-9 s. Held out of that fit, the other MoE files (gpt-oss, the MoE ModelZoo,
    NeMo AutoModel, Nemotron 3, Qwen3-Next) came to 13.4% MAPE with it against 16.2%
    without (39 and 32 of their 47 rows within 20%), before the SSD rate per SM."""


@dataclass(frozen=True, kw_only=True)
class PipelineEfficiency:
    """Pipeline point-to-point traffic of ``perf/pipeline.py``."""

    pp_p2p_overlap_frac: float = 0.8
    """Fraction of pipeline point-to-point time hidden when the stack overlaps it. Set by:
    assumption, not fitted: the shipped runs hold too few pipelines whose point-to-point time
    shows."""
    pp_p2p_sync_s: float = 50e-6
    """Handshake of one pipeline send/receive pair that no overlap hides (posting the operations,
    waiting for the peer): paid per micro-batch, per virtual stage, per direction. Set by: p2p
    microbenchmarks; the shipped runs hold too few pipelines to fit it."""


@dataclass(frozen=True, kw_only=True)
class DataParallelEfficiency:
    """Data-parallel gradient traffic and per-step synchronisation of ``perf/data_parallel.py``."""

    dp_overlap_efficiency: float = 1.0
    """Fraction of the overlap window that hides data-parallel communication. Fitted: ``scalewall
    fit`` over the shipped runs files (``calibrate/data/defaults.toml``): informed almost only by
    the Megatron-Core r0.8 H100 runs, whose overlapped gradient traffic outlasts the window (0.2
    less moves them by up to 1.8%, every other group by at most 0.1%); 1.0 (its bound) +- 0.20
    there, a weak constraint, the default 1."""
    step_sync_allreduces: float = 3.0
    """Scalar all-reduces over every rank that each step waits for outside the overlapped gradient
    traffic: Megatron-LM's gradient-norm all-reduce for clipping (``clip_grad_norm_fp32``), its
    found-inf / NaN check over the gradients and the loss average over the data-parallel group
    (``average_losses_across_data_parallel_group``). Each is latency-bound, so its cost grows
    with log2 of the job size. Set by: counting Megatron-LM's per-step all-reduces."""


@dataclass(frozen=True, kw_only=True)
class MemoryEfficiency:
    """The memory model of ``perf/memory.py`` and the fit margin ``perf/step.py``, the search and
    the validator apply to it."""

    memory_reserved_bytes: float = 3.0 * 2**30
    """HBM not available to the model: CUDA context, NCCL buffers, allocator fragmentation. Set by:
    assumption, not fitted."""
    zero3_gathered_layers: float = 2.0
    """Layers whose full (unsharded) parameters a ZeRO-3 / FSDP rank holds at once: the layer it
    computes and the next one, gathered ahead (FSDP's default backward prefetch; DeepSpeed ZeRO-3
    prefetches by a parameter-count budget to the same end). Set by: FSDP's default prefetch, not
    fitted."""
    fp8_weight_copy_bytes: float = 2.0
    """HBM bytes per parameter for the FP8 weight copies kept beside the BF16 weights: a row-wise
    and a column-wise (transposed) FP8 copy, as the forward and the backward GEMMs read the
    weight in different layouts (Transformer Engine on Hopper and MXFP8). Set by: Transformer
    Engine's weight layouts, not fitted."""
    fp4_weight_copy_bytes: float = 1.125
    """HBM bytes per parameter for the NVFP4 weight copies kept beside the BF16 weights: a
    row-wise and a column-wise 4-bit copy (0.5 each) with one FP8 scale per 16 elements each
    (0.0625). Set by: the NVFP4 layout (E2M1 values, E4M3 scales per 16; arXiv 2509.25149),
    not fitted."""
    offload_buffer_layers: float = 1.0
    """Layers of offloaded activations (a plan's ``offload_layers``) still in HBM at the peak:
    the layer whose copy to the host is in flight while the next one computes (Megatron-Core's
    offload handler frees a layer's tensors once their device-to-host copy ends). Set by: the
    handler's one-layer-ahead design, not fitted."""
    host_copy_bw_efficiency: float = 0.85
    """Share of the host link's per-direction rate (``System.host_link_bytes_per_s_per_gpu``)
    an activation copy to or from host memory gets. Set by: assumption (copy engines run near
    a link's rate on large pinned buffers), not fitted: on NVLink-C2C systems the offloaded
    runs' copies hide behind compute, so their step times do not resolve it."""
    host_memory_usable_frac: float = 0.8
    """Share of a node's host memory (``System.host_memory_bytes``, split evenly over its GPUs)
    offloaded activations may take; the rest holds the operating system, the data loader's
    buffers, pinned communication buffers and checkpoint staging. Set by: assumption, not
    fitted."""
    host_link_fallback_bytes_per_s: float = 63e9
    """Host link per GPU where the system gives none: PCIe 5.0 x16, 63 GB/s per direction (the
    checkpoint model's ``snapshot_bytes_per_s_per_gpu``, from the PCI-SIG line rate less
    encoding). Set by: that line rate, not fitted."""
    memory_fit_margin_frac: float = 0.05
    """Uncertainty of the memory model as a fraction of usable HBM: a plan whose predicted memory
    lies within this of the limit, either way, is ``near_memory_limit``. The model's parts are
    within 0.3-9.3% of Korthikanti et al. 2022's measured bars (Fig. 7/8; median 2.7%) and the
    allocator's fragmentation varies by a few percent between runs, so 5% of the total is the
    band the model cannot resolve: the validator admits plans up to this far over the limit (they
    ran), the search marks plans this close below it. Set by: the memory model's error against
    Korthikanti et al.'s bars."""


@dataclass(frozen=True, kw_only=True)
class StepEfficiency:
    """The step composition of ``perf/step.py``: the optimizer step and stragglers."""

    optimizer_bytes_per_param: float = 32.0
    """HBM traffic of one Adam step per parameter: read fp32 grad, master, m, v (16 B), write
    master, m, v (12 B), write the low-precision copy (2-4 B). Set by: counting the Adam kernel's
    reads and writes."""
    rank_jitter_cv: float = 0.01
    """Coefficient of variation of one healthy rank's compute time per step. Synchronous training
    waits for the slowest of N ranks: E[max] of N normals ~ sqrt(2 ln N) standard deviations
    (Gumbel limit). The ByteDance straggler study (OSDI'25, arXiv 2505.05713) bounds it: 10.4% of
    GPU-hours lost overall, most of it to persistent slow nodes and data skew that healthy-rank
    jitter excludes; 1% gives 3-4% at 1K-16K ranks. Set by: the ByteDance straggler study's
    bound, not fitted on step times."""
    rank_noise_duty_frac: float = 2e-4
    """Share of one rank's time lost to host stalls (unaligned garbage collections, OS and
    driver events), which every synchronisation over n ranks amplifies up to n-fold
    (``perf/step.py`` ``sync_noise_s``). Set by: per-GPU scaling within a series, which the
    level of its step times cannot shift: 2e-4 (with 5 ms stalls) puts LLM Foundry's six FSDP
    series from 128 to 512 H100 (measured 0.903-0.975 of per-GPU throughput) within 3 points
    each, where none were before but 13B. Out of sample, torchtitan's Llama 3.1 8B FSDP pair
    (8 -> 128 H100, never used to set it) comes out at 0.969-0.970 against 0.973-0.977. Not
    fitted on step times: the absolute fit trades it against the full-recompute FSDP rows,
    whose level is 10-13% slow for another reason."""
    rank_noise_event_s: float = 5e-3
    """Length of one host stall: milliseconds (a CPython collection of a training process's
    objects, a scheduler preemption). Only its product with the stall rate enters while
    n f dt << 1; the length sets where the loss stops growing, at one stall per
    synchronisation, which the 13B-70B FSDP series (layers of 50-200 ms) approach at 512 ranks
    and the 1B-7B ones do not. Set by: the same series, together with the duty; host traces
    would measure it."""


@dataclass(frozen=True, kw_only=True)
class Efficiency:
    """Hardware-behaviour constants of the step model (one set for all cases), one sub-config
    per ``perf/`` module: ``eff.compute.gemm_sustained_ratio``, ``eff.comm.collective_launch_s``.

    Field names are unique across the groups, so files and calibration name them flat
    (``gemm_sustained_ratio = 0.93`` in a profile's ``[efficiency]`` table):
    ``Efficiency.field_path(name)`` says where a flat name lives, ``eff.value(name)`` reads it,
    ``eff.replace(**flat)`` returns a copy with flat names put in (numpy arrays too: one entry
    per calibration draw, broadcast by the step model) and ``eff.flat()`` lists them all.
    """

    compute: ComputeEfficiency = field(default_factory=ComputeEfficiency)
    attention: AttentionEfficiency = field(default_factory=AttentionEfficiency)
    layers: LayerEfficiency = field(default_factory=LayerEfficiency)
    host: HostEfficiency = field(default_factory=HostEfficiency)
    comm: CommEfficiency = field(default_factory=CommEfficiency)
    pipeline: PipelineEfficiency = field(default_factory=PipelineEfficiency)
    data_parallel: DataParallelEfficiency = field(default_factory=DataParallelEfficiency)
    memory: MemoryEfficiency = field(default_factory=MemoryEfficiency)
    step: StepEfficiency = field(default_factory=StepEfficiency)

    @staticmethod
    def field_names() -> tuple[str, ...]:
        """Every flat field name, group by group."""
        return tuple(_GROUP_OF)

    @staticmethod
    def field_path(name: str) -> tuple[str, str]:
        """``(group, field)`` of the flat name ``name``: ``("compute", "gemm_sustained_ratio")``.

        Raises ``SpecError`` naming the valid fields for a name that is none."""
        try:
            return _GROUP_OF[name], name
        except KeyError:
            raise SpecError(name, "?", f"an Efficiency field: {', '.join(_GROUP_OF)}") from None

    def value(self, name: str) -> Any:
        """The value of the flat field ``name``."""
        group, attr = Efficiency.field_path(name)
        return getattr(getattr(self, group), attr)

    def replace(self, **flat: Any) -> Efficiency:
        """A copy with the flat fields ``flat`` put in (values may be numpy arrays)."""
        changes: dict[str, dict[str, Any]] = {}
        for name, value in flat.items():
            group, attr = Efficiency.field_path(name)
            changes.setdefault(group, {})[attr] = value
        groups = {g: dataclasses.replace(getattr(self, g), **c) for g, c in changes.items()}
        return dataclasses.replace(self, **groups)

    def has_arrays(self) -> bool:
        """Whether a field holds an array (one value per plan row, as calibration's interval
        draws pass them), so that the step model must evaluate the batch row by row. Reads
        ``ndim`` rather than calling numpy, so that importing this module stays light."""
        return self._has_arrays

    @functools.cached_property
    def _has_arrays(self) -> bool:
        """``has_arrays``, found once per instance (the fields are frozen)."""
        return any(
            not isinstance(v, int | float) and getattr(v, "ndim", 0) > 0
            for group in vars(self).values()
            if dataclasses.is_dataclass(group)
            for v in vars(group).values()
        )

    def flat(self) -> dict[str, Any]:
        """Every field by its flat name, group by group."""
        return {name: self.value(name) for name in _GROUP_OF}


def _group_of() -> dict[str, str]:
    out: dict[str, str] = {}
    defaults = Efficiency()
    for group in dataclasses.fields(defaults):
        for f in dataclasses.fields(getattr(defaults, group.name)):
            assert f.name not in out, f"Efficiency field {f.name} is in two groups"
            out[f.name] = group.name
    return out


_GROUP_OF = _group_of()
"""Flat field name -> the ``Efficiency`` attribute of its group."""


__all__ = [
    "CUDA_GRAPH_SCOPES",
    "AttentionEfficiency",
    "CommEfficiency",
    "ComputeEfficiency",
    "DataParallelEfficiency",
    "Efficiency",
    "HostEfficiency",
    "LayerEfficiency",
    "MemoryEfficiency",
    "PipelineEfficiency",
    "Stack",
    "StepEfficiency",
]
