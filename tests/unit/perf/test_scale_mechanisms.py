"""Scale-wall mechanisms: each grows with the job where the physics says it must."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from scalewall import catalog
from scalewall.catalog.schema import ModelSpec
from scalewall.cluster import resolve_cluster
from scalewall.errors import ScalewallError
from scalewall.perf import collectives as coll
from scalewall.perf import data_parallel, pipeline, step
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.perf.batch import PlanBatch
from scalewall.perf.step import StepArrays
from scalewall.plan.plan import ParallelPlan
from scalewall.stack import preset


def _cluster(gpus: int):  # type: ignore[no-untyped-def]
    return resolve_cluster(None, gpu="h100-sxm-80gb", gpus=gpus)


def test_fsdp_exposure_grows_with_group_at_fixed_per_gpu_work() -> None:
    # Same per-GPU compute and parameters per layer; only the FSDP group grows: per-layer
    # collectives pay (n - 1) ring-step latencies, so the exposed time must grow.
    eff, stack = Efficiency(), Stack(name="fsdp")
    layers, params = np.array([32.0]), np.array([7e9])
    t_f, t_b = np.array([0.05]), np.array([0.10])
    exposed = [
        float(
            data_parallel.fsdp_exposed_s(
                _cluster(n),
                eff,
                stack,
                (np.array([float(n)]), np.array([1.0]), params),
                (layers, t_f, t_b),
            )[0]
        )
        for n in (128, 512)
    ]
    assert exposed[1] > exposed[0] > 0.0


def test_dp_exposure_never_below_what_one_backward_leaves() -> None:
    # Plain 1F1B hides the reduction behind the last backward only; interleaving hides more
    # of a long reduction (earlier chunks finish during the cool-down) but never chunk 0's
    # share beyond its own backward.
    comm, stage_b = np.array([10.0, 10.0]), np.array([2.0, 2.0])
    pp, vpp = np.array([8.0, 8.0]), np.array([1.0, 4.0])
    exposed = data_parallel.schedule_exposed_s(comm, stage_b, pp, vpp)
    assert exposed[0] == pytest.approx(comm[0] - stage_b[0])
    assert exposed[1] >= comm[1] / vpp[1] - stage_b[1] / vpp[1]
    assert exposed[1] < exposed[0]


def test_step_sync_grows_with_job_size() -> None:
    eff = Efficiency()
    small = data_parallel.step_sync_s(_cluster(256), eff, np.array([256.0]))[0]
    large = data_parallel.step_sync_s(_cluster(16384), eff, np.array([16384.0]))[0]
    assert large > small > 0.0


def test_new_parts_are_in_the_breakdown() -> None:
    assert "fsdp_comm" in step.BREAKDOWN_PARTS and "step_sync" in step.BREAKDOWN_PARTS
    assert catalog.accelerator("h100-sxm-80gb").id == "h100-sxm-80gb"


def test_ring_latency_of_a_small_all_gather_grows_with_every_rank() -> None:
    """NCCL's all-gather is one ring over all ranks: n - 1 step latencies, (n - nodes) of them
    inside a node and (nodes - 1) across. A 1 KiB all-gather is latency-bound, so 4x the ranks
    costs about 4x the steps (a tier-by-tier algorithm would pay only a few more steps)."""
    eff = Efficiency()
    one = np.array([1.0])
    tiny = np.array([1024.0])

    def latency(n: int) -> float:
        cost = coll.allgather_time_s(_cluster(n), eff, np.array([float(n)]), one, tiny)
        return float(cost[0]) - eff.comm.collective_launch_s

    small, large = latency(128), latency(512)
    # 128 ranks on 16 nodes: 112 NVLink steps of ~1 us and 15 network steps of ~4.3 us.
    steps_128 = (
        112 * eff.comm.ring_step_latency_scale_up_s + 15 * eff.comm.ring_step_latency_scale_out_s
    )
    assert small == pytest.approx(steps_128, rel=0.1)
    assert large / small == pytest.approx(4.0, rel=0.15)


def _fsdp(stack: Stack, gpus: int = 512) -> StepArrays:
    from scalewall.perf.batch import PlanBatch
    from scalewall.plan.plan import ParallelPlan

    model = catalog.model("llama2-7b")
    plan = ParallelPlan(
        tp=1,
        pp=1,
        dp=gpus,
        micro_batch=2,
        global_batch=2 * gpus,
        seq_len=4096,
        zero=3,
        recompute="none",
        sequence_parallel=False,
    )
    batch = PlanBatch.from_plans(model, [plan])
    return step.step_model(model, _cluster(gpus), batch, Efficiency(), stack)


def test_hybrid_sharding_keeps_per_layer_collectives_in_the_node() -> None:
    """HYBRID_SHARD over 8 ranks: the optimizer state is 64x a full shard's over 512 ranks,
    the per-layer gathers run over NVLink, and the gradient shards cross nodes once."""
    from scalewall.stack import preset

    full = _fsdp(preset("pytorch-fsdp-full-shard"))
    hybrid = _fsdp(preset("pytorch-fsdp-hybrid-shard"))
    ratio = hybrid.memory_bytes["optimizer_state"][0] / full.memory_bytes["optimizer_state"][0]
    assert ratio == pytest.approx(512 / 8, rel=1e-9)
    assert hybrid.breakdown_s["fsdp_comm"][0] < full.breakdown_s["fsdp_comm"][0]
    # One replica is plain ZeRO-3: the hybrid stack on 8 GPUs equals the full shard.
    small_full = _fsdp(preset("pytorch-fsdp-full-shard"), 8)
    small_hybrid = _fsdp(preset("pytorch-fsdp-hybrid-shard"), 8)
    assert small_hybrid.step_time_s[0] == small_full.step_time_s[0]


def test_keeping_parameters_after_forward_saves_the_backward_gather() -> None:

    from scalewall.stack import preset

    twice = preset("pytorch-fsdp-full-shard")
    once = dataclasses.replace(twice, zero3_gathers_per_micro_batch=1.0)
    slow, fast = _fsdp(twice, 64), _fsdp(once, 64)
    assert fast.breakdown_s["fsdp_comm"][0] <= slow.breakdown_s["fsdp_comm"][0]
    assert fast.step_time_s[0] <= slow.step_time_s[0]


def _hashed_cluster():  # type: ignore[no-untyped-def]
    # 12,288 A100 on RoCE: leaf 256 GPUs, spine 2,048, core 12,288, spine and core hashed.
    from scalewall.validation.runs import case_cluster, read_runs, scaling_runs_path

    case = next(c for c in read_runs(scaling_runs_path()) if c.hardware["gpus"] == 12288)
    return case_cluster(case.hardware)


def test_hash_slowdown_is_the_busiest_path_at_full_share_and_nothing_when_light() -> None:
    eff = Efficiency()
    spine = _hashed_cluster().tiers[2]
    assert spine.hashed_paths > 1
    full = float(coll.hash_slowdown(spine, eff, np.array([1.0]))[0])
    # Balls into bins at s = 1: 1 + sqrt(2 ln U / k) (Raab and Steger 1998).
    expected = 1.0 + np.sqrt(2.0 * np.log(spine.hashed_paths) / eff.comm.ecmp_flows_per_path)
    assert full == pytest.approx(expected, rel=1e-12)
    light = float(coll.hash_slowdown(spine, eff, np.array([1.0 / 32.0]))[0])
    assert light == 1.0


def test_a_ring_with_one_rank_per_leaf_pays_the_collision_on_its_whole_message() -> None:
    """A group whose every rank sits under its own leaf crosses the spine on every hop: the
    whole message is slowed by the busiest path, not only the residue after the leaf."""
    eff, cluster = Efficiency(), _hashed_cluster()
    n, big = np.array([8.0]), np.array([1e9])
    stride = np.array([256.0])  # one rank per leaf, all under one spine
    hashed = coll.allreduce_time_s(cluster, eff, n, stride, big)[0]
    adaptive = eff.replace(ecmp_flows_per_path=1e30)
    clean = coll.allreduce_time_s(cluster, adaptive, n, stride, big)[0]
    spine = cluster.tiers[2]
    slowdown = float(coll.hash_slowdown(spine, eff, np.array([1.0]))[0])
    # Bandwidth-bound: the time scales with the slowdown (launch and latency are < 0.1%).
    assert hashed / clean == pytest.approx(slowdown, rel=0.01)


def test_a_ring_that_stays_mostly_in_its_leaf_pays_no_collision() -> None:
    eff, cluster = Efficiency(), _hashed_cluster()
    n, big, stride = np.array([192.0]), np.array([1e9]), np.array([8.0])  # 32 ranks per leaf
    adaptive = eff.replace(ecmp_flows_per_path=1e30)
    hashed = coll.allreduce_time_s(cluster, eff, n, stride, big)[0]
    clean = coll.allreduce_time_s(cluster, adaptive, n, stride, big)[0]
    assert hashed == pytest.approx(clean, rel=1e-12)


def test_host_stalls_amplify_with_the_synchronised_group_then_saturate() -> None:
    """Duty 2e-4 in 5 ms stalls: f = 0.04 stalls/s per rank. 96 synchronisations over 1.2 s of
    work (dt = 12.5 ms): at n ranks each is late by 5 ms x (1 - exp(-n 0.04 x 0.0125)).
    n = 128: 1 - exp(-0.064) = 0.0620 -> 96 x 5 ms x 0.0620 = 29.8 ms (2.5% of the work, near
    the linear n x duty = 2.56%); n = 512: 1 - exp(-0.256) = 0.2259 -> 108.4 ms; n = 10^5:
    every interval late by a whole stall, 96 x 5 ms = 480 ms."""
    eff = Efficiency()
    covered, syncs = np.array([1.2]), np.array([96.0])

    def noise(n: float) -> float:
        return float(step.sync_noise_s(covered, syncs, np.array([n]), eff)[0])

    assert noise(128) == pytest.approx(96 * 5e-3 * -np.expm1(-128 * 0.04 * 0.0125), rel=1e-9)
    assert noise(128) == pytest.approx(0.0298, abs=2e-4)
    assert noise(512) == pytest.approx(0.1084, abs=3e-4)
    assert noise(1e5) == pytest.approx(0.480, rel=1e-6)


def test_per_layer_sharding_couples_every_data_parallel_rank() -> None:
    """FSDP (ZeRO-3, or ZeRO-2 in a per-layer stack) ties each layer to the whole data-parallel
    group; Megatron's bucketed distributed optimizer ties a layer only to its TP group."""
    from scalewall.perf.batch import PlanBatch
    from scalewall.plan.plan import ParallelPlan
    from scalewall.stack import preset

    model = catalog.model("llama3-8b")
    fsdp = ParallelPlan(tp=1, pp=1, dp=512, micro_batch=2, global_batch=1024, zero=3)
    grad_op = dataclasses.replace(fsdp, zero=2)
    megatron = ParallelPlan(tp=8, pp=1, dp=64, micro_batch=2, global_batch=1024, zero=1)

    def ranks(plan: ParallelPlan, stack: str) -> float:
        batch = PlanBatch.from_plans(model, [plan])
        return float(step.coupled_ranks(model, batch, preset(stack))[0])

    assert ranks(fsdp, "llm-foundry") == 512
    assert ranks(grad_op, "pytorch-fsdp-shard-grad-op") == 512
    assert ranks(grad_op, "deepspeed-zero2") == 1
    assert ranks(megatron, "megatron-core") == 8


