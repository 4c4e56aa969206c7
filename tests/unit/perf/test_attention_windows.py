"""Attention over alternating windowed and full layers (gpt-oss, Gemma 2/3)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from scalewall import catalog
from scalewall.catalog.schema import ModelSpec
from scalewall.errors import SpecError
from scalewall.perf.assumptions import Efficiency
from scalewall.perf.attention import attention_times, head_width_factor, softmax_fused
from scalewall.perf.batch import PlanBatch
from scalewall.perf.compute import Device
from scalewall.plan.plan import ParallelPlan
from scalewall.stack import preset
from scalewall.workload import counts

GPT_OSS = catalog.model("gpt-oss-120b")
EFF = Efficiency()
PLAN = ParallelPlan(tp=1, pp=1, dp=8, ep=8, micro_batch=2, global_batch=64, seq_len=8192)


def _attention(model: ModelSpec, flash: bool) -> np.ndarray:
    stack = dataclasses.replace(preset("megatron-bridge"), flash_attention=flash)
    batch = PlanBatch.from_plans(model, [PLAN])
    dev = Device.of(catalog.accelerator("b200"), batch.precision, EFF)
    return np.array(attention_times(model, batch, dev, EFF, stack))


@pytest.mark.parametrize("flash", [True, False])
def test_half_windowed_layers_cost_the_mean_of_both_kinds(flash: bool) -> None:
    """18 of 36 layers attend within 128 tokens: per layer, half of a full layer's attention
    plus half of a windowed one's, for the fused and the unfused core alike."""
    windowed = dataclasses.replace(GPT_OSS, full_attention_layers=0)
    full = dataclasses.replace(GPT_OSS, sliding_window=0, full_attention_layers=0)
    mixed, w, f = (_attention(m, flash) for m in (GPT_OSS, windowed, full))
    assert mixed == pytest.approx(0.5 * w + 0.5 * f)
    assert (w < f / 6)[:2].all()  # 128 of 8,192 keys, if at a short kernel's lower rate


def test_model_flops_count_each_layers_keys() -> None:
    """At 8,192 tokens the full layers score 8,192 keys per query, the windowed ones 128."""
    per_token = counts.attention_flop_per_token(GPT_OSS, 8192, causal_half=False)
    d = GPT_OSS.head_size
    expected = 2.0 * (0.5 * 8192 + 0.5 * 128) * GPT_OSS.heads * 2 * d * GPT_OSS.layers
    assert per_token == pytest.approx(expected)


def test_more_full_layers_than_layers_is_refused() -> None:
    with pytest.raises(SpecError, match="full_attention_layers"):
        dataclasses.replace(GPT_OSS, full_attention_layers=37)


def test_narrow_heads_run_the_fused_kernel_slower_per_flop() -> None:
    """The same heads x width at head dim 64 instead of 128: the same FLOPs, at the
    FlashAttention-3 ratio of 497 to 648 TFLOP/s (d / (d + 56) against 128 / (128 + 56))."""
    wide = dataclasses.replace(GPT_OSS, heads=32, kv_heads=4, head_dim=128)
    narrow_t = _attention(GPT_OSS, flash=True)[0]
    wide_t = _attention(wide, flash=True)[0]
    ratio = (128 / 184) / (64 / 120)
    assert narrow_t / wide_t == pytest.approx(ratio, rel=1e-9)
    assert ratio == pytest.approx(648 / 497, rel=0.02)


def test_head_width_factor_is_one_at_the_reference_width() -> None:
    assert head_width_factor(128.0, EFF) == pytest.approx(1.0)
    assert head_width_factor(64.0, EFF) < 1.0 < head_width_factor(256.0, EFF)


@pytest.mark.parametrize(
    ("rule", "micro_batch", "heads", "keys", "fused"),
    [
        ("always", 1, 3, 8192, True),
        ("megatron", 2, 16, 2048, True),
        ("megatron", 2, 3, 2048, False),  # 6 score rows: not a multiple of 4
        ("megatron", 1, 16, 4096, False),  # beyond the causal kernel's 2,048 keys
        ("megatron", 1, 16, 16, False),
        ("heads-as-keys", 2, 16, 2048, True),  # 16 heads -> 16 rows per block, 32 rows
        ("heads-as-keys", 2, 8, 2048, False),  # 8 heads -> 32 rows per block, 16 rows
        ("heads-as-keys", 2, 26, 2048, False),  # 26 heads -> 8 rows per block, 52 rows
        ("heads-as-keys", 2, 28, 2048, True),  # BLOOM's final shape: 56 rows
    ],
)
def test_fused_softmax_availability(
    rule: str, micro_batch: int, heads: int, keys: int, fused: bool
) -> None:
    stack = dataclasses.replace(preset("megatron-deepspeed"), softmax_fusion=rule)
    one = np.ones(1)
    got = softmax_fused(stack, micro_batch * one, heads * one, keys * one, keys)
    assert bool(got[0]) is fused


def test_softmax_fallback_costs_the_counted_bytes() -> None:
    """Unfused attention at 3 heads per GPU (6 score rows per micro-batch of 2): the PyTorch
    chain adds 33 bytes per score forward and 35 backward at the HBM rate."""
    model = dataclasses.replace(
        GPT_OSS, sliding_window=0, full_attention_layers=0, heads=48, kv_heads=48, head_dim=128
    )
    plan = dataclasses.replace(PLAN, tp=1, seq_len=2048)
    batch = PlanBatch.from_plans(model, [plan])
    dev = Device.of(catalog.accelerator("a100-sxm-80gb"), batch.precision, EFF)
    base = preset("megatron-deepspeed")
    times = {}
    for rule in ("always", "megatron"):
        stack = dataclasses.replace(base, softmax_fusion=rule)
        times[rule] = np.array(attention_times(model, batch, dev, EFF, stack))[:, 0]
    # 48 heads x 2 sequences = 96 rows: fused under both rules.
    assert times["megatron"] == pytest.approx(times["always"])
    model3 = dataclasses.replace(model, heads=3, kv_heads=3)
    t = {}
    for rule in ("always", "megatron"):
        stack = dataclasses.replace(base, softmax_fusion=rule)
        t[rule] = np.array(attention_times(model3, batch, dev, EFF, stack))[:, 0]
    scores = 2 * 3 * 2048 * 2048
    rate = float(np.asarray(dev.hbm_bytes_per_s).ravel()[0]) * EFF.compute.hbm_efficiency
    assert t["megatron"][0] - t["always"][0] == pytest.approx(33 * scores / rate)
    assert t["megatron"][1] - t["always"][1] == pytest.approx(35 * scores / rate)


def test_unknown_softmax_rule_is_refused() -> None:
    with pytest.raises(SpecError, match="softmax_fusion"):
        dataclasses.replace(preset("megatron-core"), softmax_fusion="sometimes")
