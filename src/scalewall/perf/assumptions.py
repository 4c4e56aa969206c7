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
    overlap_compute_slowdown_frac: float = 0.0
    """Compute time lost per second of communication hidden behind it: collective kernels
    occupy SMs (NCCL uses up to 32 of 132 on H100) and share HBM bandwidth. The published runs
    show no measurable effect once the other constants are fitted, so the default is 0; set it
    to study SM contention."""


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
    elementwise_bytes_per_hidden: float = 40.0
    """HBM bytes moved per hidden element per layer per token by non-GEMM ops, forward+backward
    (norms, residual adds, bias, dropout, rotary), with the stack's kernel fusion."""
    elementwise_bytes_per_ffn: float = 14.0
    """HBM bytes per FFN-hidden element per layer per token (activation function fwd+bwd)."""
    grad_reduce_bytes: float = 4.0
    """Bytes per gradient element in the data-parallel reduction (fp32 main grads)."""
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


PRESETS: dict[str, Stack] = {
    "megatron-core": Stack(tp_comm_overlap_frac=0.6),
    "megatron-core-no-overlap": Stack(
        name="megatron-core-no-overlap",
        overlap_grad_reduce=False,
        overlap_param_gather=False,
        tp_comm_overlap_frac=0.0,
    ),
    "fsdp-2024": Stack(name="fsdp-2024", tp_comm_overlap_frac=0.0),
    "megatron-2021": Stack(
        name="megatron-2021",
        overlap_grad_reduce=False,
        overlap_param_gather=False,
        tp_comm_overlap_frac=0.0,
        overlap_p2p=False,
        flash_attention=False,
        elementwise_bytes_per_hidden=40.0,
        elementwise_bytes_per_ffn=16.0,
    ),
    "megatron-2022": Stack(
        name="megatron-2022",
        overlap_grad_reduce=False,
        overlap_param_gather=False,
        tp_comm_overlap_frac=0.0,
        overlap_p2p=False,
        flash_attention=False,
        elementwise_bytes_per_hidden=40.0,
        elementwise_bytes_per_ffn=16.0,
    ),
    "megatron-deepspeed": Stack(
        name="megatron-deepspeed",
        overlap_grad_reduce=False,
        overlap_param_gather=False,
        tp_comm_overlap_frac=0.0,
        overlap_p2p=False,
        flash_attention=False,
        elementwise_bytes_per_hidden=40.0,
        elementwise_bytes_per_ffn=16.0,
        grad_buckets=1,
    ),
}


def preset(name: str) -> Stack:
    """A named software-stack preset."""
    if name not in PRESETS:
        raise SpecError("stack", name, f"one of {', '.join(PRESETS)}")
    return PRESETS[name]


def with_overrides(stack: Stack, **changes: object) -> Stack:
    return dataclasses.replace(stack, **changes)  # type: ignore[arg-type]
