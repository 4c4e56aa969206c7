"""GEMM throughput by shape and dtype: C[M, N] = A[M, K] @ B[K, N], 2*M*N*K flop.

bf16, fp16 and fp32 run ``torch.matmul``; fp8 runs ``torch._scaled_mm`` (per-tensor scales,
bf16 output), the path fp8 training recipes use, on GPUs with fp8 tensor cores (compute
capability 8.9 and above). A shape the device cannot hold is skipped with a note.
"""

from __future__ import annotations

from collections.abc import Callable

from scalewall.probe.config import TORCH_DTYPES, ProbeConfig
from scalewall.probe.measurements import Record
from scalewall.probe.runtime import Context, first_line, time_op

FP8_MIN_CAPABILITY = (8, 9)
"""Ada/Hopper and later have fp8 tensor cores (NVIDIA CUDA C++ Programming Guide, sm_89+)."""


def gemm_flop(m: int, n: int, k: int) -> float:
    """Multiply-adds of one GEMM counted as two flop each: 2*M*N*K."""
    return 2.0 * m * n * k


def default_dtypes(ctx: Context) -> tuple[str, ...]:
    """bf16 and fp16 (plus fp8 where supported) on GPUs; fp32 on CPU."""
    if ctx.device_type != "cuda":
        return ("fp32",)
    cap = tuple(ctx.torch.cuda.get_device_capability(ctx.device))
    return ("bf16", "fp16", "fp8_e4m3") if cap >= FP8_MIN_CAPABILITY else ("bf16", "fp16")


def _matmul_op(ctx: Context, shape: tuple[int, int, int], dtype: str) -> Callable[[], object]:
    torch, (m, n, k) = ctx.torch, shape
    tdtype = getattr(torch, TORCH_DTYPES[dtype])
    if dtype.startswith("fp8"):
        a = torch.randn(m, k, device=ctx.device).to(tdtype)
        b = torch.randn(n, k, device=ctx.device).to(tdtype).t()  # column-major, as required
        one = torch.ones((), device=ctx.device, dtype=torch.float32)
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    a = torch.randn(m, k, device=ctx.device, dtype=tdtype)
    b = torch.randn(k, n, device=ctx.device, dtype=tdtype)
    c = torch.empty(m, n, device=ctx.device, dtype=tdtype)
    return lambda: torch.matmul(a, b, out=c)


def measure_gemm(
    ctx: Context, config: ProbeConfig, dtypes: tuple[str, ...], notes: list[str]
) -> list[Record]:
    """One record per (dtype, shape) that ran; skipped ones leave a line in ``notes``."""
    records = []
    for dtype in dtypes:
        for shape in config.gemm_shapes:
            try:
                op = _matmul_op(ctx, shape, dtype)
                t = time_op(
                    op,
                    ctx.sync,
                    events=ctx.event_pair,
                    warmup=config.warmup_iters,
                    iters=config.iters,
                    repeats=config.repeats,
                )
            except (RuntimeError, TypeError, ValueError) as exc:
                notes.append(f"gemm {dtype} {'x'.join(map(str, shape))} skipped: {first_line(exc)}")
                continue
            records.append(
                Record(
                    kind="gemm",
                    variant="scaled_mm" if dtype.startswith("fp8") else "matmul",
                    dtype=dtype,
                    time_s=t.median_s,
                    shape=shape,
                    flop_per_s=gemm_flop(*shape) / t.median_s,
                    time_min_s=t.min_s,
                    time_max_s=t.max_s,
                    num_iters=t.num_iters,
                    rank=ctx.rank,
                )
            )
    return records
