"""Kernel and host-issue microbenchmarks behind the step model's MoE and GEMM constants.

Run on one GPU with PyTorch (the probe extra); each record is one JSON line:

    python benchmarks/kernels.py -o kernels.jsonl            # about 1.5 minutes on an H200
    python benchmarks/kernels.py --quick -o k.jsonl          # smoke test, CPU or GPU

What it measures, and which model terms each informs:

- ``gemm``: dense GEMMs C[m,n] = A[m,k] B[k,n] in BF16 (``torch.matmul``) and FP8
  (``torch._scaled_mm`` with per-tensor scales, cuBLASLt, and with row-wise scales), an
  inner-dimension sweep at m = n = 8192 and a row sweep at n = k = 8192 (``perf/compute.py``:
  the k_half and tile/wave terms), after ``HEAT_S`` of large GEMMs and in ``ROUNDS`` shuffled
  passes, so that every shape is timed at the same, settled clocks.
- ``grouped_gemm``: the routed experts' GEMMs, G experts of m tokens each, (k, n) the expert
  shapes of published MoE models, as one grouped kernel (``torch._grouped_mm``, CUTLASS) and
  as G separate GEMMs in a loop (one cuBLAS call per expert; FP8 with per-tensor scales).
  GPU time from CUDA-graph replay, so launch gaps do not count (``grouped_gemm_time_s``).
- ``permute``: token permutation and un-permutation (``index_select`` of k copies of T tokens,
  ``index_add_`` back), bytes moved over time (``Stack.moe_permute_bytes_per_hidden``).
- ``attention``: causal fused attention (PyTorch SDPA with the cuDNN and the FlashAttention
  backends) forward and forward + backward at head widths 64, 128 and 256, heads x width 4096,
  4K-32K tokens per sequence, 16K or more per call (``attention_half_head_dim``'s d / (d + d_half)
  law, the attention fractions and ``attention_half_tokens``); run it with ``--parts attention``.
- ``moe_layer``: one MoE layer forward and forward + backward on one GPU, grouped GEMMs and
  no host sync (``GroupedMoE``), at catalog models' expert shapes and 512-8192 token copies
  per expert: the layer's whole GPU time beside the step model's sum of its parts; run it
  with ``--parts moe_layer``; ``moe_profile`` splits three forward + backward passes of it
  by kernel (PyTorch profiler).
- ``moe_sync``: an eager stack of MoE layers (Qwen3-30B-A3B's expert shape, a dense
  projection before each) forward and backward with and without a dropless dispatcher's
  host sync (``SyncMoE``: the token counts copied to the host before the grouped GEMMs), wall
  time and host issue time beside the GPU busy time, 256-32K tokens per layer: how the
  exposed host time falls as the GPU work grows (``perf/layers.py``'s host-issue term: the
  excess of issue over GPU time, and after the sync the post-sync issue); run it with
  ``--parts moe_sync``.
- ``host``: CPU time to issue one eager operation with the GPU idle (tiny tensors), and one
  plain-PyTorch MoE layer's forward and backward with the local experts in a Python loop at
  several expert counts: the slope is the host time per local expert
  (``HostEfficiency.host_op_s``, ``host_ops_per_local_expert_fwd``). Kernel counts come from
  the PyTorch profiler, so host seconds per launched kernel are printed too.

A run's output ships in ``catalog/data/measurements/`` with its machine and date, and the
``Efficiency`` fields taken from it cite it; nothing reads this script's output at run time.
"""

from __future__ import annotations

import argparse
import itertools
import json
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from scalewall import catalog
from scalewall.workload import counts

