"""Activation offloading (``offload_layers``): what it saves in HBM, what its copies cost, the
rules Megatron-Core puts on it, and the fewest layers a plan needs to fit."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from scalewall import catalog
from scalewall.cluster import resolve_cluster
from scalewall.errors import SpecError
from scalewall.perf.assumptions import Efficiency
from scalewall.perf.batch import PlanBatch
from scalewall.perf.memory import host_bytes_per_gpu, offload_to_fit
from scalewall.perf.step import step_model
from scalewall.plan.plan import ParallelPlan, validate, validate_for_stack
from scalewall.search import SearchSpace, search
from scalewall.stack import resolve_stack

MODEL = catalog.model("llama3-70b")
STACK = resolve_stack("megatron-bridge")


def _plan(**kw: object) -> ParallelPlan:
    base = dict(
        tp=1, pp=1, dp=64, micro_batch=2, global_batch=256, seq_len=8192, recompute="none",
        zero=3, sequence_parallel=False, precision="fp8",
    )  # fmt: skip
    return ParallelPlan(**{**base, **kw})  # type: ignore[arg-type]


def _run(plans: list[ParallelPlan], gpu: str = "gb300", stack=STACK):  # type: ignore[no-untyped-def]
    cluster = resolve_cluster(None, gpu=gpu, gpus=64)
    batch = PlanBatch.from_plans(MODEL, plans)
    return cluster, batch, step_model(MODEL, cluster, batch, Efficiency(), stack)


def test_offloading_takes_each_layer_but_the_one_in_flight_out_of_hbm() -> None:
    plans = [_plan(), _plan(offload_layers=1), _plan(offload_layers=2), _plan(offload_layers=21)]
    _, _, out = _run(plans)
    acts = out.memory_bytes["activations"]
    assert acts[1] == pytest.approx(acts[0])  # the one layer is still being copied
    one_layer = acts[0] - acts[2]
    assert one_layer > 0.0
    assert acts[0] - acts[3] == pytest.approx(20 * one_layer)
    assert not out.fits[0] and out.fits[3]


def test_copies_hide_behind_compute_on_a_fast_link_and_show_on_a_slow_one() -> None:
    plans = [_plan(), _plan(offload_layers=20)]
    _, _, fast = _run(plans, "gb300")  # NVLink-C2C, 450 GB/s each way
    assert fast.breakdown_s["offload"][1] == 0.0
    assert fast.step_time_s[1] == pytest.approx(fast.step_time_s[0])
    slow_system = dataclasses.replace(
        catalog.system("gb300-nvl72"), host_link_bytes_per_s_per_gpu=8e9
    )
    cluster = resolve_cluster(None, gpu="gb300", gpus=64)
    cluster = dataclasses.replace(cluster, system=slow_system)
    batch = PlanBatch.from_plans(MODEL, plans)
    slow = step_model(MODEL, cluster, batch, Efficiency(), STACK)
    exposed = slow.breakdown_s["offload"][1]
    assert exposed > 0.0
    # The stalls lengthen the layers FSDP's collectives hide behind, so the step grows by a
    # little less than the exposed copies.
    grown = slow.step_time_s[1] - slow.step_time_s[0]
    assert 0.9 * exposed <= grown <= exposed


def test_megatron_core_rules() -> None:
    validate(MODEL, _plan(offload_layers=79), 64)
    with pytest.raises(SpecError, match="offload_layers"):
        validate(MODEL, _plan(offload_layers=80), 64)
    with pytest.raises(SpecError, match="pipeline"):
        validate(MODEL, _plan(pp=2, dp=32, offload_layers=4), 64)
    with pytest.raises(SpecError, match="recompute"):
        validate(MODEL, _plan(recompute="full", offload_layers=4), 64)
    with pytest.raises(SpecError, match="does not offload"):
        validate_for_stack(_plan(offload_layers=4), resolve_stack("torchtitan-fsdp2"))


def test_fewest_layers_that_fit() -> None:
    cluster, batch, _ = _run([_plan(), _plan(micro_batch=1)])
    hbm = cluster.accelerator.hbm_capacity_bytes
    host = host_bytes_per_gpu(
        cluster.system.host_memory_bytes, cluster.system.gpus_per_node, Efficiency()
    )
    need = offload_to_fit(MODEL, batch, Efficiency(), STACK, hbm, host)
    assert need[0] > 0 and need[1] == 0  # micro-batch 1 fits as it is
    k = int(need[0])
    _, _, fitted = _run([_plan(offload_layers=k), _plan(offload_layers=k - 1)])
    assert fitted.fits[0] and not fitted.fits[1]
    # Not where the host memory cannot hold the offloaded layers, nor on a stack without it.
    none_left = offload_to_fit(MODEL, batch, Efficiency(), STACK, hbm, host_bytes=1e9)
    assert not none_left.any()
    titan = resolve_stack("torchtitan-fsdp2")
    assert not offload_to_fit(MODEL, batch, Efficiency(), titan, hbm, host).any()


def test_host_memory_bounds_a_stated_count() -> None:
    small = dataclasses.replace(catalog.system("gb300-nvl72"), host_memory_bytes=40e9)
    cluster = dataclasses.replace(resolve_cluster(None, gpu="gb300", gpus=64), system=small)
    batch = PlanBatch.from_plans(MODEL, [_plan(offload_layers=30)])
    out = step_model(MODEL, cluster, batch, Efficiency(), STACK)
    assert out.memory_total_bytes[0] < cluster.accelerator.hbm_capacity_bytes
    assert not out.fits[0]


def test_search_offloads_only_where_the_stack_can() -> None:
    space = SearchSpace(pp_values=(1,), recompute=("none",), zero=(3,), precisions=("fp8",))
    common = dict(model="llama3-70b", gpu="gb300", gpus=64, global_batch=256, seq_len=8192)
    found = search(**common, stack="megatron-bridge", space=space, top_k=3)  # type: ignore[arg-type]
    assert found.top and any(t.plan.offload_layers > 0 for t in found.top)
    assert all(t.memory_total_bytes <= t.hbm_bytes for t in found.top)
    assert np.all(np.isfinite([t.step_time_s for t in found.top]))
    # The same space without offloading keeps only the plans that fit as they are.
    plain = search(
        **common,  # type: ignore[arg-type]
        stack="megatron-bridge",
        space=dataclasses.replace(space, offload=False),
        top_k=3,
    )
    assert all(t.plan.offload_layers == 0 for t in plain.top)
    assert plain.counts.pruned_memory > found.counts.pruned_memory
    titan = search(**common, stack="torchtitan-fsdp2", space=space, top_k=3)  # type: ignore[arg-type]
    assert all(t.plan.offload_layers == 0 for t in titan.top)