def _pipeline_model() -> ModelSpec:
    return catalog.model("gpt3-175b")


def _plan(pp: int = 8, precision: str = "bf16", global_batch: int = 512) -> ParallelPlan:
    return ParallelPlan(
        tp=8,
        pp=pp,
        dp=8,
        micro_batch=1,
        global_batch=global_batch,
        seq_len=2048,
        zero=1,
        recompute="full",
        sequence_parallel=False,
        precision=precision,
    )


def _pipeline(
    stack: Stack,
    precision: str = "bf16",
    global_batch: int = 512,
    model: ModelSpec | None = None,
) -> StepArrays:
    model = model or _pipeline_model()
    batch = PlanBatch.from_plans(model, [_plan(8, precision, global_batch)])
    cluster = resolve_cluster(None, gpu="a100-sxm-80gb", gpus=512)
    return step.step_model(model, cluster, batch, Efficiency(), stack)


def test_unfused_gradient_accumulation_costs_a_pass_per_micro_batch() -> None:
    # A hook adding each micro-batch's 16-bit gradient into an FP32 buffer moves 2 + 4 + 4
    # bytes per parameter: a pass over the stage's parameters once per micro-batch, in the
    # backward and so in the pipeline bubble too.
    fused = _pipeline(Stack())
    hook = _pipeline(dataclasses.replace(Stack(), grad_accumulation="hook"))
    part = float(hook.breakdown_s["grad_accumulation"][0])
    assert float(fused.breakdown_s["grad_accumulation"][0]) == 0.0
    assert part > 0.0
    assert float(hook.step_time_s[0]) > float(fused.step_time_s[0]) + part
    double = _pipeline(dataclasses.replace(Stack(), grad_accumulation="hook"), global_batch=1024)
    assert float(double.breakdown_s["grad_accumulation"][0]) == pytest.approx(2.0 * part)


