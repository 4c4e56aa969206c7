"""Attention-kernel throughput: ``torch.nn.functional.scaled_dot_product_attention``, causal.

Flop counts follow the FlashAttention-2 paper's benchmark convention (Dao 2023, section 4.1):
forward = 4*B*H*T^2*D (two matmuls, QK^T and PV, of 2*B*H*T^2*D each), halved for a causal mask;
backward = 2.5 x forward, so forward + backward = 3.5 x forward. These count the model's
matmuls, not the recomputation a fused kernel does, so the rate compares across kernels.
"""

from __future__ import annotations

from collections.abc import Callable

from scalewall.probe.config import TORCH_DTYPES, ProbeConfig
from scalewall.probe.measurements import Record
from scalewall.probe.runtime import Context, first_line, time_op

CAUSAL_FRAC = 0.5
"""Share of the T x T score matrix a causal mask keeps (the triangle; exact as T grows)."""
BACKWARD_OVER_FORWARD = 2.5
"""Backward flop over forward flop of attention (FlashAttention-2, section 4.1)."""


def attention_flop(shape: tuple[int, int, int, int], variant: str) -> float:
    """Flop of one causal attention call on (B, H, T, D): forward, or forward plus backward."""
    b, h, t, d = shape
    forward = 4.0 * b * h * t * t * d * CAUSAL_FRAC
    if variant == "causal_fwd":
        return forward
    return forward * (1.0 + BACKWARD_OVER_FORWARD)


def default_dtypes(ctx: Context) -> tuple[str, ...]:
    return ("bf16",) if ctx.device_type == "cuda" else ("fp32",)


def _attention_op(
    ctx: Context, shape: tuple[int, int, int, int], dtype: str, variant: str
) -> Callable[[], object]:
    torch = ctx.torch
    sdpa = torch.nn.functional.scaled_dot_product_attention
    tdtype = getattr(torch, TORCH_DTYPES[dtype])
    grad = variant == "causal_fwd_bwd"
    q, k, v = (
        torch.randn(*shape, device=ctx.device, dtype=tdtype, requires_grad=grad) for _ in range(3)
    )
    if not grad:

        def forward() -> object:
            with torch.no_grad():
                return sdpa(q, k, v, is_causal=True)

        return forward
    dout = torch.randn(*shape, device=ctx.device, dtype=tdtype)

    def forward_backward() -> object:
        q.grad = k.grad = v.grad = None
        sdpa(q, k, v, is_causal=True).backward(dout)
        return None

    return forward_backward


def measure_attention(
    ctx: Context, config: ProbeConfig, dtypes: tuple[str, ...], notes: list[str]
) -> list[Record]:
    """Records for causal forward and forward+backward per (dtype, shape) that ran."""
    records = []
    for dtype in dtypes:
        for shape in config.attention_shapes:
            for variant in ("causal_fwd", "causal_fwd_bwd"):
                try:
                    op = _attention_op(ctx, shape, dtype, variant)
                    t = time_op(
                        op,
                        ctx.sync,
                        events=ctx.event_pair,
                        warmup=config.warmup_iters,
                        iters=config.iters,
                        repeats=config.repeats,
                    )
                except (RuntimeError, TypeError, ValueError) as exc:
                    label = "x".join(map(str, shape))
                    notes.append(f"attention {variant} {dtype} {label} skipped: {first_line(exc)}")
                    continue
                records.append(
                    Record(
                        kind="attention",
                        variant=variant,
                        dtype=dtype,
                        time_s=t.median_s,
                        shape=shape,
                        flop_per_s=attention_flop(shape, variant) / t.median_s,
                        time_min_s=t.min_s,
                        time_max_s=t.max_s,
                        num_iters=t.num_iters,
                        rank=ctx.rank,
                    )
                )
    return records