EXPERT_MODELS = (
    "qwen3-30b-a3b",
    "qwen3-235b-a22b",
    "deepseek-v3",
    "gpt-oss-120b",
    "nemotron-3-nano-30b-a3b",
    "mixtral-8x7b",
)
"""Catalog models whose expert shapes are timed: the expert's input width (the hidden size, or
a LatentMoE's latent) and its FFN width, up projection k -> 2n (gated) and down n -> k."""
TOKENS_PER_EXPERT = (128, 256, 512, 1024, 2048, 4096, 8192)
GROUPS = (8, 16, 32)


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def gpu_time_s(fn: Callable[[], object], iters: int, repeats: int, graph: bool) -> float:
    """Median seconds per call over ``repeats`` timed batches of ``iters`` calls; with ``graph``
    the batch is one CUDA-graph replay (no host gaps between kernels)."""
    for _ in range(3):
        fn()
    _sync()
    if not torch.cuda.is_available():
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(iters):
                fn()
            times.append((time.perf_counter() - t0) / iters)
        return statistics.median(times)
    run: Callable[[], object]
    if graph:
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            fn()
        torch.cuda.current_stream().wait_stream(stream)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(iters):
                fn()
        run = g.replay
    else:

        def run() -> None:
            for _ in range(iters):
                fn()

    run()
    _sync()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / iters)
    return statistics.median(times)


def emit(out: Any, record: dict[str, Any]) -> None:
    out.write(json.dumps(record) + "\n")
    out.flush()


def expert_shapes() -> list[tuple[str, int, int]]:
    """(catalog id, expert input width, expert FFN width) of ``EXPERT_MODELS``."""
    return [
        (name, int(counts.expert_width_in(spec)), int(spec.expert_ffn_hidden))
        for name in EXPERT_MODELS
        for spec in (catalog.model(name),)
    ]


def has_fp8() -> bool:
    """FP8 tensor cores: compute capability 8.9 (Ada) and later."""
    return torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 9)


def fp8_pair(
    m: int, k: int, n: int, dev: torch.device, scaling: str
) -> Callable[[], object] | None:
    """``torch._scaled_mm`` in FP8 E4M3 with BF16 output: ``tensor`` scales (one per operand,
    cuBLASLt, the path of per-tensor FP8 recipes) or ``row`` scales (one per row of A and per
    column of B, a CUTLASS kernel in PyTorch)."""
    if not has_fp8():
        return None
    a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn).t()
    if scaling == "row":
        sa, sb = torch.ones(m, 1, device=dev), torch.ones(1, n, device=dev)
    else:
        sa = sb = torch.ones((), device=dev)
    return lambda: torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)


HEAT_S = 10.0
"""Seconds of large GEMMs before the sweep, so every shape runs at the clocks a busy, power-
limited card settles at (a cold card boosts higher, and a sweep in order of size would time
its first shapes cold and its last ones hot)."""
ROUNDS = 3
"""Passes over the sweep, each in a new random order (seeded); every pass is recorded."""


def _heat(dev: torch.device, dtype: torch.dtype, seconds: float) -> None:
    if not torch.cuda.is_available():
        return
    a = torch.randn(8192, 8192, device=dev, dtype=dtype)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(20):
            a @ a
        _sync()


def bench_gemm(out: Any, dev: torch.device, dtype: torch.dtype, quick: bool) -> None:
    big = 1024 if quick else 8192
    sweep = [(big, big, k) for k in (128, 256, 512, 1024, 2048, 4096, 8192, 16384)]
    sweep += [(m, big, big) for m in (256, 512, 1024, 2048, 4096, 16384)]
    if quick:
        sweep = sweep[:3]
    variants: list[tuple[str, str | None]] = [("bf16", None)]
    if has_fp8():
        variants += [("fp8_e4m3", "tensor"), ("fp8_e4m3", "row")]
    jobs = [(shape, v) for shape in sweep for v in variants]
    _heat(dev, dtype, 0.5 if quick else HEAT_S)
    rng = random.Random(0)
    for round_ in range(1 if quick else ROUNDS):
        rng.shuffle(jobs)
        for (m, n, k), (name, scaling) in jobs:
            if scaling is None:
                a = torch.randn(m, k, device=dev, dtype=dtype)
                b = torch.randn(k, n, device=dev, dtype=dtype)
                op: Callable[[], object] | None = lambda a=a, b=b: a @ b  # noqa: E731
            else:
                op = fp8_pair(m, k, n, dev, scaling)
            assert op is not None
            t = gpu_time_s(op, 10, 5, graph=False)
            record = {"kind": "gemm", "dtype": name, "m": m, "n": n, "k": k, "round": round_}
            if scaling is not None:
                record["scaling"] = scaling
            emit(out, record | {"time_s": t, "flop_per_s": 2.0 * m * n * k / t})