def test_deepspeed_bf16_accumulation_is_three_times_the_fp16_one() -> None:
    precision = np.array([0.0, 1.0])  # PRECISIONS: bf16, fp16
    stack = dataclasses.replace(Stack(), grad_accumulation="deepspeed")
    bf16, fp16 = data_parallel.grad_accumulation_bytes(stack, precision)
    assert (bf16, fp16) == (18.0, 6.0)
    autograd = dataclasses.replace(Stack(), grad_accumulation="autograd")
    assert list(data_parallel.grad_accumulation_bytes(autograd, precision)) == [6.0, 6.0]
    hook = dataclasses.replace(Stack(), grad_accumulation="hook", grad_reduce_bytes=2.0)
    assert list(data_parallel.grad_accumulation_bytes(hook, precision)) == [6.0, 6.0]


def test_an_unknown_accumulation_mode_is_refused() -> None:
    from scalewall.errors import SpecError

    with pytest.raises(SpecError, match="grad_accumulation"):
        dataclasses.replace(Stack(), grad_accumulation="sometimes")


def test_a_zero1_all_reduce_sends_twice_the_reduce_scatter() -> None:
    # No overlap, so every collective is exposed: with 4-byte gradients and 2-byte parameters
    # the reduce-scatter step moves 4 + 2 bytes per parameter per ring step and the all-reduce
    # step 2 x 4 + 2, a ratio of 10 / 6.
    quiet = dataclasses.replace(Stack(), overlap_grad_reduce=False, overlap_param_gather=False)
    scatter = _pipeline(quiet)
    full = _pipeline(dataclasses.replace(quiet, zero1_grad_reduce="all-reduce"))
    rs = float(scatter.breakdown_s["dp_comm"][0])
    ar = float(full.breakdown_s["dp_comm"][0])
    assert rs > 0.0
    assert ar / rs == pytest.approx(10.0 / 6.0, rel=0.02)
    with pytest.raises(ScalewallError, match="zero1_grad_reduce"):
        dataclasses.replace(Stack(), zero1_grad_reduce="all-gather")


