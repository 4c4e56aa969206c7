"""What the probe measures: the sweep of shapes, sizes and dtypes, and how long it times each.

The sweep values below are choices of what to measure, not hardware figures: defaults for GPUs
cover the shapes a large transformer layer runs (hidden sizes 4k-16k, head dim 128, sequences
of 1k-16k tokens); the CPU defaults are small so that a laptop finishes in seconds.
"""

from __future__ import annotations

import dataclasses

from scalewall.errors import SpecError
from scalewall.probe.busbw import COLLECTIVE_KINDS
from scalewall.units import GIB, KIB, MIB

PARTS = ("gemm", "attention", "hbm", "collectives")
#: Collectives the probe runs (broadcast and reduce are not used by training plans).
PROBE_COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")
#: Element types a collective may use here (gloo has no fp8 reductions).
COLLECTIVE_DTYPES = ("fp32", "bf16", "fp16")
#: dtype names of measurements files -> torch attribute names.
TORCH_DTYPES = {
    "fp32": "float32",
    "fp16": "float16",
    "bf16": "bfloat16",
    "fp8_e4m3": "float8_e4m3fn",
    "fp8_e5m2": "float8_e5m2",
}


@dataclasses.dataclass(frozen=True, kw_only=True)
class ProbeConfig:
    """One probe run. Empty dtype tuples mean: what the device supports (see ``runner``)."""

    parts: tuple[str, ...] = PARTS
    """Which parts to run, a subset of ``PARTS``."""
    gemm_shapes: tuple[tuple[int, int, int], ...] = (
        (4096, 4096, 4096),
        (8192, 8192, 8192),
        (16384, 16384, 16384),
        (8192, 28672, 8192),
        (8192, 8192, 28672),
        (2048, 8192, 8192),
        (8192, 8192, 256),
        (8192, 8192, 1024),
    )
    """GEMM (M, N, K): C[M, N] = A[M, K] @ B[K, N]; 2*M*N*K flop. The two short-K shapes pin
    the inner dimension the prologue and epilogue need (``gemm_k_half_efficiency``, and for
    FP8 ``gemm_k_half_fp8_factor``), which the large shapes alone leave open."""
    gemm_dtypes: tuple[str, ...] = ()
    """Empty: bf16, fp16 and fp8_e4m3 where the GPU has fp8 tensor cores; fp32 on CPU."""
    attention_shapes: tuple[tuple[int, int, int, int], ...] = (
        (4, 32, 1024, 128),
        (2, 32, 2048, 128),
        (1, 32, 4096, 128),
        (1, 32, 8192, 128),
        (1, 32, 16384, 128),
        (1, 64, 4096, 128),
        (1, 32, 4096, 64),
    )
    """Attention (B, H, T, D): batch, heads, sequence length, head dim."""
    attention_dtypes: tuple[str, ...] = ()
    """Empty: bf16 on GPUs, fp32 on CPU."""
    hbm_sizes_bytes: tuple[int, ...] = (int(GIB), int(4 * GIB))
    """Buffer sizes for the device-memory copy; large, so caches do not flatter the result."""
    collective_kinds: tuple[str, ...] = PROBE_COLLECTIVES
    collective_min_bytes: int = int(64 * KIB)
    collective_max_bytes: int = int(GIB)
    collective_step_factor: int = 4
    """Message sizes: min, min*f, min*f^2 ... up to max (nccl-tests ``-b -e -f``)."""
    collective_dtype: str = "fp32"
    """Element type of collective buffers (nccl-tests' default is float)."""
    group_sizes: tuple[int, ...] = ()
    """Empty: 2, 4, 8 ... up to the world size, and the world size itself. A group of g is
    ranks 0..g-1, so with torchrun's node-major ranks small groups stay inside one node."""
    warmup_iters: int = 3
    """Untimed runs before timing (kernel selection, allocator, NCCL channel setup)."""
    iters: int = 10
    """Operations per timed repeat; the time of one is the repeat's time / iters."""
    repeats: int = 5
    """Timed repeats; the record keeps their median, min and max."""
    compute_on_all_ranks: bool = False
    """Run gemm, attention and hbm on every rank (shows slow devices) instead of rank 0 only."""
    timeout_s: float = 600.0
    """torch.distributed timeout for joining the group and for each collective."""

    def message_sizes_bytes(self) -> tuple[int, ...]:
        """The collective message sizes of this sweep, ascending."""
        sizes = []
        size = self.collective_min_bytes
        while size <= self.collective_max_bytes:
            sizes.append(size)
            size *= self.collective_step_factor
        return tuple(sizes)


def cpu_config(**changes: object) -> ProbeConfig:
    """Defaults sized for a CPU (seconds, not minutes)."""
    base = ProbeConfig(
        gemm_shapes=((256, 256, 256), (512, 512, 512), (1024, 1024, 1024)),
        attention_shapes=((1, 8, 256, 64), (1, 8, 512, 64)),
        hbm_sizes_bytes=(int(64 * MIB),),
        collective_min_bytes=int(4 * KIB),
        collective_max_bytes=int(4 * MIB),
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def quick_config(**changes: object) -> ProbeConfig:
    """The smallest useful run: a smoke test of the whole kit on any machine."""
    base = ProbeConfig(
        gemm_shapes=((128, 128, 128), (256, 256, 256)),
        attention_shapes=((1, 2, 128, 32),),
        hbm_sizes_bytes=(int(4 * MIB),),
        collective_min_bytes=int(KIB),
        collective_max_bytes=int(64 * KIB),
        collective_step_factor=8,
        warmup_iters=1,
        iters=2,
        repeats=2,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def check_config(config: ProbeConfig) -> ProbeConfig:
    """Raise SpecError on a sweep that cannot run; return the config unchanged."""
    for part in config.parts:
        if part not in PARTS:
            raise SpecError("parts", part, f"valid: {', '.join(PARTS)}")
    for kind in config.collective_kinds:
        if kind not in COLLECTIVE_KINDS:
            raise SpecError("collective_kinds", kind, f"valid: {', '.join(PROBE_COLLECTIVES)}")
    for name in ("gemm_dtypes", "attention_dtypes"):
        for dtype in getattr(config, name):
            if dtype not in TORCH_DTYPES:
                raise SpecError(name, dtype, f"valid: {', '.join(TORCH_DTYPES)}")
    if config.collective_dtype not in COLLECTIVE_DTYPES:
        valid = ", ".join(COLLECTIVE_DTYPES)
        raise SpecError("collective_dtype", config.collective_dtype, f"valid: {valid}")
    _check_counts(config)
    return config


def _check_counts(config: ProbeConfig) -> None:
    positive = {
        "iters": config.iters,
        "repeats": config.repeats,
        "collective_min_bytes": config.collective_min_bytes,
    }
    for name, value in positive.items():
        if value < 1:
            raise SpecError(name, value, "must be at least 1")
    if config.warmup_iters < 0:
        raise SpecError("warmup_iters", config.warmup_iters, "must be >= 0")
    if config.collective_step_factor < 2:
        raise SpecError("collective_step_factor", config.collective_step_factor, "must be >= 2")
    if config.collective_max_bytes < config.collective_min_bytes:
        raise SpecError(
            "collective_max_bytes", config.collective_max_bytes, "must be >= collective_min_bytes"
        )
    shapes = (*config.gemm_shapes, *config.attention_shapes)
    for shape in shapes:
        if any(d < 1 for d in shape):
            raise SpecError("shape", "x".join(map(str, shape)), "dimensions must be >= 1")
    for g in config.group_sizes:
        if g < 2:
            raise SpecError("group_sizes", g, "each group size must be at least 2")