def bench_grouped(out: Any, dev: torch.device, dtype: torch.dtype, quick: bool) -> None:
    has_grouped = hasattr(torch, "_grouped_mm") and torch.cuda.is_available()
    shapes = expert_shapes()[: 1 if quick else None]
    for name, hidden, width in shapes:
        for proj, k, n in (("up", hidden, 2 * width), ("down", width, hidden)):
            for groups in GROUPS[:1] if quick else GROUPS:
                for m in TOKENS_PER_EXPERT[:2] if quick else TOKENS_PER_EXPERT:
                    if groups * max(m, n) * max(k, n) > 2**31:
                        continue
                    a = torch.randn(groups * m, k, device=dev, dtype=dtype)
                    w = torch.randn(groups, n, k, device=dev, dtype=dtype).transpose(-2, -1)
                    flop = 2.0 * groups * m * n * k
                    rec = {
                        "kind": "grouped_gemm",
                        "model": name,
                        "proj": proj,
                        "dtype": "bf16",
                        "groups": groups,
                        "m": m,
                        "n": n,
                        "k": k,
                    }
                    chunks = a.split(m)

                    def loop(chunks: Any = chunks, w: Any = w) -> None:
                        for i, x in enumerate(chunks):
                            torch.mm(x, w[i])

                    t = gpu_time_s(loop, 5, 5, graph=torch.cuda.is_available())
                    emit(out, rec | {"variant": "per-expert", "time_s": t, "flop_per_s": flop / t})
                    if has_fp8():
                        a8 = a.to(torch.float8_e4m3fn)
                        w8 = torch.randn(groups, n, k, device=dev).to(torch.float8_e4m3fn)
                        sa = sb = torch.ones((), device=dev)
                        parts8 = a8.split(m)

                        def loop8(
                            parts8: Any = parts8, w8: Any = w8, sa: Any = sa, sb: Any = sb
                        ) -> None:
                            for i, x in enumerate(parts8):
                                torch._scaled_mm(
                                    x, w8[i].t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16
                                )

                        t = gpu_time_s(loop8, 5, 5, graph=True)
                        emit(
                            out,
                            rec
                            | {
                                "variant": "per-expert",
                                "dtype": "fp8_e4m3",
                                "scaling": "tensor",
                                "time_s": t,
                                "flop_per_s": flop / t,
                            },
                        )
                        del a8, w8, parts8
                    if has_grouped:
                        offs = torch.arange(1, groups + 1, device=dev, dtype=torch.int32) * m
                        try:
                            t = gpu_time_s(
                                lambda a=a, w=w, offs=offs: torch._grouped_mm(a, w, offs=offs),
                                5,
                                5,
                                graph=True,
                            )
                        except (RuntimeError, TypeError) as exc:
                            emit(out, rec | {"variant": "grouped", "error": str(exc)[:200]})
                            has_grouped = False
                            continue
                        emit(out, rec | {"variant": "grouped", "time_s": t, "flop_per_s": flop / t})


def bench_permute(out: Any, dev: torch.device, dtype: torch.dtype, quick: bool) -> None:
    cases = ((4096, 2048, 8), (16384, 2048, 8), (8192, 7168, 8), (16384, 4096, 8))
    for tokens, hidden, topk in cases[: 1 if quick else None]:
        x = torch.randn(tokens, hidden, device=dev, dtype=dtype)
        index = torch.randint(0, tokens, (tokens * topk,), device=dev)
        y = torch.empty(tokens * topk, hidden, device=dev, dtype=dtype)
        acc = torch.zeros(tokens, hidden, device=dev, dtype=dtype)
        copy = torch.empty_like(y)
        row = x.element_size() * tokens * topk * hidden
        ops: dict[str, tuple[Callable[[], object], float]] = {
            # gather k copies: read and write each
            "index_select": (lambda x=x, i=index, y=y: torch.index_select(x, 0, i, out=y), 2.0),
            # un-permute by scatter-add: read the copies, read-modify-write the token rows
            "index_add": (lambda a=acc, i=index, y=y: a.index_add_(0, i, y), 3.0),
            "copy": (lambda c=copy, y=y: c.copy_(y), 2.0),
        }
        for op, (fn, passes) in ops.items():
            t = gpu_time_s(fn, 10, 5, graph=False)
            emit(
                out,
                {
                    "kind": "permute",
                    "op": op,
                    "tokens": tokens,
                    "hidden": hidden,
                    "topk": topk,
                    "time_s": t,
                    "bytes_per_s": passes * row / t,
                },
            )