def test_tied_embeddings_add_one_all_reduce_between_the_end_stages() -> None:
    # The same pipeline with untied and tied embeddings: the tied one pays one all-reduce of
    # vocab x hidden / tp gradients over two ranks per step, in the pipeline part; no pipeline,
    # no sync.
    untied = _pipeline(Stack(), model=dataclasses.replace(_pipeline_model(), tied_embeddings=False))
    model = dataclasses.replace(_pipeline_model(), tied_embeddings=True)
    tied = _pipeline(Stack(), model=model)
    extra = float(tied.breakdown_s["pp_comm"][0] - untied.breakdown_s["pp_comm"][0])
    message = model.vocab * model.hidden / 8 * Stack().grad_reduce_bytes
    assert extra > 0.0
    # Two ranks in different nodes: a 2-rank ring sends the whole message once each way at
    # most at the NIC rate per GPU (25 GB/s on the DGX A100 default).
    assert extra >= message / 25e9 * 0.9
    single = pipeline.tied_embedding_sync_s(
        model, _cluster(64), PlanBatch.from_plans(model, [_plan(pp=1)]), Efficiency(), Stack()
    )
    assert float(single[0]) == 0.0


def test_unbatched_blocking_pipeline_transfers_cost_twice_the_batched_ones() -> None:
    # DeepSpeed's pipeline engine sends and receives one tensor per blocking call (four transfers
    # per micro-batch on a stage's path); Megatron batches each send with the opposite receive
    # (two). Without overlap the pipeline part doubles, less the tied-embedding sync both pay.
    from scalewall.stack import preset

    model = dataclasses.replace(_pipeline_model(), tied_embeddings=False)
    quiet = dataclasses.replace(Stack(), overlap_p2p=False)
    batched = _pipeline(quiet, model=model)
    blocking = _pipeline(
        dataclasses.replace(quiet, pp_p2p_transfers_per_micro_batch=4.0), model=model
    )
    two = float(batched.breakdown_s["pp_comm"][0])
    assert two > 0.0
    assert float(blocking.breakdown_s["pp_comm"][0]) == pytest.approx(2.0 * two, rel=1e-9)
    with pytest.raises(ScalewallError, match="pp_p2p_transfers_per_micro_batch"):
        dataclasses.replace(Stack(), pp_p2p_transfers_per_micro_batch=0.0)
    assert preset("megatron-deepspeed").pp_p2p_transfers_per_micro_batch == 4.0


