"""The step model on hybrid Mamba-2 models: layer kinds per pipeline stage, one tensor-parallel
collective pair per block, Mamba-2 memory, and a whole estimate end to end."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from scalewall.api import estimate
from scalewall.catalog.schema import ModelSpec
from scalewall.cluster import resolve_cluster
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.perf.batch import PlanBatch
from scalewall.perf.compute import Device
from scalewall.perf.layers import layer_times
from scalewall.perf.moe import stage_layer_mix
from scalewall.plan.plan import ParallelPlan
from scalewall.workload import counts
from scalewall.workload.user import model_from_hf_config

CONFIGS = json.loads((Path(__file__).parents[2] / "data" / "hybrid_configs.json").read_text())
NANO = CONFIGS["nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"]
H8B = CONFIGS["nvidia/Nemotron-H-8B-Base-8K"]
EFF = Efficiency()


def _batch(model: ModelSpec, plan: ParallelPlan) -> PlanBatch:
    return PlanBatch.from_plans(model, [plan])


@pytest.mark.parametrize("pp", [1, 2, 4, 13])
def test_stages_hold_every_layer_of_each_kind(pp: int) -> None:
    model = model_from_hf_config(NANO, "nano.json")
    plan = ParallelPlan(tp=1, pp=pp, dp=1, global_batch=64, seq_len=4096, micro_batch=1)
    batch = _batch(model, plan)
    mix = stage_layer_mix(model, batch)
    for kind, total in counts.kind_counts(model).items():
        if pp == 1:
            assert float(mix["last"][kind][0]) == total
            continue
        middle = float(mix["middle"][kind][0]) * (pp - 2)
        held = float(mix["first"][kind][0]) + float(mix["last"][kind][0]) + middle
        # The busiest middle stage stands for every middle stage: within one layer a stage.
        assert abs(held - total) <= max(pp - 2, 0)
    assert sum(float(v[0]) for v in mix["first"].values()) == float(batch.layers_first[0])


def test_each_block_has_one_tensor_parallel_collective_pair() -> None:
    model = model_from_hf_config(H8B, "h8b.json")
    cluster = resolve_cluster(gpu="h100-sxm-80gb", gpus=8)
    plan = ParallelPlan(tp=8, pp=1, dp=1, global_batch=8, seq_len=8192, micro_batch=1)
    batch = _batch(model, plan)
    dev = Device.of(cluster.accelerator, batch.precision, EFF)
    stack = Stack(tp_comm_overlap_frac=0.0)
    mamba = layer_times(model, cluster, batch, dev, EFF, stack, counts.MAMBA)
    mlp = layer_times(model, cluster, batch, dev, EFF, stack, counts.MLP)
    both = layer_times(model, cluster, batch, dev, EFF, stack, counts.DENSE)
    assert mamba.fwd_tp[0] == pytest.approx(mlp.fwd_tp[0])
    assert both.fwd_tp[0] == pytest.approx(2.0 * mlp.fwd_tp[0])
    assert mamba.fwd_compute[0] > 0.0 and mamba.fwd_cp[0] == 0.0


def test_a_hybrid_estimate_runs_end_to_end() -> None:
    model = model_from_hf_config(NANO, "nano.json")
    plan = ParallelPlan(
        tp=1, pp=2, dp=16, ep=8, global_batch=256, seq_len=4096, micro_batch=1, zero=1
    )
    result = estimate(model, resolve_cluster(gpu="h100-sxm-80gb", gpus=32), plan)
    assert result.fits
    assert 0.05 < result.mfu < 0.7
    assert np.isclose(sum(result.breakdown_s.values()), result.step_time_s)


def test_latent_experts_dispatch_their_latent_width() -> None:
    """LatentMoE sends each token copy at the latent width: the all-to-all moves latent/hidden
    of the bytes the same experts at the hidden width would."""
    from scalewall.perf.moe import expert_comm_times

    model = model_from_hf_config(CONFIGS["nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16"], "s")
    wide = dataclasses.replace(model, moe_latent=0)
    cluster = resolve_cluster(gpu="h100-sxm-80gb", gpus=64)
    plan = ParallelPlan(tp=1, pp=1, dp=64, ep=64, global_batch=512, seq_len=4096, micro_batch=1)
    batch = _batch(model, plan)
    stack = Stack()
    tokens = batch.micro_batch * batch.seq_len
    latent_f, _ = expert_comm_times(model, cluster, batch, EFF, stack, tokens)
    wide_f, _ = expert_comm_times(wide, cluster, batch, EFF, stack, tokens)
    assert 0.0 < latent_f[0] < wide_f[0] * 0.5


def test_a_gated_deltanet_estimate_runs_end_to_end() -> None:
    model = model_from_hf_config(CONFIGS["Qwen/Qwen3-Next-80B-A3B-Instruct"], "next.json")
    plan = ParallelPlan(
        tp=1, pp=4, dp=32, ep=32, vpp=3, global_batch=256, seq_len=4096, micro_batch=1, zero=1
    )
    result = estimate(model, resolve_cluster(gpu="h100-sxm-80gb", gpus=128), plan)
    assert result.fits
    assert 0.02 < result.mfu < 0.7
    assert np.isclose(sum(result.breakdown_s.values()), result.step_time_s)


def test_one_grouped_kernel_issues_fewer_operations_than_per_expert_gemms() -> None:
    from scalewall.perf.layers import host_issue_s

    model = model_from_hf_config(CONFIGS["Qwen/Qwen3-Next-80B-A3B-Instruct"], "next.json")
    plan = ParallelPlan(tp=1, pp=1, dp=16, ep=16, global_batch=1024, seq_len=4096, micro_batch=1)
    batch = _batch(model, plan)
    per_expert = host_issue_s(model, batch, EFF, Stack(), counts.LINEAR_MOE)
    grouped = host_issue_s(
        model, batch, EFF, Stack(moe_expert_gemms="single-kernel"), counts.LINEAR_MOE
    )
    # 32 local experts x 2 GEMMs against one launch per projection.
    saved = (32 - 1) * EFF.host.host_ops_per_local_expert_fwd * EFF.host.host_op_s
    assert float(per_expert[0] - grouped[0]) == pytest.approx(saved)


@pytest.mark.parametrize(
    "name", ["nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "Qwen/Qwen3-Next-80B-A3B-Instruct"]
)
def test_the_mfu_numerator_counts_the_chunked_scans(name: str) -> None:
    """The step model's model FLOPs per token are ``counts.model_flop_per_token``'s, Mamba-2's
    SSD and Gated DeltaNet's delta rule included, at each row's sequence length."""
    from scalewall.perf.step import _model_flop_per_token

    model = model_from_hf_config(CONFIGS[name], "m.json")
    plans = [
        ParallelPlan(tp=1, pp=1, dp=8, ep=8, global_batch=64, seq_len=s, micro_batch=1)
        for s in (2048, 8192)
    ]
    got = _model_flop_per_token(model, PlanBatch.from_plans(model, plans))
    for value, seq in zip(got, (2048, 8192), strict=True):
        assert value == pytest.approx(counts.model_flop_per_token(model, seq), rel=1e-12)


def test_full_recompute_redoes_the_scans_in_the_hardware_flops() -> None:
    """Under full recompute the hardware FLOPs add one forward of every layer, the chunked
    scans included: HFU / MFU = 1 + (forward - logits) / (3 forward)."""
    model = model_from_hf_config(CONFIGS["nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"], "n")
    plan = ParallelPlan(
        tp=1, pp=1, dp=32, ep=8, global_batch=256, seq_len=8192, micro_batch=1, recompute="full"
    )
    result = estimate(model, resolve_cluster(gpu="h100-sxm-80gb", gpus=32), plan)
    forward = counts.model_flop_per_token(model, 8192) / 3.0
    logits = 2.0 * model.hidden * model.vocab
    assert result.hfu / result.mfu == pytest.approx(1.0 + (forward - logits) / (3.0 * forward))


def test_occupancy_bound_scans_run_at_a_rate_per_sm() -> None:
    """The SSD kernels' bandwidth is a rate per SM times the SMs (Little's law for a kernel
    at low occupancy), capped at the streaming share: on H100 (132 SMs, 3.35 TB/s) the
    measured 0.45 of the peak, on B200 (148 SMs, 8 TB/s) 0.21, not 0.45 again; a part with
    many SMs and little bandwidth streams at ``hbm_efficiency``."""
    from scalewall import catalog
    from scalewall.perf.layers import latency_bound_share

    rate = EFF.layers.ssd_bytes_per_s_per_sm

    def share(gpu: str) -> float:
        acc = catalog.accelerator(gpu)
        dev = Device.of(acc, np.zeros(1), EFF)
        return float(latency_bound_share(rate, dev, EFF))

    assert share("h100-sxm-80gb") == pytest.approx(0.453, abs=0.002)
    assert share("b200") == pytest.approx(148 * rate / 8e12)
    assert share("b200") < 0.5 * share("h100-sxm-80gb")
    slow = dataclasses.replace(catalog.accelerator("h100-sxm-80gb"), hbm_bytes_per_s=1e12)
    assert float(
        latency_bound_share(rate, Device.of(slow, np.zeros(1), EFF), EFF)
    ) == pytest.approx(EFF.compute.hbm_efficiency)


def test_scan_flops_follow_each_rows_sequence_length() -> None:
    # A batch of mixed sequence lengths: each row's model FLOPs per token are its own plan's,
    # the chunked scans included (computed once per distinct length and spread to the rows).
    from scalewall.perf.step import step_model

    model = model_from_hf_config(NANO, "nano.json")
    cluster = resolve_cluster(gpu="h100-sxm-80gb", gpus=16)
    plans = [
        ParallelPlan(tp=1, pp=1, dp=16, ep=8, global_batch=64, seq_len=s, micro_batch=1)
        for s in (4096, 512, 4096, 16, 512)
    ]
    together = step_model(model, cluster, PlanBatch.from_plans(model, plans), EFF, Stack())
    for i, plan in enumerate(plans):
        alone = step_model(model, cluster, _batch(model, plan), EFF, Stack())
        assert together.mfu[i] == pytest.approx(alone.mfu[0], rel=1e-12)
    # The scans are part of the count: shorter chunks (16 tokens) do less work per token.
    assert counts.ssd_flop_per_token(model, 16) < counts.ssd_flop_per_token(model, 4096)