class LoopMoE(torch.nn.Module):
    """A plain-PyTorch MoE layer: router, top-k, permutation, experts in a Python loop
    (SwiGLU), weighted combine. Small on purpose: the host, not the GPU, sets its time."""

    def __init__(self, hidden: int, width: int, experts: int, topk: int) -> None:
        super().__init__()
        self.router = torch.nn.Linear(hidden, experts, bias=False)
        self.w13 = torch.nn.Parameter(torch.randn(experts, hidden, 2 * width) * 0.02)
        self.w2 = torch.nn.Parameter(torch.randn(experts, width, hidden) * 0.02)
        self.experts, self.topk = experts, topk

    def expert_ffn(self, tokens: torch.Tensor, flat: torch.Tensor) -> torch.Tensor:
        """The experts' SwiGLU over the tokens sorted by expert: one GEMM pair per expert,
        sized from the token counts copied to the host (the host sync)."""
        counts = torch.bincount(flat, minlength=self.experts).tolist()
        outs = []
        for i, part in enumerate(tokens.split(counts)):
            gate, up = (part @ self.w13[i]).chunk(2, dim=-1)
            outs.append((F.silu(gate) * up) @ self.w2[i])
        return torch.cat(outs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        probs = torch.softmax(self.router(x).float(), dim=-1)
        weight, chosen = torch.topk(probs, self.topk, dim=-1)
        flat = chosen.flatten()
        order = torch.argsort(flat)
        source = order // self.topk
        y = self.expert_ffn(x.index_select(0, source), flat)
        y = y * weight.flatten()[order].unsqueeze(-1).to(x.dtype)
        return torch.zeros_like(x).index_add_(0, source, y)


class GroupedMoE(LoopMoE):
    """An MoE layer the way grouped-GEMM stacks run it on one GPU, with no host sync: router,
    top-k, tokens sorted by expert (``argsort`` and ``index_select``), the gated up projection
    and the down projection each one grouped kernel (``torch._grouped_mm`` with the expert
    offsets on the device), SwiGLU, the weighted combine by ``index_add_``."""

    def expert_ffn(self, tokens: torch.Tensor, flat: torch.Tensor) -> torch.Tensor:
        offs = torch.cumsum(torch.bincount(flat, minlength=self.experts), 0).to(torch.int32)
        gate, up = torch._grouped_mm(tokens, self.w13, offs=offs).chunk(2, dim=-1)
        return torch._grouped_mm(F.silu(gate) * up, self.w2, offs=offs)


class SyncMoE(GroupedMoE):
    """``GroupedMoE`` with a dropless dispatcher's host sync: the tokens per expert are copied
    to the host (``.tolist()``, as Megatron-Core's all-to-all dispatcher sizes its buffers)
    and the grouped GEMMs take offsets built from that list. ``post_sync_s`` collects the host
    seconds from the sync's return to the end of the layer's forward issue."""

    post_sync_s: list[float]

    def expert_ffn(self, tokens: torch.Tensor, flat: torch.Tensor) -> torch.Tensor:
        sizes = torch.bincount(flat, minlength=self.experts).tolist()
        t0 = time.perf_counter()
        offs = torch.tensor(list(itertools.accumulate(sizes)), dtype=torch.int32)
        offs = offs.to(tokens.device, non_blocking=True)
        gate, up = torch._grouped_mm(tokens, self.w13, offs=offs).chunk(2, dim=-1)
        y = torch._grouped_mm(F.silu(gate) * up, self.w2, offs=offs)
        self._t0 = t0
        return y

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = super().forward(x)
        self.post_sync_s.append(time.perf_counter() - self._t0)
        return y


class MoEStack(torch.nn.Module):
    """``layers`` residual blocks, each a dense projection (the GPU work before the router that
    the host can issue ahead: an attention block's stand-in) and an MoE layer."""

    def __init__(self, moe: list[torch.nn.Module], hidden: int) -> None:
        super().__init__()
        self.moe = torch.nn.ModuleList(moe)
        self.dense = torch.nn.ModuleList(torch.nn.Linear(hidden, hidden, bias=False) for _ in moe)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for dense, moe in zip(self.dense, self.moe, strict=True):
            x = x + F.silu(dense(x))
            x = x + moe(x)
        return x


MOE_SYNC_TOKENS = (256, 512, 1024, 2048, 4096, 8192, 16384, 32768)
MOE_SYNC_LAYERS = 8


def bench_moe_sync(out: Any, dev: torch.device, dtype: torch.dtype, quick: bool) -> None:
    """Host-bound time of an eager MoE stack (Qwen3-30B-A3B's expert shape, ``MOE_SYNC_LAYERS``
    layers, forward + backward) with and without the dispatcher's host sync, against its GPU
    busy time (the kernels' summed time, PyTorch profiler), by tokens per layer: how the
    exposed host time falls as the GPU work grows, the shape the step model's host-issue
    term (``perf/layers.py``) assumes. ``wall_s``: one step back to back; ``issue_s``: the host
    seconds one step takes to return after a synchronised start (without the sync, the host's
    issue time; with it, the forward's waits on the GPU too)."""
    from torch.profiler import ProfilerActivity, profile

    if not (hasattr(torch, "_grouped_mm") and torch.cuda.is_available()) and not quick:
        emit(out, {"kind": "moe_sync", "error": "torch._grouped_mm on a GPU is needed"})
        return
    hidden, width, experts, topk = _moe_shape("qwen3-30b-a3b", quick)
    layers = 2 if quick else MOE_SYNC_LAYERS
    for tokens in MOE_SYNC_TOKENS[:2] if quick else MOE_SYNC_TOKENS:
        tokens = tokens // 64 if quick else tokens
        rec: dict[str, Any] = {
            "kind": "moe_sync",
            "model": "qwen3-30b-a3b",
            "hidden": hidden,
            "width": width,
            "experts": experts,
            "topk": topk,
            "layers": layers,
            "tokens": tokens,
        }
        for variant, cls in (("sync", SyncMoE), ("no_sync", GroupedMoE)):
            torch.manual_seed(0)
            moes = [cls(hidden, width, experts, topk) for _ in range(layers)]
            for m in moes:
                m.post_sync_s = []
            model = MoEStack(moes, hidden).to(dev, dtype)
            x = torch.randn(tokens, hidden, device=dev, dtype=dtype, requires_grad=True)

            def step(model: Any = model, x: Any = x) -> None:
                model(x).sum().backward()

            try:
                for _ in range(3):
                    step()
                _sync()
                for m in moes:
                    m.post_sync_s.clear()
                n = 3 if quick else 10
                t0 = time.perf_counter()
                for _ in range(n):
                    step()
                _sync()
                wall = (time.perf_counter() - t0) / n
                post = [t for m in moes for t in m.post_sync_s]
                issue = []
                for _ in range(n):
                    t1 = time.perf_counter()
                    step()
                    issue.append(time.perf_counter() - t1)
                    _sync()
                activity = ProfilerActivity.CUDA if torch.cuda.is_available() else None
                busy = 0.0
                if activity is not None:
                    with profile(activities=[activity]) as prof:
                        step()
                        _sync()
                    busy = sum(e.self_device_time_total for e in prof.key_averages()) / 1e6
            except (RuntimeError, TypeError, NotImplementedError) as exc:
                emit(out, rec | {"variant": variant, "error": str(exc).splitlines()[0][:200]})
                continue
            emit(
                out,
                rec
                | {
                    "variant": variant,
                    "wall_s": wall,
                    "gpu_busy_s": busy,
                    "post_sync_host_s": statistics.median(post) if post else 0.0,
                    "issue_s": statistics.median(issue),
                },
            )
            del model, moes, x
            if torch.cuda.is_available():
                torch.cuda.empty_cache()


MOE_LAYER_MODELS = ("qwen3-30b-a3b", "mixtral-8x7b", "gpt-oss-120b")
MOE_COPIES_PER_EXPERT = (512, 2048, 8192)
"""Token copies per expert of the MoE-layer sweep: the routed GEMMs' rows (T top-k / E)."""


def _moe_shape(name: str, quick: bool) -> tuple[int, int, int, int]:
    """(expert input width, expert FFN width, routed experts, top-k) of a catalog model; a
    tiny shape for ``--quick``."""
    model = catalog.model(name)
    if quick:
        return 64, 32, 8, model.top_k
    width_in = int(counts.expert_width_in(model))
    return width_in, int(model.expert_ffn_hidden), model.routed_experts, model.top_k


def _moe_inputs(
    shape: tuple[int, int, int, int], tokens: int, dev: torch.device, dtype: torch.dtype
) -> tuple[GroupedMoE, torch.Tensor, torch.Tensor]:
    """A ``GroupedMoE`` of ``shape``, its input of ``tokens`` rows and an output gradient."""
    hidden, width, experts, topk = shape
    layer = GroupedMoE(hidden, width, experts, topk).to(dev, dtype)
    x = torch.randn(tokens, hidden, device=dev, dtype=dtype, requires_grad=True)
    grad = torch.randn(tokens, hidden, device=dev, dtype=dtype)
    return layer, x, grad


def bench_moe_layer(out: Any, dev: torch.device, dtype: torch.dtype, quick: bool) -> None:
    """One MoE layer forward and forward + backward on one GPU (``GroupedMoE``, all experts
    local), GPU time between CUDA events, at the expert shapes of catalog models: the layer's
    whole GPU time against the sum the step model builds from its GEMM, permutation and
    element-wise terms (``perf/moe.py``)."""
    if not (hasattr(torch, "_grouped_mm") and torch.cuda.is_available()) and not quick:
        emit(out, {"kind": "moe_layer", "error": "torch._grouped_mm on a GPU is needed"})
        return
    for name in MOE_LAYER_MODELS[:1] if quick else MOE_LAYER_MODELS:
        shape = _moe_shape(name, quick)
        hidden, width, experts, topk = shape
        for per_expert in MOE_COPIES_PER_EXPERT[:1] if quick else MOE_COPIES_PER_EXPERT:
            tokens = 64 if quick else max(1, per_expert * experts // topk)
            torch.manual_seed(0)
            layer, x, grad = _moe_inputs(shape, tokens, dev, dtype)
            flop = 2.0 * tokens * topk * hidden * 3 * width + 2.0 * tokens * hidden * experts
            rec = {
                "kind": "moe_layer",
                "model": name,
                "hidden": hidden,
                "width": width,
                "experts": experts,
                "topk": topk,
                "tokens": tokens,
                "copies_per_expert": tokens * topk / experts,
            }

            def fwd(layer: Any = layer, x: Any = x) -> object:
                with torch.no_grad():
                    return layer(x)

            def fwd_bwd(layer: Any = layer, x: Any = x, grad: Any = grad) -> object:
                y = layer(x)
                y.backward(grad)
                return y

            try:
                t_f = gpu_time_s(fwd, 3, 5, graph=False)
                t_fb = gpu_time_s(fwd_bwd, 3, 5, graph=False)
            except (RuntimeError, TypeError, NotImplementedError) as exc:
                emit(out, rec | {"error": str(exc).splitlines()[0][:200]})
                continue
            emit(
                out,
                rec
                | {
                    "fwd_s": t_f,
                    "fwd_bwd_s": t_fb,
                    "fwd_flop_per_s": flop / t_f,
                    "fwd_bwd_flop_per_s": 3.0 * flop / t_fb,
                },
            )
            del layer, x, grad
            if torch.cuda.is_available():
                torch.cuda.empty_cache()


MOE_PROFILE_TOKENS = {"qwen3-30b-a3b": 32768, "mixtral-8x7b": 8192, "gpt-oss-120b": 65536}
"""Tokens of the profiled MoE layers (2048 copies per expert)."""


def bench_moe_profile(out: Any, dev: torch.device, dtype: torch.dtype, quick: bool) -> None:
    """GPU time by kernel of three ``GroupedMoE`` forward + backward passes (PyTorch profiler):
    which kernels the layer's time goes to beyond the grouped GEMMs."""
    from torch.profiler import ProfilerActivity, profile

    activity = ProfilerActivity.CUDA if torch.cuda.is_available() else ProfilerActivity.CPU
    for name, tokens in list(MOE_PROFILE_TOKENS.items())[: 1 if quick else None]:
        tokens = 64 if quick else tokens
        layer, x, grad = _moe_inputs(_moe_shape(name, quick), tokens, dev, dtype)
        for _ in range(3):
            layer(x).backward(grad)
        _sync()
        with profile(activities=[activity]) as prof:
            for _ in range(3):
                layer(x).backward(grad)
            _sync()
        for event in prof.key_averages():
            seconds = (
                event.self_device_time_total
                if torch.cuda.is_available()
                else event.self_cpu_time_total
            ) / 1e6
            if seconds <= 0:
                continue
            emit(
                out,
                {
                    "kind": "moe_profile",
                    "model": name,
                    "tokens": tokens,
                    "passes": 3,
                    "kernel": event.key[:120],
                    "calls": event.count,
                    "time_s": seconds,
                },
            )
        del layer, x, grad


ATTENTION_HEAD_DIMS = (64, 128, 256)
ATTENTION_SEQ = (4096, 8192, 16384, 32768)
ATTENTION_WIDTH = 4096
"""Heads x head dim of the attention sweep: one transformer's width at every head size."""


def bench_attention(out: Any, dev: torch.device, dtype: torch.dtype, quick: bool) -> None:
    """Causal fused attention forward and forward + backward by head width, one record per
    backend (cuDNN, FlashAttention through PyTorch's SDPA): the head-width law
    d / (d + d_half) of ``attention_half_head_dim`` and the accelerator's attention fraction.
    FLOPs: forward 4 b h s^2 d / 2 (causal), backward 2.5x the forward (five matmuls to two)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backends = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}
    if not torch.cuda.is_available():
        backends = {"math": SDPBackend.MATH}
    dims = ATTENTION_HEAD_DIMS[:2] if quick else ATTENTION_HEAD_DIMS
    seqs = (256,) if quick else ATTENTION_SEQ
    for name, backend in backends.items():
        for s in seqs:
            for d in dims:
                h = max(1, (256 if quick else ATTENTION_WIDTH) // d)
                b = max(1, 16384 // s)
                q, k, v = (
                    torch.randn(b, h, s, d, device=dev, dtype=dtype, requires_grad=True)
                    for _ in range(3)
                )
                grad = torch.randn(b, h, s, d, device=dev, dtype=dtype)

                qkv, chosen = (q, k, v), backend

                def fwd(qkv: Any = qkv, chosen: Any = chosen) -> object:
                    with torch.no_grad(), sdpa_kernel(chosen):
                        return F.scaled_dot_product_attention(*qkv, is_causal=True)

                def fwd_bwd(qkv: Any = qkv, chosen: Any = chosen, grad: Any = grad) -> object:
                    with sdpa_kernel(chosen):
                        o = F.scaled_dot_product_attention(*qkv, is_causal=True)
                    o.backward(grad)
                    return o

                try:
                    t_f = gpu_time_s(fwd, 2 if quick else 10, 3 if quick else 7, graph=False)
                    t_fb = gpu_time_s(fwd_bwd, 2 if quick else 5, 3 if quick else 7, graph=False)
                except RuntimeError as exc:  # a backend that does not take this shape
                    emit(out, {"kind": "attention", "backend": name, "seq": s, "head_dim": d,
                               "error": str(exc).splitlines()[0][:200]})  # fmt: skip
                    continue
                flop_f = 4.0 * b * h * s * s * d / 2.0
                emit(
                    out,
                    {
                        "kind": "attention",
                        "backend": name,
                        "causal": True,
                        "batch": b,
                        "heads": h,
                        "seq": s,
                        "head_dim": d,
                        "fwd_s": t_f,
                        "fwd_bwd_s": t_fb,
                        "fwd_flop_per_s": flop_f / t_f,
                        "fwd_bwd_flop_per_s": 3.5 * flop_f / t_fb,
                    },
                )


def host_issue_s(fn: Callable[[], object], n: int) -> float:
    """CPU seconds to issue one call of ``fn`` (the GPU kept ahead of nothing: tiny work)."""
    for _ in range(10):
        fn()
    _sync()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    t1 = time.perf_counter()
    _sync()
    return (t1 - t0) / n


def count_kernels(fn: Callable[[], object]) -> int:
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
    with profile(activities=acts) as prof:
        fn()
        _sync()
    if torch.cuda.is_available():
        return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
    return sum(1 for e in prof.events() if e.name.startswith("aten::"))


def bench_host(out: Any, dev: torch.device, dtype: torch.dtype, quick: bool) -> None:
    x = torch.randn(16, 16, device=dev)
    emit(out, {"kind": "host", "op": "add", "time_s": host_issue_s(lambda: torch.add(x, x), 2000)})
    lin = torch.nn.Linear(64, 64, device=dev, dtype=dtype)
    xi = torch.randn(8, 64, device=dev, dtype=dtype)
    emit(out, {"kind": "host", "op": "nn.Linear", "time_s": host_issue_s(lambda: lin(xi), 2000)})
    a = torch.randn(64, 64, device=dev, dtype=dtype)
    b = torch.randn(64, 64, device=dev, dtype=dtype)
    emit(out, {"kind": "host", "op": "mm", "time_s": host_issue_s(lambda: a @ b, 2000)})
    hidden, width, topk, tokens = 256, 128, 4, 512
    for experts in (4, 8) if quick else (4, 8, 16, 32, 64):
        torch.manual_seed(0)
        layer = LoopMoE(hidden, width, experts, topk).to(device=dev, dtype=dtype)
        xs = torch.randn(tokens, hidden, device=dev, dtype=dtype, requires_grad=True)

        def step(layer: Any = layer, xs: Any = xs) -> None:
            layer(xs).sum().backward()

        kernels = count_kernels(step)
        t = host_issue_s(step, 5 if quick else 30)
        emit(
            out,
            {
                "kind": "host",
                "op": "moe_layer_fwd_bwd",
                "experts": experts,
                "tokens": tokens,
                "hidden": hidden,
                "width": width,
                "topk": topk,
                "time_s": t,
                "kernels": kernels,
                "s_per_kernel": t / max(kernels, 1),
            },
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--parts", default="host,grouped_gemm,permute,gemm")
    args = parser.parse_args()
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dtype = torch.bfloat16 if torch.cuda.is_available() else torch.float32
    benches = {
        "host": bench_host,
        "grouped_gemm": bench_grouped,
        "permute": bench_permute,
        "gemm": bench_gemm,
        "attention": bench_attention,
        "moe_layer": bench_moe_layer,
        "moe_profile": bench_moe_profile,
        "moe_sync": bench_moe_sync,
    }
    with args.output.open("w") as out:
        emit(
            out,
            {
                "kind": "machine",
                "device": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu",
                "total_memory_bytes": (
                    torch.cuda.get_device_properties(0).total_memory
                    if torch.cuda.is_available()
                    else 0
                ),
                "torch": torch.__version__,
                "cuda": torch.version.cuda,
                "python": platform.python_version(),
                "cpu": platform.processor() or platform.machine(),
                "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            },
        )
        for part in args.parts.split(","):
            t0 = time.perf_counter()
            benches[part](out, dev, dtype, args.quick)
            print(f"{part}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
