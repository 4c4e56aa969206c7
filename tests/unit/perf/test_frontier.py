"""Mixture-of-experts, FP8 and long-context mechanisms, each against a hand-derived number."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from scalewall import catalog
from scalewall.api import estimate
from scalewall.cluster import resolve_cluster
from scalewall.errors import SpecError
from scalewall.perf import moe
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.perf.batch import PlanBatch
from scalewall.perf.collectives import expert_alltoall_time_s
from scalewall.perf.compute import Device, k_half, linear_time_s
from scalewall.plan.plan import PRECISIONS, ParallelPlan, validate
from scalewall.stack import preset

EFF = Efficiency()


def _one(x: float) -> np.ndarray:
    return np.array([x], dtype=np.float64)


def test_ep_inside_an_nvl72_domain_vs_across_nodes() -> None:
    """EP = 64 ranks, 1 apart, top-8 routing, 100 MB per copy of a rank's tokens.

    GB200 NVL72: all 64 ranks share one 72-GPU NVLink domain: 8 x 63/64 = 7.875 copies at
    NCCL's measured all-to-all bus bandwidth on NVLink 5, 383 GB/s -> 2.056 ms (+ 63 x 3.4 us
    ring steps + 20 us launch = 2.290 ms); DeepEP's forwarding kernels at the ring collectives'
    900 GB/s x 0.80 = 720 GB/s -> 1.094 ms (1.328 ms). Both at (64 / 8)^-0.115 = 0.787 of
    those rates: 64 ranks in one domain (HybridEP's rank sweep on GB200).
    H100, 8 per node: 7/64 of the peers on NVLink, 56/64 behind a 50 GB/s NIC at 0.92:
    7 copies x 100 MB / 46 GB/s = 15.2 ms with an all-to-all dispatcher. A per-node (DeepEP)
    dispatcher sends a token once to each of the 8 x (1 - (7/8)^8) = 5.25 nodes its 8 experts
    lie on on average, 7 x (1 - (7/8)^8) = 4.59 of them remote: 10.0 ms; node-limited to
    M = 4 nodes, at most 4 x 7/8 = 3.5 remote: 7.6 ms. An all-to-all dispatcher sends all
    7 remote copies whatever the routing limit."""
    # The hand-derived times are at the tiers' collective bandwidth; the all-to-all runs at
    # the fitted share of it.
    a2a = EFF.comm.expert_alltoall_bw_efficiency
    nvl72 = resolve_cluster(gpu="gb200", gpus=576)
    h100 = resolve_cluster(gpu="h100-sxm-80gb", gpus=1024)
    args = (_one(64.0), _one(1.0), _one(1e8), 8.0)
    inside = float(expert_alltoall_time_s(nvl72, EFF, *args, 0)[0])
    across = float(expert_alltoall_time_s(h100, EFF, *args, 0)[0])
    per_node = float(expert_alltoall_time_s(h100, EFF, *args, 0, True)[0])
    limited = float(expert_alltoall_time_s(h100, EFF, *args, 4, True)[0])
    unlimited_a2a = float(expert_alltoall_time_s(h100, EFF, *args, 4, False)[0])
    inside_flex = float(expert_alltoall_time_s(nvl72, EFF, *args, 4, True)[0])
    # 64 ranks of one domain: NCCL's all-to-all and HybridEP's kernels each lose bandwidth by
    # their own law past the measurements' 8.
    wide_nccl = (64 / 8) ** -EFF.comm.nccl_alltoall_peer_exponent
    wide = (64 / 8) ** -EFF.comm.expert_alltoall_peer_exponent
    assert inside == pytest.approx(
        7.875e8 / (3.83e11 * a2a * wide_nccl) + 63 * 3.4e-6 + 20e-6, rel=1e-9
    )
    # Latency terms (ring steps of 3.4-14 us, the launch: about 0.15 ms) are 1-1.5% of the
    # network time.
    assert across == pytest.approx(7e8 / (4.6e10 * a2a), rel=0.02)
    assert per_node == pytest.approx(7 * (1 - (7 / 8) ** 8) * 1e8 / (4.6e10 * a2a), rel=0.02)
    assert limited == pytest.approx(3.5e8 / (4.6e10 * a2a), rel=0.02)
    assert unlimited_a2a == pytest.approx(across, rel=1e-12)
    # Inside one NVLink domain nothing crosses the network: the dispatchers differ only by the
    # rate their kernels reach on NVLink.
    assert inside_flex == pytest.approx(
        7.875e8 / (7.2e11 * a2a * wide) + 63 * 3.4e-6 + 20e-6, rel=1e-9
    )
    assert across / inside > 4  # 4.5 with NCCL's 64-rank loss inside the domain


def test_group_limited_routing_is_the_models() -> None:
    """DeepSeek-V3 routes a token within 4 of 8 expert groups: at 64-way EP over 8-GPU nodes
    each group is one node, so the model's groups bound a per-node dispatcher as a stack's
    4-node limit does (3.5 remote nodes). A model without groups (Qwen3, top-8) reaches
    7 (1 - (7/8)^8) = 4.59 remote nodes on average; at 32-way EP over 8-GPU nodes the groups
    are half a node each, so 4 groups may still span all 4 nodes (the bound is 4, not 2)."""
    h100 = resolve_cluster(gpu="h100-sxm-80gb", gpus=1024)
    args = (_one(64.0), _one(1.0), _one(1e8), 8.0)
    by_model = float(expert_alltoall_time_s(h100, EFF, *args, 0, True, 8, 4)[0])
    by_stack = float(expert_alltoall_time_s(h100, EFF, *args, 4, True)[0])
    free = float(expert_alltoall_time_s(h100, EFF, *args, 0, True)[0])
    assert by_model == pytest.approx(by_stack, rel=1e-12)
    assert free / by_model == pytest.approx(7 * (1 - (7 / 8) ** 8) / 3.5, rel=0.02)
    # A stack's own bound wins over the model's groups.
    tighter = float(expert_alltoall_time_s(h100, EFF, *args, 1, True, 8, 4)[0])
    assert tighter < by_model
    half = (_one(32.0), _one(1.0), _one(1e8), 8.0)
    grouped = float(expert_alltoall_time_s(h100, EFF, *half, 0, True, 8, 4)[0])
    assert grouped == pytest.approx(
        float(expert_alltoall_time_s(h100, EFF, *half, 0, True)[0]), rel=1e-12
    )
    dsv3 = catalog.model("deepseek-v3")
    assert (dsv3.router_groups, dsv3.router_group_topk) == (8, 4)
    assert catalog.model("qwen3-235b-a22b").router_groups == 0
    with pytest.raises(SpecError, match="router_group_topk"):
        dataclasses.replace(dsv3, router_group_topk=9)


def test_dispatcher_is_a_stack_field_with_named_values() -> None:
    """Megatron-Core's default dispatcher is the all-to-all one; NVIDIA's Megatron-Bridge
    performance recipes and DeepSeek-V3 send tokens once per node; anything else is an error
    naming the valid values."""
    assert Stack().moe_token_dispatcher == "alltoall"
    assert preset("megatron-bridge-26.02").moe_token_dispatcher == "flex"
    assert preset("deepseek-v3").moe_token_dispatcher == "flex"
    with pytest.raises(SpecError, match="alltoall, flex"):
        Stack(moe_token_dispatcher="deepep")


def test_dispatch_pays_a_fixed_time_per_routed_row() -> None:
    """Each dispatch and combine pays ``expert_dispatch_copy_s`` per routed row beside its
    bytes: k rows per token under the all-to-all dispatcher, one per destination rank under a
    flex one; nothing without expert parallelism. At the same bytes per token, more and
    narrower rows cost more."""
    model = catalog.model("qwen3-30b-a3b")
    cluster = resolve_cluster(gpu="b200", gpus=8)
    plan = ParallelPlan(tp=1, pp=1, dp=8, ep=8, micro_batch=2, global_batch=512, seq_len=4096)
    batch = PlanBatch.from_plans(model, [plan])
    tokens = batch.micro_batch * batch.seq_len
    per_row = 7e-9
    with_rows = EFF.replace(expert_dispatch_copy_s=per_row)
    without = EFF.replace(expert_dispatch_copy_s=0.0)
    for dispatcher, rows in (
        ("alltoall", float(model.top_k)),
        ("flex", 8.0 * (1.0 - (7.0 / 8.0) ** model.top_k)),
    ):
        stack = Stack(moe_token_dispatcher=dispatcher)
        f1, b1 = moe.expert_comm_times(model, cluster, batch, with_rows, stack, tokens)
        f0, b0 = moe.expert_comm_times(model, cluster, batch, without, stack, tokens)
        cost = tokens * rows * per_row
        assert f1 - f0 == pytest.approx(2.0 * cost)
        assert b1 - b0 == pytest.approx(2.0 * cost)
    single = PlanBatch.from_plans(model, [dataclasses.replace(plan, ep=1)])
    f, b = moe.expert_comm_times(model, cluster, single, with_rows, Stack(), tokens)
    assert f[0] == b[0] == 0.0
    # Twice the tokens at half the width: the same bytes, twice the rows.
    narrow = dataclasses.replace(model, hidden=model.hidden // 2)
    wide_t = moe.expert_comm_times(model, cluster, batch, with_rows, Stack(), tokens)[0]
    narrow_t = moe.expert_comm_times(narrow, cluster, batch, with_rows, Stack(), 2 * tokens)[0]
    assert narrow_t > wide_t


def _mixtral_plan(**changes: object) -> ParallelPlan:
    base: dict[str, object] = dict(
        tp=1,
        pp=8,
        dp=32,
        ep=8,
        micro_batch=1,
        global_batch=256,
        seq_len=4096,
        recompute="full",
        sequence_parallel=False,
    )
    base.update(changes)
    return ParallelPlan(**base)  # type: ignore[arg-type]


def test_scatter_add_unpermute_runs_at_the_atomic_rate() -> None:
    """Summing copies back by atomic scatter-add (``moe_unpermute`` scatter-add) replaces the
    gather-reduce's 2 + 2/k bytes per hidden element, twice (the unpermute forward and the
    permute's gradient), by 6 each at ``scatter_add_hbm_efficiency``: per copy and hidden
    element 12 x 0.80 / 0.15 - 2 (2 + 2/k) more streaming bytes; nothing else moves."""
    model = catalog.model("mixtral-8x22b")
    batch = PlanBatch.from_plans(model, [_mixtral_plan()])
    dev = Device.of(catalog.accelerator("h100-sxm-80gb"), batch.precision, EFF)
    tokens = batch.micro_batch * batch.seq_len
    gather = moe.routed_expert_times(model, batch, dev, EFF, Stack(), tokens)
    scatter = moe.routed_expert_times(
        model, batch, dev, EFF, Stack(moe_unpermute="scatter-add"), tokens
    )
    k = float(model.top_k)
    copies = float(moe.tokens_per_expert(model, batch, tokens)[0]) * model.routed_experts / 8
    copies *= Stack().moe_load_imbalance
    ratio = EFF.compute.hbm_efficiency / EFF.layers.scatter_add_hbm_efficiency
    extra = copies * model.hidden * (12.0 * ratio - 2.0 * (2.0 + 2.0 / k))
    assert float((scatter.elementwise_bytes - gather.elementwise_bytes)[0]) == pytest.approx(extra)
    assert np.array_equal(scatter.fwd, gather.fwd) and np.array_equal(scatter.bwd, gather.bwd)
    assert preset("torchtitan").moe_unpermute == "scatter-add"
    assert preset("megatron-bridge").moe_unpermute == "gather"
    with pytest.raises(SpecError, match="gather, scatter-add"):
        Stack(moe_unpermute="atomic")


def test_imbalance_factor_scales_the_busiest_experts_gemms() -> None:
    """Mixtral 8x22B, tp 1, ep 8, 4,096 tokens per micro-batch, top-2 of 8 experts: each GPU's
    one expert gets 4096 x 2 x 8 / 8 = 8,192 tokens; at imbalance 1.5 the busiest gets 12,288.
    The GEMMs are compute bound and both row counts fill whole 128-row tiles, so the expert
    time grows 1.5x up to wave quantization (63 vs 62.06 and 94 vs 93.09 waves of the up
    projection) and the fixed kernel costs: within 2%."""
    model = catalog.model("mixtral-8x22b")
    batch = PlanBatch.from_plans(model, [_mixtral_plan()])
    dev = Device.of(catalog.accelerator("h100-sxm-80gb"), batch.precision, EFF)
    tokens = batch.micro_batch * batch.seq_len
    assert float(moe.tokens_per_expert(model, batch, tokens)[0]) == 8192.0
    even = moe.routed_expert_times(model, batch, dev, EFF, Stack(moe_load_imbalance=1.0), tokens)
    skew = moe.routed_expert_times(model, batch, dev, EFF, Stack(moe_load_imbalance=1.5), tokens)
    ratio = float((skew.fwd + skew.bwd)[0] / (even.fwd + even.bwd)[0])
    assert ratio == pytest.approx(1.5, rel=0.02)
    assert float(even.imbalance[0]) == 0.0
    assert float(skew.imbalance[0]) == pytest.approx(
        float((skew.fwd + skew.bwd - even.fwd - even.bwd)[0])
    )
    # A capacity factor caps and pads every expert at 1.25 x the mean, whatever the skew.
    assert moe.load_factor(Stack(moe_load_imbalance=1.5, moe_capacity_factor=1.25)) == 1.25


def test_permutation_bytes_by_dispatcher_and_local_experts() -> None:
    """Mixtral 8x22B (hidden 6,144, top-2), 4,096 tokens per micro-batch: the permutation's
    HBM bytes per copy and hidden element are ``moe_permute_bytes_per_hidden``; the all-to-all
    dispatcher adds its second permutation (``moe_sort_chunks_bytes_per_hidden``) only where a
    rank holds several experts, and the flex dispatcher never."""
    model = catalog.model("mixtral-8x22b")
    dev = Device.of(catalog.accelerator("h100-sxm-80gb"), _one(0.0), EFF)
    plain = Stack(moe_load_imbalance=1.0, elementwise_bytes_per_ffn=0.0)

    def permute_bytes(ep: int, stack: Stack) -> float:
        batch = PlanBatch.from_plans(model, [_mixtral_plan(ep=ep, dp=32)])
        tokens = batch.micro_batch * batch.seq_len
        copies = float(moe.tokens_per_expert(model, batch, tokens)[0]) * 8 / ep
        out = moe.routed_expert_times(model, batch, dev, EFF, stack, tokens)
        return float(out.elementwise_bytes[0]) / (copies * model.hidden)

    one_each = permute_bytes(8, plain)
    two_each = permute_bytes(4, plain)
    assert one_each == pytest.approx(plain.moe_permute_bytes_per_hidden)
    assert two_each == pytest.approx(
        plain.moe_permute_bytes_per_hidden + plain.moe_sort_chunks_bytes_per_hidden
    )
    flex = dataclasses.replace(plain, moe_token_dispatcher="flex")
    assert permute_bytes(4, flex) == pytest.approx(plain.moe_permute_bytes_per_hidden)


def test_wall_names_imbalance_and_all_to_all() -> None:
    cluster = resolve_cluster(gpu="h100-sxm-80gb", gpus=256)
    even = estimate("mixtral-8x22b", cluster, _mixtral_plan(), stack=Stack(moe_load_imbalance=1.0))
    skew = estimate("mixtral-8x22b", cluster, _mixtral_plan(), stack=Stack(moe_load_imbalance=1.5))
    assert even.breakdown["moe_imbalance"] == 0.0
    assert skew.breakdown["moe_imbalance"] > 0.05 * skew.step_time_s
    assert even.breakdown["ep_comm"] > 0.0
    assert skew.step_time_s > even.step_time_s


def test_short_inner_dimension_costs_more_on_a_faster_sm() -> None:
    """The prologue and epilogue of a GEMM take about the same time on any SM, so an SM with
    r times the tensor rate needs r times the K to amortise them. At K = 1024 (m = n = 8192,
    BF16, compute-bound, launch cost left out) an H100 reaches (1024 / (1024 + 150)) /
    (8192 / (8192 + 150)) = 0.888 of its K = 8192 rate; a B200, whose SM runs 2.25e15 / 148
    over 989.4e12 / 132 = 2.03x as fast, reaches (1024 / (1024 + 304)) / (8192 / (8192 + 304))
    = 0.800. FP8 on H100 doubles the rate and takes ``gemm_k_half_fp8_factor`` 2 on top:
    k_half 600, 0.677."""
    eff = dataclasses.replace(EFF, compute=dataclasses.replace(EFF.compute, gemm_launch_s=0.0))
    big, short = np.array([8192.0]), np.array([1024.0])
    seen = {}
    for gpu, precision in (("h100-sxm-80gb", "bf16"), ("b200", "bf16"), ("h100-sxm-80gb", "fp8")):
        code = np.array([PRECISIONS.index(precision)], float)
        dev = Device.of(catalog.accelerator(gpu), code, eff)
        t_short, _ = linear_time_s(big, big, short, dev, eff)
        t_big, _ = linear_time_s(big, big, big, dev, eff)
        seen[gpu, precision] = float((t_big / 8.0 / t_short)[0])
    assert seen["h100-sxm-80gb", "bf16"] == pytest.approx(0.888, abs=0.002)
    assert seen["b200", "bf16"] == pytest.approx(0.800, abs=0.002)
    assert seen["h100-sxm-80gb", "fp8"] == pytest.approx(0.677, abs=0.002)


def test_fp8_gemm_rate_and_recipes() -> None:
    """A compute-bound 8192^3 GEMM: FP8 peak 1979 x ceiling ratio 1.0 over BF16 989.4 is
    2.0x faster: time ratio 0.500 (B200: ratio 0.98, 4500 x 0.98 over 2250: 0.510), times the
    longer inner dimension FP8 needs to amortise the same epilogue (k_half 150 at an H100 SM's
    BF16 rate, twice that at twice the rate, and the FP8 factor 2 on top: (8192 + 600) /
    (8192 + 150) on H100; a B200 SM runs 2.03x an H100 SM's BF16 rate).
    Block-wise scaling in software loses 5% more on Hopper (0.500 / 0.95 = 0.526); on B200
    MXFP8 is scaled in the tensor cores (no loss) while fp8-block keeps the loss."""
    codes = np.array([PRECISIONS.index(p) for p in ("bf16", "fp8", "fp8-block", "mxfp8")], float)
    big = np.full(4, 8192.0)
    for gpu, mx_ratio, ratio in (("h100-sxm-80gb", 1.0 / 0.95, 1.0), ("b200", 1.0, 0.98)):
        acc = catalog.accelerator(gpu)
        dev = Device.of(acc, codes, EFF)
        fwd, _ = linear_time_s(big, big, big, dev, EFF)
        c = EFF.compute
        k_half = c.gemm_k_half_efficiency * acc.peak_bf16_flop_per_s / acc.sm_count
        k_half /= c.gemm_k_half_reference_sm_flop_per_s
        fp8_half = k_half * acc.peak_fp8_flop_per_s * ratio / acc.peak_bf16_flop_per_s
        amortise = (8192 + fp8_half * c.gemm_k_half_fp8_factor) / (8192 + k_half)
        expected = acc.peak_bf16_flop_per_s / (acc.peak_fp8_flop_per_s * ratio) * amortise
        assert fwd[1] / fwd[0] == pytest.approx(expected, rel=0.005)
        # A little under 1 / 0.95: the slower kernel amortises the same epilogue over less K.
        assert fwd[2] / fwd[1] == pytest.approx(1.0 / 0.95, rel=0.01)
        assert fwd[2] / fwd[1] < 1.0 / 0.95
        assert fwd[3] / fwd[1] == pytest.approx(mx_ratio, rel=0.005)


def test_fp8_vs_bf16_step_time_and_memory() -> None:
    """Llama 3 70B, tp 8 pp 4 on 256 H100: FP8 doubles the weight bytes per parameter (2 BF16
    + 2 for the row- and column-wise FP8 copies) and speeds the step by less than the 2.0x of
    its linear GEMMs (attention, head, norms and communication stay)."""
    cluster = resolve_cluster(gpu="h100-sxm-80gb", gpus=256)
    plan = ParallelPlan(tp=8, pp=4, dp=8, micro_batch=1, global_batch=64, seq_len=8192)
    bf16 = estimate("llama3-70b", cluster, plan, stack="megatron-core")
    fp8 = estimate(
        "llama3-70b",
        cluster,
        ParallelPlan(**{**plan.__dict__, "precision": "fp8"}),
        stack="megatron-core",
    )
    assert fp8.memory["weights"] / bf16.memory["weights"] == pytest.approx(2.0, rel=1e-12)
    assert fp8.memory["activations"] < bf16.memory["activations"]
    assert 1.0 / 2.0 < fp8.step_time_s / bf16.step_time_s < 0.9


def test_nvfp4_gemm_rate_cast_and_weight_bytes() -> None:
    """NVFP4 on GB300: a compute-bound 16384^3 GEMM at the FP4 peak 15 PFLOP/s x the fitted
    ceiling ratio against MXFP8 at 5 x 0.98: time ratio 5 x 0.98 / (15 x ratio). Its operands
    stream at half a byte plus an FP8 scale per 16 elements. The cast of an operand element
    costs 3.125 bytes (read 2, two 4-bit copies with their scales) plus the 2-byte amax pass of
    the per-tensor second-level scale, against MXFP8's 4 (no amax). Under Megatron-Bridge the
    NVFP4 weights keep the BF16 copy (2 bytes) and two 4-bit copies with scales (1.125), as its
    MixedPrecisionConfig refuses FP4 parameters, while MXFP8 keeps only its two FP8 copies
    (fp8_param_gather)."""
    from scalewall.perf.layers import cast_bytes
    from scalewall.perf.memory import weight_bytes_per_param

    acc = catalog.accelerator("gb300")
    codes = np.array([PRECISIONS.index(p) for p in ("mxfp8", "nvfp4")], float)
    dev = Device.of(acc, codes, EFF)
    big = np.full(2, 16384.0)
    fwd, _ = linear_time_s(big, big, big, dev, EFF)
    expected = (
        acc.peak_fp8_flop_per_s
        * 0.98
        / (acc.peak_fp4_flop_per_s * EFF.compute.fp4_gemm_ceiling_ratio)
    )
    # Each at its own short-K amortisation (compute.k_half): FP8's is the longer.
    mx_half, fp4_half = k_half(dev, EFF)
    expected *= (16384 + fp4_half) / (16384 + mx_half)
    assert mx_half > fp4_half
    assert fwd[1] / fwd[0] == pytest.approx(expected, rel=0.01)
    assert dev.operand_bytes.tolist() == [1.0, 0.5625]
    assert cast_bytes(dev, EFF).tolist() == [4.0, 5.125]
    weights = weight_bytes_per_param(EFF, preset("megatron-bridge"), codes)
    assert weights.tolist() == [2.0, 3.125]


def test_nvfp4_needs_fp4_tensor_cores() -> None:
    """H100 has FP8 but no FP4 tensor cores: NVFP4 is refused in one line naming the valid
    precisions; A100 has neither, so only bf16 and fp16 are offered."""
    from scalewall.plan.plan import check_precision

    with pytest.raises(SpecError, match="no FP4 tensor cores: bf16, fp16, fp8, fp8-block or mxfp8"):
        check_precision(catalog.accelerator("h100-sxm-80gb"), "nvfp4")
    with pytest.raises(SpecError, match="no FP4 tensor cores: bf16 or fp16"):
        check_precision(catalog.accelerator("a100-sxm-80gb"), "nvfp4")
    check_precision(catalog.accelerator("b300"), "nvfp4")


def test_nvfp4_llama3_70b_speeds_up_less_than_its_gemms() -> None:
    """Llama 3 70B on 64 GB200 (tp 2, pp 4, vpp 5, as Megatron-Bridge 26.02 ran it): NVFP4 is
    faster than MXFP8, by less than the FP4 / FP8 GEMM rate ratio (attention, norms, casts,
    communication and the BF16 head stay); its weights take more memory, as Megatron-Bridge
    keeps BF16 weights beside the FP4 copies but FP8-only weights under MXFP8."""
    cluster = resolve_cluster(gpu="gb200", gpus=64)
    plan = ParallelPlan(
        tp=2,
        pp=4,
        dp=8,
        vpp=5,
        micro_batch=1,
        global_batch=256,
        seq_len=8192,
        sequence_parallel=True,
        precision="mxfp8",
    )
    mx = estimate("llama3-70b", cluster, plan, stack="megatron-bridge")
    fp4 = estimate(
        "llama3-70b", cluster, dataclasses.replace(plan, precision="nvfp4"), stack="megatron-bridge"
    )
    acc = catalog.accelerator("gb200")
    gemm_ratio = (
        acc.peak_fp4_flop_per_s
        * EFF.compute.fp4_gemm_ceiling_ratio
        / (acc.peak_fp8_flop_per_s * EFF.compute.fp8_gemm_ceiling_ratio_blackwell)
    )
    assert 1.0 / gemm_ratio < fp4.step_time_s / mx.step_time_s < 0.95
    assert fp4.memory["weights"] == pytest.approx(mx.memory["weights"] * 3.125 / 2.0)


def test_full_iteration_graphs_pad_the_expert_buffers() -> None:
    """DeepSeek-V3, EP 64 on GB200 with forced balance (load 1.0): under full-iteration CUDA
    graphs Megatron-Bridge pads each rank's expert buffers to 1.5x the mean, so the routed
    expert GEMMs take 1.5x as long (large GEMMs: within the tile rounding) while the
    all-to-all is unchanged; capturing only attention and router leaves them at the mean."""
    model = catalog.model("deepseek-v3")
    plan = ParallelPlan(
        tp=1,
        pp=4,
        dp=64,
        ep=64,
        global_batch=4096,
        seq_len=4096,
        first_stage_layers=15,
        last_stage_layers=14,
    )
    batch = PlanBatch.from_plans(model, [plan])
    codes = np.array([PRECISIONS.index("mxfp8")], dtype=np.float64)
    dev = Device.of(catalog.accelerator("gb200"), codes, EFF)
    tokens = _one(4096.0)
    bridge = preset("megatron-bridge")
    full = dataclasses.replace(bridge, cuda_graphs="full")
    partial = dataclasses.replace(bridge, cuda_graphs="attention")
    padded = moe.routed_expert_times(model, batch, dev, EFF, full, tokens)
    eager = moe.routed_expert_times(model, batch, dev, EFF, partial, tokens)
    ratio = float((padded.fwd + padded.bwd)[0] / (eager.fwd + eager.bwd)[0])
    assert ratio == pytest.approx(1.5, rel=0.05)
    assert float(eager.imbalance[0]) == pytest.approx(0.0, abs=1e-12)  # rounding only
    assert float(padded.imbalance[0]) > 0.0
    assert moe.load_factor(full) == moe.load_factor(partial) == 1.0


def test_gradient_buffer_bytes_follow_the_reduction_dtype() -> None:
    """Llama 3 70B, tp 8 pp 4: Megatron's FP32 gradient buffer holds 4 bytes per parameter, a
    BF16 one (NVIDIA's performance recipes: ``grad_reduce_in_fp32 = False``) 2: half the
    gradient memory, the weights and optimizer state unchanged; the stack text of a validation
    case says so with "BF16 gradient reduction"."""
    cluster = resolve_cluster(gpu="h100-sxm-80gb", gpus=256)
    plan = ParallelPlan(tp=8, pp=4, dp=8, micro_batch=1, global_batch=64, seq_len=8192)
    fp32 = estimate("llama3-70b", cluster, plan, stack=Stack(grad_reduce_bytes=4.0))
    bf16 = estimate("llama3-70b", cluster, plan, stack=Stack(grad_reduce_bytes=2.0))
    assert bf16.memory["gradients"] / fp32.memory["gradients"] == pytest.approx(0.5, rel=1e-12)
    assert bf16.memory["weights"] == fp32.memory["weights"]
    assert bf16.memory["optimizer_state"] == fp32.memory["optimizer_state"]
    assert preset("megatron-core").grad_reduce_bytes == 4.0
    assert preset("nemo-24.07").grad_reduce_bytes == 2.0
    assert preset("megatron-bridge").grad_reduce_bytes == 2.0


def test_ring_vs_all_to_all_context_parallelism() -> None:
    """Llama 3 70B at 128K, tp 8, cp 8 (one CP rank per node) on 64 H100.

    Per rank 16,384 tokens. Ring: 7 steps of K,V (8 kv heads x 256 / 8 x 2 B x 16,384 =
    8.4 MB) at 46 GB/s = 1.3 ms, hidden behind 16 ms of attention (2 x 16384 x 65536 x 8
    heads x 256 FLOP at 273 TFLOP/s): nothing exposed. All-to-all: (64 x 256 + 8 x 256) / 8
    x 2 B x 16,384 = 75.5 MB, 7/8 of it across the network: 1.44 ms forward and 1.44 ms
    backward per layer, exposed (the recomputed forward's exchange counts as recompute), each
    with 7 network ring steps of 14 us and the 20 us launch."""
    cluster = resolve_cluster(gpu="h100-sxm-80gb", gpus=64)
    base = dict(
        tp=8, pp=1, dp=1, cp=8, micro_batch=1, global_batch=1, seq_len=131072, recompute="full"
    )
    ring = estimate("llama3-70b", cluster, ParallelPlan(**base, cp_mode="ring"))  # type: ignore[arg-type]
    a2a = estimate("llama3-70b", cluster, ParallelPlan(**base, cp_mode="a2a"))  # type: ignore[arg-type]
    assert ring.breakdown["cp_comm"] == 0.0
    per_layer = a2a.breakdown["cp_comm"] / 80
    # The switch hops (about 1 us a step) add under 1%.
    assert per_layer == pytest.approx(2 * (75.5e6 * 7 / 8 / 4.6e10 + 7 * 14e-6 + 20e-6), rel=0.01)


def test_all_to_all_cp_needs_heads_divisible_by_tp_times_cp() -> None:
    model = catalog.model("llama3-70b")  # 64 heads
    with pytest.raises(SpecError, match="tp x cp"):
        validate(model, ParallelPlan(tp=8, cp=16, cp_mode="a2a", global_batch=1, seq_len=8192))


def test_dense_plan_has_no_moe_parts() -> None:
    cluster = resolve_cluster(gpu="h100-sxm-80gb", gpus=256)
    plan = ParallelPlan(tp=8, pp=4, dp=8, micro_batch=1, global_batch=64, seq_len=8192)
    out = estimate("llama3-70b", cluster, plan)
    assert out.breakdown["ep_comm"] == 0.0 and out.breakdown["moe_imbalance"] == 0.0


def test_expert_weights_and_optimizer_shard_by_ep() -> None:
    """Mixtral 8x22B: doubling EP from 4 to 8 halves the routed experts per GPU; with ZeRO-1
    their optimizer state is sharded over tp cp dp / (ep etp), which halves too, so the
    expert part of both shrinks while the replicated part stays."""
    cluster = resolve_cluster(gpu="h100-sxm-80gb", gpus=256)
    four = estimate("mixtral-8x22b", cluster, _mixtral_plan(ep=4))
    eight = estimate("mixtral-8x22b", cluster, _mixtral_plan(ep=8))
    assert eight.memory["weights"] < four.memory["weights"]
    # Experts are ~93% of Mixtral 8x22B's 141B parameters: weights fall by about 46%.
    assert eight.memory["weights"] / four.memory["weights"] == pytest.approx(0.54, abs=0.05)


def test_ring_cp_runs_the_attention_kernel_on_short_chunks() -> None:
    """Llama 3 8B, 8K tokens, tp 1, the H100's FlashAttention-2 (half rate at 1,000 keys).
    Without CP a kernel loops over 8,192 keys: rate factor 8192 / (8192 + 1000) = 0.8912; ring
    CP 8 hands it 1,024-key chunks: 1024 / 2024 = 0.5059. Per token the attention core takes
    0.8912 / 0.5059 = 1.76x as long; all-to-all CP keeps the whole sequence per head group and
    the long-sequence rate. A stack's own kernel figure takes the default half length (240)."""
    from scalewall.perf.attention import attention_times

    model = catalog.model("llama3-8b")
    plans = [
        ParallelPlan(tp=1, pp=1, dp=8, cp=1, micro_batch=1, global_batch=8, seq_len=8192),
        ParallelPlan(tp=1, pp=1, dp=1, cp=8, micro_batch=1, global_batch=8, seq_len=8192),
        ParallelPlan(
            tp=1, pp=1, dp=1, cp=8, micro_batch=1, global_batch=8, seq_len=8192, cp_mode="a2a"
        ),
    ]
    batch = PlanBatch.from_plans(model, plans)
    dev = Device.of(catalog.accelerator("h100-sxm-80gb"), batch.precision, EFF)
    forward = attention_times(model, batch, dev, EFF, Stack())[0]
    per_token = forward * batch.cp  # each rank holds 1/cp of the tokens
    assert catalog.accelerator("h100-sxm-80gb").attention_half_tokens == 1000.0
    assert per_token[1] / per_token[0] == pytest.approx((8192 / 9192) / (1024 / 2024), rel=1e-9)
    assert per_token[2] == pytest.approx(per_token[0], rel=1e-9)
    fa3 = Stack(attention_kernel_frac=0.6)
    own = attention_times(model, batch, dev, EFF, fa3)[0] * batch.cp
    assert own[1] / own[0] == pytest.approx((8192 / 8432) / (1024 / 1264), rel=1e-9)


def test_a_stack_without_the_fp8_weight_cache_casts_the_weights_every_micro_batch() -> None:
    """Llama 3 8B on H100 under per-tensor FP8, tp 2: a stack that quantizes the weights again
    in every forward (``Stack.fp8_weight_cache`` False: torchao's Float8Linear, Transformer
    Engine called without ``is_first_microbatch``) pays, per layer and micro-batch, the cast of
    the GPU's weight elements, (QKV + output + gate/up + down) / tp = (4096 x 6144 + 4096 x
    4096 + 2 x 14336 x 4096 + 4096 x 14336) / 2 = 109.1M elements, at 4 bytes (read, row-wise
    and column-wise copy) plus the 2-byte amax pass; a BF16 plan casts nothing either way."""
    from scalewall.perf.compute import memory_bound_time_s
    from scalewall.perf.layers import cast_bytes, layer_times

    model = catalog.model("llama3-8b")
    cluster = resolve_cluster(gpu="h100-sxm-80gb", gpus=8)
    cached = preset("megatron-core")
    uncached = dataclasses.replace(cached, fp8_weight_cache=False)
    plans = [
        ParallelPlan(tp=2, dp=4, micro_batch=1, global_batch=8, seq_len=8192, precision=p)
        for p in ("fp8", "bf16")
    ]
    p = PlanBatch.from_plans(model, plans)
    dev = Device.of(cluster.accelerator, p.precision, EFF)
    a = layer_times(model, cluster, p, dev, EFF, cached)
    b = layer_times(model, cluster, p, dev, EFF, uncached)
    elements = (4096 * 6144 + 4096 * 4096 + 3 * 14336 * 4096) / 2
    assert elements == pytest.approx(109.1e6, rel=1e-3)
    expected = memory_bound_time_s(elements * cast_bytes(dev, EFF), dev, EFF)[0]
    extra = (b.fwd_compute + b.bwd_compute) - (a.fwd_compute + a.bwd_compute)
    assert extra[0] == pytest.approx(expected, rel=1e-9)
    assert cast_bytes(dev, EFF)[0] == 6.0
    assert extra[1] == 0.0
