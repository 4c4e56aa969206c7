"""Kernel times on one accelerator: GEMMs by shape, fused attention, memory-bound kernels.

A GEMM C[m,n] = A[m,k] B[k,n] is tiled into output tiles spread over the SMs in waves; a partial
last wave, tiles hanging over the matrix edge and short inner loops all lower the achieved rate
below the accelerator's large-GEMM ceiling. The time is the larger of that compute time and the
time to stream A, B and C through HBM (roofline), plus a fixed kernel cost.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from scalewall.catalog.schema import Accelerator
from scalewall.perf.assumptions import Efficiency
from scalewall.perf.batch import PRECISION, is_fp4, is_quantized
from scalewall.plan.plan import PRECISIONS

FloatArray = NDArray[np.float64]

NVFP4_OPERAND_BYTES = 0.5 + 1.0 / 16.0
"""Bytes per NVFP4 GEMM operand element: a 4-bit E2M1 value and one 1-byte E4M3 scale per 16
elements (NVIDIA, "Pretraining Large Language Models with NVFP4", arXiv 2509.25149, Sec. 2)."""

ACT_BYTES = 2.0
"""Bytes per activation element: BF16/FP16 activations between kernels and across ranks."""

FP32_BYTES = 4.0
"""Bytes of an FP32 element: a gradient kept in FP32, a chunked scan's states and chunk
matrices."""

# Tile shapes a GEMM library chooses among; it picks the one that wastes the least.
_TILES = ((1.0, 1.0), (2.0, 0.5), (0.5, 1.0))
_TILE_SCALES = np.asarray(_TILES)


@dataclass(frozen=True, kw_only=True)
class Device:
    """The per-accelerator numbers the kernels need, for one precision."""

    peak_flop_per_s: FloatArray
    """Dense tensor peak of the linear layers at each plan's GEMM precision; for the FP8
    recipes already scaled by the FP8 ceiling ratio and the block-scaling loss."""
    precision_code: FloatArray
    """Index into PRECISIONS of each plan."""
    peak_bf16_flop_per_s: float
    """The 16-bit tensor peak (``Accelerator.peak_16bit_flop_per_s``: BF16's, FP16's on parts
    without BF16), which attention and the unquantized layers run against."""
    gemm_ceiling_frac: float
    """Sustained GEMM fraction of the peak: microbenchmark ceiling x in-step ratio."""
    attention_frac: float
    """Fused-attention fraction of the BF16 peak (the accelerator's catalog kernel)."""
    attention_half_tokens: float
    """Key length at which the catalog kernel runs at half its long-sequence rate."""
    clock_frac: float
    """Sustained clock over the boost clock in training (``training_clock_frac``)."""
    sm_count: int
    hbm_bytes_per_s: float

    @classmethod
    def of(cls, acc: Accelerator, precision_code: FloatArray, eff: Efficiency) -> Device:
        """``precision_code`` indexes PRECISIONS (bf16, fp16, fp8, fp8-block, mxfp8, nvfp4). FP8
        and FP4 fall back to the BF16 peak on accelerators without such tensor cores (the plan
        check refuses them first). Hardware microscaling is taken to come with FP4 tensor cores
        (both arrived with Blackwell); elsewhere MXFP8 is scaled in software like ``fp8-block``;
        the same test picks the FP8 ceiling ratio. NVFP4 runs at the FP4 peak times
        ``fp4_gemm_ceiling_ratio``."""
        clock = acc.training_clock_frac
        has_fp8 = acc.peak_fp8_flop_per_s > 0
        hw_blocks = acc.peak_fp4_flop_per_s > 0
        ratio = (
            eff.compute.fp8_gemm_ceiling_ratio_blackwell
            if hw_blocks
            else eff.compute.fp8_gemm_ceiling_ratio
        )
        fp8 = acc.peak_fp8_flop_per_s * ratio if has_fp8 else 0.0
        block = fp8 * (1.0 - eff.compute.fp8_block_scaling_gemm_slowdown_frac)
        # The FP4 ratio may be one value per plan row (calibration draws): FP4 plans read it
        # by row, every other precision from the per-precision table.
        fp4_ratio = np.asarray(eff.compute.fp4_gemm_ceiling_ratio, dtype=np.float64)
        by_precision = {
            "bf16": acc.peak_bf16_flop_per_s or acc.peak_16bit_flop_per_s,
            "fp16": acc.peak_fp16_flop_per_s,
            "fp8": fp8 or acc.peak_16bit_flop_per_s,
            "fp8-block": block or acc.peak_16bit_flop_per_s,
            "mxfp8": (fp8 if hw_blocks else block) or acc.peak_16bit_flop_per_s,
            "nvfp4": acc.peak_fp4_flop_per_s or acc.peak_16bit_flop_per_s,
        }
        peaks = np.array([by_precision[name] for name in PRECISIONS])
        code = np.asarray(precision_code, dtype=np.float64)
        peak = peaks[code.astype(np.intp)]
        if acc.peak_fp4_flop_per_s > 0:
            peak = np.where(code == PRECISION["nvfp4"], peak * fp4_ratio, peak)
        return cls(
            peak_flop_per_s=peak,
            precision_code=code,
            peak_bf16_flop_per_s=acc.peak_16bit_flop_per_s,
            gemm_ceiling_frac=acc.gemm_max_frac * eff.compute.gemm_sustained_ratio * clock,
            attention_frac=(acc.attention_frac or eff.compute.flash_attention_frac) * clock,
            attention_half_tokens=acc.attention_half_tokens or eff.attention.attention_half_tokens,
            clock_frac=clock,
            sm_count=acc.sm_count,
            hbm_bytes_per_s=acc.hbm_bytes_per_s,
        )

    def without_quantization(self) -> Device:
        """The same device with quantized plans' GEMMs back in BF16 (the output layer and the
        router stay in BF16 under every FP8 and FP4 recipe; DeepSeek-V3 Sec. 3.3.1, NVIDIA's
        NVFP4 recipe)."""
        return replace(
            self,
            peak_flop_per_s=np.where(
                self.quantized, self.peak_bf16_flop_per_s, self.peak_flop_per_s
            ),
            precision_code=np.where(self.quantized, PRECISION["bf16"], self.precision_code),
        )

    @cached_property
    def quantized(self) -> NDArray[np.bool_]:
        """Plans whose linear layers run in FP8 or FP4."""
        return is_quantized(self.precision_code)

    @cached_property
    def fp4(self) -> NDArray[np.bool_]:
        """Plans whose linear layers run in NVFP4."""
        return is_fp4(self.precision_code)

    @property
    def operand_bytes(self) -> FloatArray:
        """Bytes per GEMM operand element the kernels stream: 2 in BF16, 1 in FP8, half a byte
        plus one FP8 scale per 16 elements in NVFP4."""
        return np.where(self.fp4, NVFP4_OPERAND_BYTES, np.where(self.quantized, 1.0, 2.0))


def k_half(dev: Device, eff: Efficiency) -> FloatArray:
    """``gemm_k_half_efficiency`` at the rate of one of the device's SMs: the prologue and
    epilogue take about the same time at any tensor rate, so an SM r times the reference SM's
    rate (``gemm_k_half_reference_sm_flop_per_s``) at the plan's operand precision needs r
    times the inner dimension to amortise them (FP8: 2x the BF16 figure on one part, NVFP4 4x;
    a Blackwell SM about 2x a Hopper SM). FP8 GEMMs take ``gemm_k_half_fp8_factor`` on top."""
    per_sm = dev.peak_flop_per_s / max(dev.sm_count, 1)
    fp8 = np.where(dev.quantized & ~dev.fp4, eff.compute.gemm_k_half_fp8_factor, 1.0)
    result: FloatArray = (
        eff.compute.gemm_k_half_efficiency
        * per_sm
        / eff.compute.gemm_k_half_reference_sm_flop_per_s
        * fp8
    )
    return result


def tile_utilization(m: FloatArray, n: FloatArray, dev: Device, eff: Efficiency) -> FloatArray:
    """Useful fraction of the SM-tile slots a GEMM occupies, best over the library's tiles."""
    extra = (1,) * np.ndim(m * n)
    scales = _TILE_SCALES.reshape((len(_TILES), 2, *extra))
    tm, tn = eff.compute.gemm_tile_m * scales[:, 0], eff.compute.gemm_tile_n * scales[:, 1]
    tiles = np.ceil(m / tm) * np.ceil(n / tn)
    waves = np.ceil(tiles / dev.sm_count)
    best: FloatArray = ((m * n) / (waves * dev.sm_count * tm * tn)).max(axis=0)
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
    rate = dev.peak_flop_per_s * dev.gemm_ceiling_frac * inner / (inner + k_half(dev, eff))
    compute = flop / (rate * tile_utilization(rows * batch, cols, dev, eff))
    traffic = (rows * inner + inner * cols + rows * cols) * bytes_per_element * batch
    memory = traffic / (dev.hbm_bytes_per_s * eff.compute.hbm_efficiency)
    result: FloatArray = np.maximum(compute, memory) + eff.compute.gemm_launch_s
    return result


def linear_time_s(
    tokens: FloatArray, n_out: FloatArray, k_in: FloatArray, dev: Device, eff: Efficiency
) -> tuple[FloatArray, FloatArray]:
    """Forward and backward time of a linear layer Y[t,n] = X[t,k] W[k,n].

    Backward is two GEMMs: dgrad (t, n) x (n, k) and wgrad (k, t) x (t, n).
    """
    # The three GEMMs in one call (a leading axis of three), fewer array operations for a
    # small batch; each element is computed as on its own.
    t, n, k = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (tokens, n_out, k_in)))
    times = gemm_time_s(np.stack((t, t, k)), np.stack((n, k, n)), np.stack((k, n, t)), dev, eff)
    return times[0], times[1] + times[2]


