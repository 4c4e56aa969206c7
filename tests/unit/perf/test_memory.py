"""Memory headroom, the near-limit band and the bytes per parameter of FP8 recipes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from scalewall.catalog.schema import ModelSpec
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.perf.batch import PRECISION, PlanBatch
from scalewall.perf.memory import weight_bytes_per_param
from scalewall.perf.step import step_model
from scalewall.plan.plan import ParallelPlan
from scalewall.plan.topology import Cluster


def _plans(model: ModelSpec, **fields: object) -> PlanBatch:
    base = dict(tp=8, pp=8, dp=16, micro_batch=1, global_batch=512, seq_len=8192, zero=1)
    plans = [ParallelPlan(**{**base, "micro_batch": b, **fields}) for b in (1, 2, 4)]  # type: ignore[arg-type]
    return PlanBatch.from_plans(model, plans)


def test_headroom_and_near_limit_follow_the_margin(llama70b: ModelSpec, h100_1024: Cluster) -> None:
    batch = _plans(llama70b)
    out = step_model(llama70b, h100_1024, batch, Efficiency(), Stack())
    capacity = h100_1024.accelerator.hbm_capacity_bytes
    # Exact: headroom is defined from the total and the driver-reported capacity.
    assert out.memory_headroom_frac == pytest.approx(1.0 - out.memory_total_bytes / capacity)
    assert np.array_equal(out.fits, out.memory_headroom_frac >= 0.0)
    wide = Efficiency().replace(memory_fit_margin_frac=1.0)
    assert step_model(llama70b, h100_1024, batch, wide, Stack()).near_memory_limit.all()
    none = Efficiency().replace(memory_fit_margin_frac=0.0)
    assert not step_model(llama70b, h100_1024, batch, none, Stack()).near_memory_limit.any()


def test_fp8_primary_weights_drop_the_bf16_copy(llama70b: ModelSpec, h100_1024: Cluster) -> None:
    batch = _plans(llama70b, precision="fp8")
    eff = Efficiency()
    keep = step_model(llama70b, h100_1024, batch, eff, Stack()).memory_bytes["weights"]
    fp8_only = dataclasses.replace(Stack(), fp8_primary_weights=True)
    lean = step_model(llama70b, h100_1024, batch, eff, fp8_only).memory_bytes["weights"]
    # Exact: BF16 (2 B) + two FP8 copies (2 B) against the two FP8 copies alone.
    assert lean == pytest.approx(
        keep * eff.memory.fp8_weight_copy_bytes / (2.0 + eff.memory.fp8_weight_copy_bytes)
    )


def test_fp8_primary_weights_by_recipe() -> None:
    # Megatron-Bridge keeps FP8-only weights under its per-tensor and MXFP8 recipes and BF16
    # weights beside the FP8 copies under the block-scaled one: 2 bytes per parameter apart.
    eff = Efficiency()
    codes = np.array([PRECISION[n] for n in ("bf16", "fp8", "mxfp8", "fp8-block")])
    plain = weight_bytes_per_param(eff, Stack(), codes)
    bridge = dataclasses.replace(
        Stack(), fp8_primary_weights=True, fp8_block_keeps_bf16_weights=True
    )
    primary = weight_bytes_per_param(eff, bridge, codes)
    copies = eff.memory.fp8_weight_copy_bytes
    assert list(plain) == [2.0, 2.0 + copies, 2.0 + copies, 2.0 + copies]
    assert list(primary) == [2.0, copies, copies, 2.0 + copies]