def _pipelined_fsdp(mode: str, micro_batches: int) -> StepArrays:
    from scalewall.stack import preset

    stack = dataclasses.replace(preset("torchtitan-fsdp2"), fsdp_under_pipeline=mode)
    model = catalog.model("llama2-7b")
    plan = ParallelPlan(
        tp=1,
        pp=4,
        dp=16,
        micro_batch=1,
        global_batch=16 * micro_batches,
        seq_len=4096,
        zero=3,
        recompute="full",
        sequence_parallel=False,
    )
    batch = PlanBatch.from_plans(model, [plan])
    return step.step_model(model, _cluster(64), batch, Efficiency(), stack)


def test_fsdp_under_a_pipeline_reduces_once_per_step() -> None:
    # Every micro-batch gathering and reduce-scattering costs m times one micro-batch's
    # exposure; reduce-once pays the forward gathers m times and the reduce-scatter once;
    # gather-once pays both once.
    def fsdp(mode: str, m: int) -> float:
        return float(_pipelined_fsdp(mode, m).breakdown_s["fsdp_comm"][0])

    every = [fsdp("per-micro-batch", m) for m in (8, 16)]
    reduce_once = [fsdp("reduce-once", m) for m in (8, 16)]
    gather_once = [fsdp("gather-once", m) for m in (8, 16)]
    assert every[1] == pytest.approx(2.0 * every[0], rel=1e-9)
    assert gather_once[1] == pytest.approx(gather_once[0], rel=1e-9)
    assert gather_once[0] <= reduce_once[0] < every[0]
    assert reduce_once[1] - reduce_once[0] < every[1] - every[0]