def grouped_gemm_time_s(
    m: FloatArray, n: FloatArray, k: FloatArray, groups: FloatArray, dev: Device, eff: Efficiency
) -> FloatArray:
    """One grouped GEMM: ``groups`` independent (m, k) x (k, n) products in one kernel, as the
    routed experts of an MoE layer run (CUTLASS grouped GEMM). Tiles of all groups share the
    waves, but each group's edge tiles are padded on their own:
    utilization = groups m n / (waves x SMs x tile), waves = ceil(groups ceil(m/tm) ceil(n/tn)
    / SMs); one kernel cost for the whole group."""
    rows, cols, inner = (np.maximum(np.asarray(x, dtype=np.float64), 1.0) for x in (m, n, k))
    flop = 2.0 * rows * cols * inner * groups
    rate = dev.peak_flop_per_s * dev.gemm_ceiling_frac * inner / (inner + k_half(dev, eff))
    best = np.zeros_like(rows)
    for scale_m, scale_n in _TILES:
        tm, tn = eff.compute.gemm_tile_m * scale_m, eff.compute.gemm_tile_n * scale_n
        tiles = groups * np.ceil(rows / tm) * np.ceil(cols / tn)
        waves = np.ceil(tiles / dev.sm_count)
        best = np.maximum(best, groups * rows * cols / (waves * dev.sm_count * tm * tn))
    traffic = (rows * inner + inner * cols + rows * cols) * dev.operand_bytes * groups
    memory = traffic / (dev.hbm_bytes_per_s * eff.compute.hbm_efficiency)
    result: FloatArray = np.maximum(flop / (rate * best), memory) + eff.compute.gemm_launch_s
    return result


def grouped_linear_time_s(
    tokens: FloatArray,
    n_out: FloatArray,
    k_in: FloatArray,
    groups: FloatArray,
    dev: Device,
    eff: Efficiency,
) -> tuple[FloatArray, FloatArray]:
    """Forward and backward time of ``groups`` expert linears, ``tokens`` rows each."""
    forward = grouped_gemm_time_s(tokens, n_out, k_in, groups, dev, eff)
    dgrad = grouped_gemm_time_s(tokens, k_in, n_out, groups, dev, eff)
    wgrad = grouped_gemm_time_s(k_in, n_out, tokens, groups, dev, eff)
    return forward, dgrad + wgrad


def memory_bound_time_s(bytes_moved: FloatArray, dev: Device, eff: Efficiency) -> FloatArray:
    """Streaming kernels (norms, activations, softmax, optimizer) at achieved HBM bandwidth."""
    result: FloatArray = bytes_moved / (dev.hbm_bytes_per_s * eff.compute.hbm_efficiency)
    return result
