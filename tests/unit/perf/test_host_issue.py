"""Host-bound kernel issue: the CPU's time to issue a layer's operations against its GPU time."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from scalewall import catalog
from scalewall.api import estimate
from scalewall.cluster import resolve_cluster
from scalewall.errors import SpecError
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.perf.batch import PlanBatch
from scalewall.perf.layers import host_issue_s
from scalewall.perf.step import step_model
from scalewall.plan.plan import ParallelPlan
from scalewall.validation.runs import case_stack
from scalewall.workload.counts import MOE

EFF = Efficiency()


def _plan(**changes: object) -> ParallelPlan:
    base: dict[str, object] = dict(
        tp=1,
        pp=16,
        dp=16,
        ep=8,
        micro_batch=1,
        global_batch=4096,
        seq_len=4096,
        first_stage_layers=4,
        last_stage_layers=1,
        precision="mxfp8",
    )
    base.update(changes)
    return ParallelPlan(**base)  # type: ignore[arg-type]


def test_issue_time_counts_attention_moe_and_local_experts() -> None:
    """DeepSeek-V3 MoE layer, EP 8: 256 / 8 = 32 local experts. Forward operations: attention
    24 + MLA 12, MoE routing and dispatch 40, 2 per local expert (64), the shared expert's MLP
    12: 152. Router capture takes the router and preprocessing (16) out: 136; attention
    capture the attention block as well: 40 - 16 + 64 + 12 = 100; layer or full capture
    none."""
    model = catalog.model("deepseek-v3")
    batch = PlanBatch.from_plans(model, [_plan()])

    def ops(scope: str) -> float:
        issue = host_issue_s(model, batch, EFF, Stack(cuda_graphs=scope), MOE)
        return float(issue[0]) / EFF.host.host_op_s

    assert ops("none") == pytest.approx(152)
    assert ops("router") == pytest.approx(136)
    assert ops("attention") == pytest.approx(100)
    for scope in ("layer", "full"):
        assert float(host_issue_s(model, batch, EFF, Stack(cuda_graphs=scope), MOE)[0]) == 0.0
    # EP 64 leaves 4 local experts: 24 + 12 + 40 + 8 + 12 = 96.
    wide = PlanBatch.from_plans(
        model, [_plan(pp=4, dp=64, ep=64, first_stage_layers=15, last_stage_layers=14)]
    )
    assert float(host_issue_s(model, wide, EFF, Stack(), MOE)[0]) == pytest.approx(
        96 * EFF.host.host_op_s
    )


def test_host_time_shows_only_where_it_exceeds_the_gpu_time() -> None:
    """With a 1 ms per operation host (far slower than any GPU kernel here) the step is host
    bound and CUDA graphs of the whole iteration remove the loss; at the default per-operation
    time a large-batch dense layer on H100 keeps the GPU busier than the host."""
    cluster = resolve_cluster(gpu="b200", gpus=256)
    slow = EFF.replace(host_op_s=1e-3)
    eager = estimate("deepseek-v3", cluster, _plan(), efficiency=slow)
    graphed = estimate(
        "deepseek-v3", cluster, _plan(), efficiency=slow, stack=Stack(cuda_graphs="full")
    )
    assert eager.breakdown["host_overhead"] > 0.5 * eager.step_time_s
    assert graphed.breakdown["host_overhead"] == 0.0
    assert eager.step_time_s > 2.0 * graphed.step_time_s
    dense = estimate(
        "llama3-70b",
        resolve_cluster(gpu="h100-sxm-80gb", gpus=64),
        ParallelPlan(tp=4, pp=4, dp=4, micro_batch=1, global_batch=128, seq_len=8192),
    )
    assert dense.breakdown["host_overhead"] == 0.0


def test_a_case_states_the_cuda_graph_scope_as_a_stack_override() -> None:
    assert case_stack("megatron-bridge-moe").cuda_graphs == "none"
    for scope in ("router", "attention", "layer", "full"):
        stated = {"preset": "megatron-bridge-moe", "overrides": {"cuda_graphs": scope}}
        assert case_stack(stated).cuda_graphs == scope
    with pytest.raises(SpecError, match="cuda_graphs"):
        case_stack({"preset": "megatron-bridge-moe", "overrides": {"cuda_graphs": "all"}})


def test_unknown_cuda_graph_scope_is_rejected() -> None:
    with pytest.raises(SpecError, match="cuda_graphs"):
        Stack(cuda_graphs="everything")


def test_a_batch_gives_each_plan_its_own_result() -> None:
    """Layer times are computed once per distinct layer configuration and shared: every plan
    of a mixed batch gets what it gets alone."""
    model = catalog.model("mixtral-8x22b")
    cluster = resolve_cluster(gpu="h100-sxm-80gb", gpus=256)
    plans = [
        ParallelPlan(
            tp=tp,
            pp=pp,
            dp=256 // (tp * pp),
            ep=ep,
            micro_batch=mb,
            global_batch=512,
            seq_len=4096,
            recompute=rc,
            zero=z,
        )
        for tp, pp, ep, mb, rc, z in [
            (1, 8, 8, 1, "full", 1),
            (2, 8, 8, 1, "full", 1),
            (1, 8, 8, 2, "selective", 0),
            (1, 4, 8, 1, "full", 1),
            (1, 8, 8, 1, "full", 0),
            (4, 4, 4, 1, "selective", 1),
        ]
    ]
    batch = PlanBatch.from_plans(model, plans)
    together = step_model(model, cluster, batch, EFF, Stack())
    for i, plan in enumerate(plans):
        alone = step_model(model, cluster, PlanBatch.from_plans(model, [plan]), EFF, Stack())
        assert together.step_time_s[i] == pytest.approx(alone.step_time_s[0], rel=1e-12)
        for part, values in together.breakdown_s.items():
            assert values[i] == pytest.approx(alone.breakdown_s[part][0], rel=1e-12, abs=1e-15)


def test_constants_given_per_row_pair_with_their_rows() -> None:
    """Calibration's interval passes one value of a constant per row of a batch of the same
    plan: each row must keep its own value (a faster GEMM ceiling, a shorter step)."""
    model = catalog.model("llama3-8b")
    cluster = resolve_cluster(gpu="h100-sxm-80gb", gpus=8)
    plan = ParallelPlan(tp=1, pp=1, dp=8, micro_batch=1, global_batch=64, seq_len=8192)
    batch = PlanBatch.from_plans(model, [plan, plan, plan])
    draws = EFF.replace(gemm_sustained_ratio=np.array([0.8, 0.9, 1.0]))
    out = step_model(model, cluster, batch, draws, Stack())
    assert out.step_time_s[0] > out.step_time_s[1] > out.step_time_s[2]


def test_dropless_host_sync_exposes_the_issue_time_after_it() -> None:
    """Qwen3-30B-A3B on 8 B200, EP 8, three sequences of 3,072 tokens per micro-batch,
    attention and router in CUDA graphs: the layer's GPU time covers its host time in total,
    but the routed experts are issued slower than they run. With the dispatcher's host sync
    the GPU waits for their issue, so the forward loses the post-sync issue time beyond the
    post-sync GPU time; without the sync, or with capacity-padded buffers, nothing shows."""
    from scalewall.perf.compute import Device
    from scalewall.perf.layers import layer_times, post_sync_host_s

    model = catalog.model("qwen3-30b-a3b")
    cluster = resolve_cluster(gpu="b200", gpus=8)
    plan = ParallelPlan(
        tp=1, pp=1, dp=8, ep=8, micro_batch=3, global_batch=480, seq_len=3072, precision="mxfp8"
    )
    batch = PlanBatch.from_plans(model, [plan])
    dev = Device.of(cluster.accelerator, batch.precision, EFF)
    # DeepEP's dispatcher, as Megatron-Bridge's Qwen3-30B presets run it: its NVLink kernels
    # keep the exchange short enough that the experts' issue outlasts their GPU time.
    graphed = Stack(cuda_graphs="attention", moe_token_dispatcher="flex")
    # 16 local experts: 40 - 16 + 2 x 16 = 56 operations after the sync.
    assert float(post_sync_host_s(model, batch, EFF, graphed)[0]) == pytest.approx(
        56 * EFF.host.host_op_s
    )
    synced = layer_times(model, cluster, batch, dev, EFF, graphed, MOE)
    free = dataclasses.replace(graphed, moe_host_sync=False)
    unsynced = layer_times(model, cluster, batch, dev, EFF, free, MOE)
    assert float(unsynced.fwd_host[0]) == 0.0
    assert float(synced.fwd_host[0]) > 0.0
    assert np.array_equal(synced.bwd_host, unsynced.bwd_host)
    # Capacity-padded buffers need no sync: the host time exposed is the unsynced one.
    padded = dataclasses.replace(graphed, moe_capacity_factor=1.0)
    padded_free = dataclasses.replace(padded, moe_host_sync=False)
    assert np.array_equal(
        layer_times(model, cluster, batch, dev, EFF, padded, MOE).fwd_host,
        layer_times(model, cluster, batch, dev, EFF, padded_free, MOE).fwd_host,
    )
