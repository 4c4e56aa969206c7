"""Attention over alternating windowed and full layers (gpt-oss, Gemma 2/3)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from scalewall import catalog
from scalewall.catalog.schema import ModelSpec
from scalewall.errors import SpecError
from scalewall.perf.assumptions import Efficiency
from scalewall.perf.attention import attention_times
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
