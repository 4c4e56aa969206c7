"""What a stack can run: a plan asking for a pipeline, an interleaved schedule, sequence
parallelism or selective recompute the stack does not implement is refused in one line; the
search never proposes one, and the validator never picks one for a field a source left open."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from scalewall import estimate, search
from scalewall.errors import SpecError
from scalewall.plan.plan import ParallelPlan, validate_for_stack
from scalewall.stack import resolve_stack
from scalewall.validation.harness import predict_case
from scalewall.validation.runs import deepspeed_pipeline_runs_path, read_runs

PLAN = ParallelPlan(
    tp=1,
    pp=4,
    dp=16,
    vpp=1,
    micro_batch=1,
    global_batch=64,
    seq_len=2048,
    sequence_parallel=False,
    recompute="full",
)


@pytest.mark.parametrize(
    ("stack", "field", "value"),
    [
        ("megatron-deepspeed", "vpp", 2),
        ("megatron-deepspeed", "sequence_parallel", True),
        ("megatron-deepspeed", "recompute", "selective"),
        ("megatron-lm-2021", "sequence_parallel", True),
        ("pytorch-fsdp-full-shard", "pp", 4),
        ("pytorch-fsdp-full-shard", "tp", 4),
        ("llm-foundry", "tp", 4),
        ("deepspeed-zero3", "pp", 4),
        ("nanotron", "vpp", 2),
        ("megatron-lm-2022", "cp", 2),
        ("megatron-deepspeed", "cp", 2),
        ("megatron-lm-2022", "ep", 8),
        ("megatron-lm-2021", "ep", 8),
    ],
)
def test_a_plan_the_stack_cannot_run_is_refused(stack: str, field: str, value: object) -> None:
    plan = replace(PLAN, **{field: value})
    with pytest.raises(SpecError, match=f"{field}={value!r}"):
        validate_for_stack(plan, resolve_stack(stack))


def test_stacks_that_implement_them_take_every_choice() -> None:
    plan = replace(PLAN, tp=4, dp=4, vpp=2, sequence_parallel=True, recompute="selective")
    for stack in ("megatron-core", "megatron-lm-2022", "torchtitan", "nemo-24.07"):
        validate_for_stack(plan, resolve_stack(stack))
    context = replace(plan, dp=2, cp=2)
    for stack in ("megatron-core", "torchtitan", "nemo-24.07", "megatron-bridge"):
        validate_for_stack(context, resolve_stack(stack))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    code = "from scalewall.cli.app import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=False
    )


def test_estimate_refuses_and_the_cli_says_it_in_one_line() -> None:
    with pytest.raises(SpecError, match="megatron-deepspeed runs no interleaved"):
        estimate(
            "llama2-7b", gpu="a100-sxm-80gb", gpus=64, plan=replace(PLAN, vpp=2), stack="gpt-neox"
        )
    args = ["estimate", "-m", "llama2-7b", "--gpu", "a100-sxm-80gb", "--gpus", "64"]
    args += ["--tp", "4", "--pp", "4", "--vpp", "2", "--global-batch", "64", "--seq-len", "2048"]
    result = _cli(*args, "--stack", "megatron-deepspeed")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "vpp" in result.stderr


def _fsdp_top(global_batch: int, seq_len: int) -> list[ParallelPlan]:
    """The 20 best plans for Llama 2 7B on 64 H100 under PyTorch FSDP."""
    result = search(
        "llama2-7b",
        gpu="h100-sxm-80gb",
        gpus=64,
        global_batch=global_batch,
        seq_len=seq_len,
        stack="pytorch-fsdp-full-shard",
        top_k=20,
    )
    assert result.top
    return [r.plan for r in result.top]


def test_search_proposes_only_what_the_stack_runs() -> None:
    assert all(p.pp == 1 and p.tp == 1 for p in _fsdp_top(256, 4096))
    deepspeed = search(
        "llama2-13b",
        gpu="a100-sxm-80gb",
        gpus=128,
        global_batch=512,
        seq_len=2048,
        stack="megatron-deepspeed",
        top_k=20,
    )
    assert deepspeed.top
    for r in deepspeed.top:
        assert r.plan.vpp == 1 and not r.plan.sequence_parallel
        assert r.plan.recompute != "selective"


def test_open_fields_take_only_what_the_stack_runs() -> None:
    # BLOOM's training iteration with its schedule, sequence parallelism and recompute left
    # open, as a user who read only the training log would state it.
    case = next(c for c in read_runs(deepspeed_pipeline_runs_path()) if c.id == "bloom_176b_384gpu")
    plan = {**case.plan, "vpp": None, "sequence_parallel": None, "recompute": None}
    chosen = predict_case(replace(case, plan=plan)).plan
    assert chosen.vpp == 1 and not chosen.sequence_parallel and chosen.recompute != "selective"


def test_an_open_context_parallel_width_is_one_on_a_stack_without_it(tmp_path: Path) -> None:
    # GPT-NeoX-20B (Black et al. 2022: 96 A100 40GB, TP 2, PP 4) stated without a
    # context-parallel width, as its paper (2022: no such thing) states it. With context
    # parallelism allowed the open layout would split its 2,048 tokens over two ranks.
    neox = {
        "id": "neox20b",
        "model": {"layers": 44, "hidden": 6144, "heads": 64, "ffn_hidden": 24576},
        "hardware": {"gpu": "a100-sxm-40gb", "gpus": 96},
        "training": {"seq_len": 2048, "global_batch": 1536, "micro_batch": 4},
        "plan": {"tp": 2, "pp": 4, "zero": 1, "stack": "gpt-neox"},
        "published": {"tflops_per_gpu": 117.0, "tflops_convention": "hardware"},
    }
    path = tmp_path / "runs.json"
    path.write_text(json.dumps({"format": "scalewall-runs/1", "cases": [neox]}))
    case = read_runs(path)[0]
    assert predict_case(case).plan.cp == 1
    able = replace(case, stack=replace(case.stack, context_parallel=True))
    assert predict_case(able).plan.cp > 1
    assert all(p.cp == 1 for p in _fsdp_top(64, 32768))


def test_a_stated_field_the_stack_cannot_run_is_kept_with_a_warning(tmp_path: Path) -> None:
    # A published run is a fact: it is predicted as stated, and the conflict with the
    # catalogued stack is one warning line.
    data = json.loads(deepspeed_pipeline_runs_path().read_text())
    case = next(c for c in data["cases"] if c["id"] == "bloom_176b_384gpu")
    case["plan"]["sequence_parallel"] = True
    path = tmp_path / "runs.json"
    path.write_text(json.dumps({"format": data["format"], "cases": [case]}))
    result = _cli("validate", "--cases", str(path), "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["errors"] == []
    assert len(doc["cases"]) == 1
    warned = [w for w in doc["warnings"] if "sequence_parallel" in w["text"]]
    assert len(warned) == 1 and "no sequence parallelism" in warned[0]["text"]


def test_an_open_schedule_is_the_stacks_usual_one() -> None:
    # torchtitan's Llama 3.1 405B run on 512 H100 with its schedule left open: torchtitan runs
    # single-stage 1F1B unless a looped schedule is named, so no interleaving is assumed;
    # a Megatron stack takes the fastest schedule.
    from scalewall.validation.runs import torchtitan_runs_path

    case = next(
        c
        for c in read_runs(torchtitan_runs_path())
        if c.id == "torchtitan_h100_llama3.1-405b_3d_1f1b_512gpu"
    )
    open_vpp = replace(case, plan={**case.plan, "vpp": None})
    assert predict_case(open_vpp).plan.vpp == 1
    megatron = replace(open_vpp, stack=replace(open_vpp.stack, usual_vpp=0))
    assert predict_case(megatron).plan.vpp > 1


def test_an_open_recompute_is_the_stacks_usual_mode_or_a_heavier_one() -> None:
    # torchtitan's activation checkpointing defaults to selective; its large configs switch to
    # full. With recompute left open, memory alone recovers the mode of every torchtitan row
    # that checkpoints: selective where it fits, full where it does not (the 70B run that ran
    # out of memory with selective included); a run stated without checkpointing is the one
    # the convention does not describe.
    from scalewall.validation.runs import torchtitan_runs_path

    chosen = {}
    for case in read_runs(torchtitan_runs_path()):
        stated = case.plan["recompute"]
        opened = predict_case(replace(case, plan={**case.plan, "recompute": None}))
        expected = "full" if case.published.get("fits") is False else stated
        chosen[case.id] = (expected, opened.plan.recompute)
    wrong = {k: v for k, v in chosen.items() if v[0] != v[1]}
    assert wrong == {"torchtitan_a100_llama2-13b_noac_64gpu": ("none", "selective")}
    assert sum(v[1] == "full" for v in chosen.values()) >= 10
    # A stack without such a convention takes the fastest mode that fits: none, as the run
    # without checkpointing shows it does.
    case = next(
        c for c in read_runs(torchtitan_runs_path()) if c.id.endswith("llama2-13b_noac_64gpu")
    )
    megatron = replace(case, plan={**case.plan, "recompute": None})
    megatron = replace(megatron, stack=replace(case.stack, usual_recompute=""))
    assert predict_case(megatron).plan.recompute == "none"


def test_a_stated_stage_split_holds_an_open_pipeline_width(tmp_path: Path) -> None:
    # BLOOM's 12-stage layout stated without pp: the layout's length is the width.
    data = json.loads(deepspeed_pipeline_runs_path().read_text())
    bloom = next(c for c in data["cases"] if c["id"] == "bloom_176b_384gpu")
    bloom["plan"] = {k: v for k, v in bloom["plan"].items() if k not in ("pp", "dp")}
    # DeepSeek-V3's first and last stages (15 and 14 of 61 layers) stated with tp, pp and dp
    # open: only widths that can hold them are searched.
    from scalewall.validation.runs import frontier_runs_path

    frontier = json.loads(frontier_runs_path().read_text())
    dsv3 = next(c for c in frontier["cases"] if c["id"] == "frontier_mb2511_dsv3_gb200_256_bf16")
    dsv3["plan"] = {k: v for k, v in dsv3["plan"].items() if k not in ("tp", "pp", "dp")}
    path = tmp_path / "runs.json"
    path.write_text(json.dumps({"format": "scalewall-runs/1", "cases": [bloom, dsv3]}))
    first, second = read_runs(path)
    assert first.plan["pp"] == 12
    assert predict_case(first).plan.pp == 12
    chosen = predict_case(second).plan
    assert chosen.pp >= 3 and chosen.first_stage_layers == 15 and chosen.last_stage_layers == 14


def test_an_moe_model_under_plain_fsdp_runs_every_expert_on_every_rank() -> None:
    """PyTorch FSDP under a data-parallel trainer has no expert parallelism: an MoE question
    that leaves ep open gets 1 (the experts sharded and gathered as any parameter), the search
    proposes no other, and an ep the question gives is refused in one line."""
    question = {"gpu": "h100-sxm-80gb", "gpus": 64}
    fsdp = estimate("mixtral-8x7b", stack="pytorch-fsdp-full-shard", **question)
    assert fsdp.plan.ep == 1 and fsdp.breakdown_s["ep_comm"] == 0.0
    assert estimate("mixtral-8x7b", stack="megatron-core", **question).plan.ep > 1
    found = search("mixtral-8x7b", stack="pytorch-fsdp-full-shard", top_k=20, **question)
    assert found.top and all(row.plan.ep == 1 for row in found.top)
    with pytest.raises(SpecError, match=r"ep=8.*no expert parallelism"):
        estimate("mixtral-8x7b", stack="pytorch-fsdp-full-shard", plan={"ep": 8}, **question)
