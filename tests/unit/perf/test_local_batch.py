"""Gradient accumulation outside the pipeline schedule (``ParallelPlan.local_batch`` with
``Stack.pipeline_schedule_per_local_batch``): one schedule, fill and drain included, per
forward-backward call; the micro-batches' own work is the same."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from scalewall import catalog
from scalewall.cluster import resolve_cluster
from scalewall.errors import SpecError
from scalewall.perf.assumptions import Efficiency
from scalewall.perf.batch import PlanBatch
from scalewall.perf.step import step_model
from scalewall.plan.plan import ParallelPlan, validate
from scalewall.stack import resolve_stack

MODEL = catalog.model("llama3-70b")


BASE = ParallelPlan(tp=8, pp=4, dp=8, global_batch=256, seq_len=4096, recompute="full")
"""Llama 3 70B on 256 H100: 32 sequences per replica, 32 micro-batches of 1 a step."""


def _plan(**kw: Any) -> ParallelPlan:
    return dataclasses.replace(BASE, **kw)


def _run(plans: list[ParallelPlan], stack_id: str):  # type: ignore[no-untyped-def]
    cluster = resolve_cluster(None, gpu="h100-sxm-80gb", gpus=256)
    batch = PlanBatch.from_plans(MODEL, plans)
    return step_model(MODEL, cluster, batch, Efficiency(), resolve_stack(stack_id))


def test_each_local_batch_pays_its_own_fill_and_drain() -> None:
    # 32 sequences per replica: one call, or 4 calls of 8 (gradient accumulation 4).
    plans = [_plan(), _plan(local_batch=32), _plan(local_batch=8)]
    out = _run(plans, "torchtitan-fsdp2")
    bubble = out.breakdown_s["pipeline_bubble"]
    assert bubble[0] > 0.0
    assert bubble[1] == pytest.approx(bubble[0])
    assert bubble[2] == pytest.approx(4.0 * bubble[0])
    others = [k for k in out.breakdown_s if k != "pipeline_bubble"]
    for key in others:
        np.testing.assert_allclose(out.breakdown_s[key][2], out.breakdown_s[key][0], rtol=1e-12)


def test_a_stack_with_one_schedule_per_step_ignores_the_local_batch() -> None:
    stack = resolve_stack("megatron-core")
    assert not stack.pipeline_schedule_per_local_batch
    out = _run([_plan(), _plan(local_batch=8)], "megatron-core")
    np.testing.assert_allclose(out.step_time_s[1], out.step_time_s[0], rtol=1e-12)


def test_without_a_pipeline_the_local_batch_costs_nothing() -> None:
    plans = [_plan(pp=1, dp=32, tp=8), _plan(pp=1, dp=32, tp=8, local_batch=2)]
    out = _run(plans, "torchtitan-fsdp2")
    np.testing.assert_allclose(out.step_time_s[1], out.step_time_s[0], rtol=1e-12)


@pytest.mark.parametrize("local_batch", [3, 64, -8])
def test_a_local_batch_that_does_not_split_the_replica_batch_is_refused(local_batch: int) -> None:
    with pytest.raises(SpecError, match="local_batch"):
        validate(MODEL, _plan(micro_batch=2, local_batch=local_batch), 256)


def test_the_torch_pipelining_stacks_run_a_schedule_per_local_batch() -> None:
    for stack_id in ("torchtitan-fsdp2", "torchtitan-fsdp2-compile", "nemo-automodel"):
        assert resolve_stack(stack_id).pipeline_schedule_per_local_batch
