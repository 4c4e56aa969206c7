"""Megatron-Core's recompute modules (``--recompute-modules``) under selective recompute: the
activations each drops, the forward each runs again, how runs files state them, and the
``model-causal`` TFLOPS convention NVIDIA's tables count in."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scalewall import catalog
from scalewall.cluster import resolve_cluster
from scalewall.perf import memory
from scalewall.perf.assumptions import Efficiency
from scalewall.perf.batch import PlanBatch
from scalewall.perf.step import step_model
from scalewall.plan.plan import (
    ParallelPlan,
    module_ladder,
    recompute_module_flags,
    recompute_modules_of,
)
from scalewall.stack import resolve_stack
from scalewall.validation import harness
from scalewall.validation.runs import read_runs_file
from scalewall.workload import counts

MOE = catalog.model("qwen3-235b-a22b")
DENSE = catalog.model("llama3-70b")
MOE_PLAN = ParallelPlan(
    tp=2, pp=2, ep=8, dp=64, global_batch=512, seq_len=4096, sequence_parallel=True
)
DENSE_PLAN = ParallelPlan(tp=8, pp=4, dp=8, global_batch=256, seq_len=4096)


def _run(model: Any, plan: ParallelPlan, recompute: str, **flags: bool):  # type: ignore[no-untyped-def]
    cluster = resolve_cluster(None, gpu="h100-sxm-80gb", gpus=256)
    batch = PlanBatch.from_plans(model, [dataclasses.replace(plan, recompute=recompute)])
    stack = resolve_stack("megatron-core", flags or None)
    return step_model(model, cluster, batch, Efficiency(), stack), batch, stack


def _layer_bytes(model: Any, plan: ParallelPlan, kind: counts.LayerKind, **flags: bool) -> float:
    _, batch, stack = _run(model, plan, "selective", **flags)
    fp8 = np.zeros(1, dtype=bool)
    return float(memory.activation_bytes_per_layer(model, batch, stack, fp8, kind)[0])


def test_module_spellings_as_sources_write_them() -> None:
    assert recompute_modules_of("layernorm, moe") == ["layernorm", "moe"]
    assert recompute_modules_of("norm, act") == ["layernorm", "moe_act"]
    assert recompute_modules_of("moe;layernorm") == ["moe", "layernorm"]
    assert recompute_modules_of(["MoE-Act", "shared_expert"]) == ["moe_act", "shared_experts"]
    assert recompute_modules_of("selective") is None
    assert recompute_modules_of("full") is None
    assert recompute_modules_of(["moe", "everything"]) is None
    assert recompute_module_flags(["core_attn", "moe"]) == {"recompute_moe": True}


def test_recomputing_the_moe_block_keeps_only_its_input() -> None:
    plain = _layer_bytes(MOE, MOE_PLAN, counts.MOE)
    act = _layer_bytes(MOE, MOE_PLAN, counts.MOE, recompute_moe_act=True)
    whole = _layer_bytes(MOE, MOE_PLAN, counts.MOE, recompute_moe=True)
    assert whole < act < plain
    # What the attention block keeps is untouched: the MoE block's own share is gone. The
    # routed copies are most of an MoE layer's activations (8 of 128 experts, 1536 wide).
    assert whole < 0.5 * plain
    tokens = MOE_PLAN.seq_len
    routed = memory.moe.routed_activation_bytes(
        MOE,
        _run(MOE, MOE_PLAN, "selective")[1],
        resolve_stack("megatron-core"),
        tokens + 0.0,
        np.zeros(1, dtype=bool),
    )
    assert plain - whole > float(routed[0])


def test_layernorm_recompute_drops_the_pre_mlp_norm_output_of_an_moe_layer() -> None:
    plain = _layer_bytes(MOE, MOE_PLAN, counts.MOE)
    normed = _layer_bytes(MOE, MOE_PLAN, counts.MOE, recompute_layernorm=True)
    # Two bytes per element of the model width, sharded over TP by sequence parallelism.
    expected = MOE_PLAN.seq_len * 2.0 * MOE.hidden / MOE_PLAN.tp
    assert plain - normed == pytest.approx(expected)
    # A dense layer's norms are fused into the following linear: nothing to drop.
    dense = _layer_bytes(DENSE, DENSE_PLAN, counts.DENSE)
    assert _layer_bytes(DENSE, DENSE_PLAN, counts.DENSE, recompute_layernorm=True) == dense


def test_mlp_recompute_trades_dense_activations_for_a_second_forward() -> None:
    base, _, _ = _run(DENSE, DENSE_PLAN, "selective")
    mlp, _, _ = _run(DENSE, DENSE_PLAN, "selective", recompute_mlp=True)
    full, _, _ = _run(DENSE, DENSE_PLAN, "full")
    acts = base.memory_bytes["activations"][0]
    assert mlp.memory_bytes["activations"][0] < acts
    assert base.breakdown_s["recompute"][0] < mlp.breakdown_s["recompute"][0]
    assert mlp.breakdown_s["recompute"][0] < full.breakdown_s["recompute"][0]
    assert mlp.hardware_tflops_per_gpu[0] > base.hardware_tflops_per_gpu[0]


def test_moe_recompute_runs_the_block_and_its_all_to_all_again() -> None:
    base, _, _ = _run(MOE, MOE_PLAN, "selective")
    moe, _, _ = _run(MOE, MOE_PLAN, "selective", recompute_moe=True)
    shared, _, _ = _run(MOE, MOE_PLAN, "selective", recompute_shared_experts=True)
    extra = moe.breakdown_s["recompute"][0] - base.breakdown_s["recompute"][0]
    # More than the routed experts' share of a forward, less than a full recompute.
    assert 0.0 < extra < moe.breakdown_s["compute"][0] / 3.0 + moe.breakdown_s["ep_comm"][0]
    # Qwen3 has no shared experts: recomputing them costs nothing and keeps everything.
    assert shared.step_time_s[0] == pytest.approx(base.step_time_s[0])


@pytest.mark.parametrize("mode", ["none", "full"])
def test_modules_only_act_under_selective_recompute(mode: str) -> None:
    flags = {"recompute_moe": True, "recompute_layernorm": True}
    base, _, _ = _run(MOE, MOE_PLAN, mode)
    moe, _, _ = _run(MOE, MOE_PLAN, mode, **flags)
    assert moe.step_time_s[0] == base.step_time_s[0]
    assert moe.memory_total_bytes[0] == base.memory_total_bytes[0]


def _case(recompute: Any, stack: Any = "megatron-core", **published: Any) -> dict[str, Any]:
    return {
        "id": "qwen3",
        "model": {"catalog": "qwen3-235b-a22b"},
        "hardware": {"gpu": "h100-sxm-80gb", "gpus": 256, "gpus_per_node": 8},
        "training": {"seq_len": 4096, "global_batch": 512, "micro_batch": 1},
        "plan": {"tp": 2, "pp": 8, "vpp": 4, "ep": 8, "recompute": recompute, "stack": stack},
        "published": published or {"step_time_s": 10.0},
    }


def _read(tmp_path: Path, *cases: dict[str, Any]):  # type: ignore[no-untyped-def]
    path = tmp_path / "runs.json"
    path.write_text(json.dumps({"format": "scalewall-runs/1", "cases": list(cases)}))
    return read_runs_file(path)


def test_a_runs_file_states_the_modules_as_its_source_lists_them(tmp_path: Path) -> None:
    runs = _read(tmp_path, _case(["layernorm", "moe"]), dict(_case("norm, act"), id="b"))
    assert not runs.errors
    first, second = runs.cases
    assert first.plan["recompute"] == "selective"
    assert first.stack.recompute_moe and first.stack.recompute_layernorm
    assert not first.stack.recompute_moe_act
    assert second.stack.recompute_moe_act and second.stack.recompute_layernorm


def test_modules_a_stack_cannot_run_or_does_not_know_are_that_cases_error(
    tmp_path: Path,
) -> None:
    runs = _read(
        tmp_path,
        _case(["moe", "everything"]),
        dict(_case(["moe"], stack="torchtitan-fsdp2"), id="b"),
        dict(_case(["moe"]), id="c"),
    )
    assert [c.id for c in runs.cases] == ["c"]
    texts = {e.id: e.text for e in runs.errors}
    assert "plan.recompute" in texts["qwen3"] and "layernorm" in texts["qwen3"]
    assert "plan.recompute" in texts["b"] and "torchtitan-fsdp2" in texts["b"]


def test_causal_tflops_leave_out_the_masked_half_of_the_attention(tmp_path: Path) -> None:
    model_case = _case("selective", tflops_per_gpu=300.0)
    causal_case = dict(_case("selective"), id="causal")
    causal_case["published"] = {"tflops_per_gpu": 300.0, "tflops_convention": "model-causal"}
    runs = _read(tmp_path, model_case, causal_case)
    full, causal = (harness.predict_case(c) for c in runs.cases)
    assert full.row == causal.row
    seq = 4096
    ratio = 1.0 - 3.0 * counts.attention_flop_per_token(MOE, seq, causal_half=True) / (
        counts.model_flop_per_token(MOE, seq)
    )
    assert 0.8 < ratio < 1.0
    got = harness.predicted_metrics(causal)["tflops_per_gpu"]
    assert got == pytest.approx(harness.predicted_metrics(full)["tflops_per_gpu"] * ratio)


def test_the_module_ladder_adds_what_acts_on_the_models_layers_cheapest_first() -> None:
    assert module_ladder(MOE) == [
        ("moe_act",),
        ("moe_act", "layernorm"),
        ("layernorm", "moe"),
    ]
    dsv3 = module_ladder(catalog.model("deepseek-v3"))
    assert dsv3[0] == ("mla_up_proj", "moe_act")
    assert dsv3[-1] == ("mla_up_proj", "layernorm", "moe", "mlp")
    assert module_ladder(DENSE) == [("mlp",)]


def _long_case(stack: str, recompute: Any) -> dict[str, Any]:
    """Megatron-MoE-ModelZoo's Qwen3-235B row at 16K tokens on 256 H100 (TP 4, PP 8, VPP 4,
    EP 8): it ran with --recompute-modules layernorm moe."""
    case = _case(recompute, stack=stack)
    case["training"] = {"seq_len": 16384, "global_batch": 256, "micro_batch": 1}
    case["plan"] |= {"tp": 4, "cp": 1, "sequence_parallel": True}
    return case


def test_a_selective_run_that_fits_only_with_modules_is_given_the_cheapest_that_fit(
    tmp_path: Path,
) -> None:
    runs = _read(
        tmp_path,
        _long_case("megatron-core-0.13", "selective"),
        dict(_long_case("megatron-core", "selective"), id="old"),
        dict(_long_case("megatron-core-0.13", ["layernorm", "moe_act"]), id="listed"),
    )
    laddered, old, listed = (harness.predict_case(c) for c in runs.cases)
    assert laddered.fits and laddered.chosen["recompute_modules"] == ["layernorm", "moe"]
    assert laddered.case.stack.recompute_moe
    # A stack without the modules keeps its selective recompute, which does not fit.
    assert not old.fits and "recompute_modules" not in old.chosen
    # Modules the case lists are all it recomputes.
    assert "recompute_modules" not in listed.chosen
    assert not listed.case.stack.recompute_moe


def test_the_cli_and_the_api_take_the_modules_as_the_recompute() -> None:
    from scalewall import _entry

    plan = {"tp": 2, "pp": 2, "ep": 8, "seq_len": 4096, "global_batch": 512}
    stated = {**plan, "recompute": ["layernorm", "moe"]}
    api = _entry.estimate(
        "qwen3-235b-a22b", gpu="h100-sxm-80gb", gpus=256, plan=stated, stack="megatron-core-0.13"
    )
    flags = _entry.estimate(
        "qwen3-235b-a22b",
        gpu="h100-sxm-80gb",
        gpus=256,
        plan={**plan, "recompute": "selective"},
        stack="megatron-core-0.13",
        stack_overrides={"recompute_layernorm": True, "recompute_moe": True},
    )
    assert api.step_time_s == flags.step_time_s
    args = ["estimate", "-m", "qwen3-235b-a22b", "--gpu", "h100-sxm-80gb", "--gpus", "256"]
    args += ["--tp", "2", "--pp", "2", "--ep", "8", "--seq-len", "4096", "--global-batch", "512"]
    cli = run_cli(*args, "--stack", "megatron-core-0.13", "--recompute", "layernorm,moe", "--json")
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["step_time_s"] == pytest.approx(api.step_time_s, rel=1e-12)
    refused = run_cli(*args, "--stack", "torchtitan-fsdp2", "--recompute", "moe")
    assert refused.returncode == 2
    assert "torchtitan-fsdp2" in refused.stderr and refused.stderr.strip().count("\n") == 0


def test_the_modules_a_case_needed_are_in_its_validation_document(tmp_path: Path) -> None:
    import jsonschema

    from scalewall.schemas import schema

    path = tmp_path / "runs.json"
    path.write_text(
        json.dumps(
            {"format": "scalewall-runs/1", "cases": [_long_case("megatron-core-0.13", None)]}
        )
    )
    result = run_cli("validate", "--cases", str(path), "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    jsonschema.validate(document, schema("validation"))
    assert document["cases"][0]["chosen"]["recompute_modules"] == ["layernorm", "moe"]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    code = "from scalewall.cli.app import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=False
    )


@settings(max_examples=40, deadline=None)
@given(
    tp=st.sampled_from([1, 2, 4]),
    sp=st.booleans(),
    precision=st.sampled_from(["bf16", "fp8"]),
    model_id=st.sampled_from(["qwen3-235b-a22b", "deepseek-v3", "llama3-70b"]),
    modules=st.sets(st.sampled_from(["moe_act", "layernorm", "mla_up_proj", "mlp", "moe"])),
)
def test_modules_lie_between_plain_selective_and_full_recompute(
    tp: int, sp: bool, precision: str, model_id: str, modules: set[str]
) -> None:
    """Any set of modules keeps no more activations than plain selective recompute and no
    fewer than full recompute, and redoes no less work than plain selective."""
    model = catalog.model(model_id)
    pp = 1 if model.layers % 4 else 4
    plan = ParallelPlan(
        tp=tp,
        pp=pp,
        ep=8 if model.is_moe else 1,
        dp=256 // (tp * pp),
        global_batch=1024,
        seq_len=4096,
        sequence_parallel=sp and tp > 1,
        precision=precision,
    )
    flags = recompute_module_flags(sorted(modules))
    plain, _, _ = _run(model, plan, "selective")
    rebuilt, _, _ = _run(model, plan, "selective", **flags)
    full, _, _ = _run(model, plan, "full")
    acts = [out.memory_bytes["activations"][0] for out in (plain, rebuilt, full)]
    assert acts[2] <= acts[1] * (1 + 1e-12) and acts[1] <= acts[0] * (1 + 1e-12)
    redo = [out.breakdown_s["recompute"][0] for out in (plain, rebuilt)]
    assert redo[1] >= redo[0] * (1 - 1e-12)
