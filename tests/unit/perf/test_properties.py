"""Invariants of the step model over random valid plans (Hypothesis)."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from scalewall import catalog
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.perf.batch import PlanBatch
from scalewall.perf.step import step_model
from scalewall.plan.plan import ParallelPlan
from scalewall.plan.topology import make_cluster

MODEL = catalog.model("llama3-8b")  # 32 layers, 32 heads, 8 kv heads
SYSTEM = catalog.system("dgx-h100")


def cluster(gpus: int, nic_scale: float = 1.0):  # type: ignore[no-untyped-def]
    system = dataclasses.replace(SYSTEM, nic_bytes_per_s=SYSTEM.nic_bytes_per_s * nic_scale)
    return make_cluster(system=system, fabric=catalog.fabric("ndr-rail-3tier"), num_gpus=gpus)


plans = st.builds(
    lambda tp, pp, dp, mb, per, rc, zero, sp: ParallelPlan(
        tp=tp,
        pp=pp,
        dp=dp,
        micro_batch=mb,
        global_batch=dp * mb * per * pp,
        seq_len=4096,
        recompute=rc,
        zero=zero,
        sequence_parallel=sp,
    ),
    tp=st.sampled_from([1, 2, 4, 8]),
    pp=st.sampled_from([1, 2, 4]),
    dp=st.sampled_from([1, 2, 4, 16]),
    mb=st.sampled_from([1, 2]),
    per=st.sampled_from([1, 4]),
    rc=st.sampled_from(["none", "selective", "full"]),
    zero=st.integers(0, 3),
    sp=st.booleans(),
)


@settings(max_examples=60, deadline=None)
@given(plan=plans, scale=st.floats(1.0, 8.0))
def test_more_network_bandwidth_never_slows_a_step(plan: ParallelPlan, scale: float) -> None:
    gpus = plan.num_gpus
    batch = PlanBatch.from_plans(MODEL, [plan])
    slow = step_model(MODEL, cluster(gpus), batch, Efficiency(), Stack())
    fast = step_model(MODEL, cluster(gpus, scale), batch, Efficiency(), Stack())
    assert fast.step_time_s[0] <= slow.step_time_s[0] * (1 + 1e-12)


@settings(max_examples=60, deadline=None)
@given(plan=plans)
def test_memory_per_gpu_never_grows_with_more_tp_or_pp(plan: ParallelPlan) -> None:
    variants = [plan]
    if plan.tp < 8:
        variants.append(dataclasses.replace(plan, tp=plan.tp * 2))
    if plan.pp < 4:
        variants.append(
            dataclasses.replace(plan, pp=plan.pp * 2, global_batch=plan.global_batch * 2)
        )
    for variant in variants[1:]:
        pair = PlanBatch.from_plans(MODEL, [plan, variant])
        out = step_model(
            MODEL, cluster(max(plan.num_gpus, variant.num_gpus)), pair, Efficiency(), Stack()
        )
        assert out.memory_total_bytes[1] <= out.memory_total_bytes[0] * (1 + 1e-12)