def test_a_pipeline_that_keeps_fsdp_units_gathered_holds_its_stage_whole() -> None:
    every = _pipelined_fsdp("per-micro-batch", 8).memory_bytes
    kept = _pipelined_fsdp("reduce-once", 8).memory_bytes
    # The stage's BF16 weights and FP32 gradients, both whole: 2 and 4 bytes a parameter.
    assert kept["gradients"][0] == pytest.approx(2.0 * kept["weights"][0], rel=1e-9)
    assert kept["weights"][0] > every["weights"][0]
    assert kept["gradients"][0] == pytest.approx(16.0 * every["gradients"][0], rel=1e-9)
    assert kept["optimizer_state"][0] == pytest.approx(every["optimizer_state"][0], rel=1e-9)


def test_an_unknown_fsdp_pipeline_mode_is_refused() -> None:
    with pytest.raises(ScalewallError, match="fsdp_under_pipeline"):
        Stack(name="x", fsdp_under_pipeline="sometimes")


def test_megatron_core_buckets_grow_with_the_data_parallel_group() -> None:
    """Megatron-Core's default bucket is max(40M, 1M x dp) parameters per model chunk:
    1.95e9 parameters make 49 buckets at dp 8, 21 at dp 96 and 7 at dp 288; two chunks of a
    virtual pipeline each split their half. A stack without a bucket size keeps its count."""
    model = catalog.model("llama3-8b")
    base = ParallelPlan(tp=8, dp=8, global_batch=1152, seq_len=4096, micro_batch=1)
    plans = [dataclasses.replace(base, dp=dp) for dp in (8, 96, 288)]
    plans.append(dataclasses.replace(base, pp=2, vpp=2, dp=8))
    batch = PlanBatch.from_plans(model, plans)
    params = np.full(4, 1.95e9)
    counts = data_parallel.bucket_count(batch, preset("megatron-core"), params)
    assert counts.tolist() == [49.0, 21.0, 7.0, 50.0]
    fixed = preset("megatron-lm-2022")
    assert data_parallel.bucket_count(batch, fixed, params).tolist() == [8.0] * 4


def test_each_bucket_pays_the_ring_latency_so_the_reduction_grows_with_the_group() -> None:
    """Same parameters per rank, more replicas: Megatron-Core reduces in fewer, larger
    buckets, so the last bucket's exposed reduction grows, and each bucket's collective pays
    n - 1 ring steps: the buckets together cost more than one call for the whole message."""
    eff, stack = Efficiency(), preset("megatron-core")
    model = catalog.model("llama3-8b")
    params = np.array([1.95e9])
    window = np.array([0.12])
    times = []
    for dp in (96, 288):
        plan = ParallelPlan(tp=8, dp=dp, global_batch=4 * dp, seq_len=4096, micro_batch=4)
        comm, _ = data_parallel.dp_times(
            _cluster(8 * dp),
            PlanBatch.from_plans(model, [plan]),
            eff,
            stack,
            (params, np.zeros(1)),
            (window, 2.0 * window),
            (np.array([32.0]), window, 2.0 * window),
            np.array([1.0]),
        )
        times.append(float(comm[0]))
    assert times[1] > 1.5 * times[0] > 0.0
    cluster, group, stride = _cluster(2304), np.array([288.0]), np.array([8.0])
    grads = params * stack.grad_reduce_bytes
    whole = coll.reduce_scatter_time_s(cluster, eff, group, stride, grads)
    split = 7.0 * coll.reduce_scatter_time_s(cluster, eff, group, stride, grads / 7.0)
    assert split[0] > whole[0]
