"""Kernel times on one accelerator: GEMMs by shape, fused attention, memory-bound kernels.

A GEMM C[m,n] = A[m,k] B[k,n] is tiled into output tiles spread over the SMs in waves; a partial
last wave, tiles hanging over the matrix edge and short inner loops all lower the achieved rate
below the accelerator's large-GEMM ceiling. The time is the larger of that compute time and the
time to stream A, B and C through HBM (roofline), plus a fixed kernel cost.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from scalewall.catalog.schema import Accelerator
from scalewall.perf.assumptions import Efficiency

FloatArray = NDArray[np.float64]

# Tile shapes a GEMM library chooses among; it picks the one that wastes the least.
_TILES = ((1.0, 1.0), (2.0, 0.5), (0.5, 1.0))


@dataclass(frozen=True, kw_only=True)
class Device:
    """The per-accelerator numbers the kernels need, for one precision."""

    peak_flop_per_s: FloatArray
    """Dense tensor peak at each plan's GEMM precision."""
    peak_bf16_flop_per_s: float
    gemm_ceiling_frac: float
    """Sustained GEMM fraction of the peak: microbenchmark ceiling x in-step ratio."""
    attention_frac: float
    """Fused-attention fraction of the BF16 peak."""
    sm_count: int
    hbm_bytes_per_s: float

    @classmethod
    def of(cls, acc: Accelerator, precision_code: FloatArray, eff: Efficiency) -> Device:
        """``precision_code`` indexes PRECISIONS (bf16, fp16, fp8); FP8 falls back to the BF16
        peak on accelerators without FP8 tensor cores."""
        clock = acc.training_clock_frac
        peaks = np.array(
            [
                acc.peak_bf16_flop_per_s,
                acc.peak_fp16_flop_per_s,
                acc.peak_fp8_flop_per_s or acc.peak_bf16_flop_per_s,
            ]
        )
        return cls(
            peak_flop_per_s=peaks[precision_code.astype(np.intp)],
            peak_bf16_flop_per_s=acc.peak_bf16_flop_per_s,
            gemm_ceiling_frac=acc.gemm_max_frac * eff.gemm_sustained_ratio * clock,
            attention_frac=(acc.attention_frac or eff.flash_attention_frac) * clock,
            sm_count=acc.sm_count,
            hbm_bytes_per_s=acc.hbm_bytes_per_s,
        )


def tile_utilization(m: FloatArray, n: FloatArray, dev: Device, eff: Efficiency) -> FloatArray:
    """Useful fraction of the SM-tile slots a GEMM occupies, best over the library's tiles."""
    best = np.zeros_like(m)
    for scale_m, scale_n in _TILES:
        tm, tn = eff.gemm_tile_m * scale_m, eff.gemm_tile_n * scale_n
        tiles = np.ceil(m / tm) * np.ceil(n / tn)
        waves = np.ceil(tiles / dev.sm_count)
        best = np.maximum(best, (m * n) / (waves * dev.sm_count * tm * tn))
    return best


def gemm_time_s(
    m: FloatArray | float,
    n: FloatArray | float,
    k: FloatArray | float,
    dev: Device,
    eff: Efficiency,
    *,
    bytes_per_element: float = 2.0,
    batch: FloatArray | float = 1.0,
) -> FloatArray:
    """Time of ``batch`` GEMMs of shape (m, k) x (k, n)."""
    rows, cols, inner = (np.maximum(np.asarray(x, dtype=np.float64), 1.0) for x in (m, n, k))
    flop = 2.0 * rows * cols * inner * batch
    rate = (
        dev.peak_flop_per_s * dev.gemm_ceiling_frac * inner / (inner + eff.gemm_k_half_efficiency)
    )
    compute = flop / (rate * tile_utilization(rows * batch, cols, dev, eff))
    traffic = (rows * inner + inner * cols + rows * cols) * bytes_per_element * batch
    memory = traffic / (dev.hbm_bytes_per_s * eff.hbm_efficiency)
    result: FloatArray = np.maximum(compute, memory) + eff.gemm_launch_s
    return result


def linear_time_s(
    tokens: FloatArray, n_out: FloatArray, k_in: FloatArray, dev: Device, eff: Efficiency
) -> tuple[FloatArray, FloatArray]:
    """Forward and backward time of a linear layer Y[t,n] = X[t,k] W[k,n].

    Backward is two GEMMs: dgrad (t, n) x (n, k) and wgrad (k, t) x (t, n).
    """
    forward = gemm_time_s(tokens, n_out, k_in, dev, eff)
    dgrad = gemm_time_s(tokens, k_in, n_out, dev, eff)
    wgrad = gemm_time_s(k_in, n_out, tokens, dev, eff)
    return forward, dgrad + wgrad


def memory_bound_time_s(bytes_moved: FloatArray, dev: Device, eff: Efficiency) -> FloatArray:
    """Streaming kernels (norms, activations, softmax, optimizer) at achieved HBM bandwidth."""
    result: FloatArray = bytes_moved / (dev.hbm_bytes_per_s * eff.hbm_efficiency)
    return result
