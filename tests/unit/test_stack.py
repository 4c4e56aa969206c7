"""Software stacks as catalog data: ids, aliases, overrides, one default."""

from __future__ import annotations

import dataclasses

import pytest

from scalewall import catalog
from scalewall.api import estimate
from scalewall.catalog.schema import STACK_METADATA, Stack
from scalewall.cluster import resolve_cluster
from scalewall.errors import SpecError
from scalewall.plan.plan import ParallelPlan
from scalewall.stack import (
    DEFAULT_STACK,
    behaviour_fields,
    parse_assignments,
    preset,
    resolve_stack,
    stack_ids,
)
from scalewall.validation.runs import case_stack


def _behaviour(stack: Stack) -> dict[str, object]:
    return {k: getattr(stack, k) for k in behaviour_fields()}


def test_the_dataclass_defaults_are_the_default_stack() -> None:
    # One default: a bare Stack(), the API's None and the CLI's default id agree.
    assert _behaviour(Stack()) == _behaviour(resolve_stack(None))
    assert resolve_stack(None).id == DEFAULT_STACK


def test_no_two_catalog_stacks_behave_the_same() -> None:
    # Releases that change nothing are aliases of one entry, not copies.
    seen: dict[tuple[object, ...], str] = {}
    for stack_id, stack in catalog.stacks().items():
        key = tuple(_behaviour(stack).values())
        assert key not in seen, f"{stack_id} behaves exactly like {seen.get(key)}"
        seen[key] = stack_id


def test_every_stack_names_its_source_and_its_framework_families_exist() -> None:
    ids = stack_ids()
    for family in ("megatron-lm", "megatron-core", "nemo", "megatron-bridge", "deepspeed"):
        assert any(i.startswith(family) for i in ids), family
    assert {"pytorch-fsdp-full-shard", "pytorch-fsdp-shard-grad-op", "torchtitan-fsdp2"} <= set(ids)
    for stack in catalog.stacks().values():
        assert stack.source and stack.name


def test_aliases_and_spelling() -> None:
    assert preset("Megatron-LM 2022").id == "megatron-lm-2022"
    assert preset("Megatron-LM").id == "megatron-lm-2021"
    assert preset("megatron_bridge_26.02").id == "megatron-bridge"
    assert preset("FSDP").id == "pytorch-fsdp-full-shard"
    assert preset("Megatron-LM (2023)").id == "megatron-lm-2022"
    assert preset("NeMo Framework 25.09").id == "megatron-bridge"
    assert preset("NeMo-Megatron").id == "nemo-24.07"
    assert preset("MosaicML Composer").id == "llm-foundry"
    with pytest.raises(SpecError, match="megatron-core"):
        preset("megatron-core 2024: --overlap-grad-reduce")  # free text is not an id


def test_fsdp_stacks_imply_their_sharding() -> None:
    assert preset("pytorch-fsdp-full-shard").zero_stage == 3
    assert preset("pytorch-fsdp-shard-grad-op").zero_stage == 2
    assert preset("megatron-lm-2021").zero_stage == 0
    assert preset("megatron-core").zero_stage == 1


def test_overrides_are_typed_and_checked() -> None:
    stack = resolve_stack("megatron-core", ["tp_comm_overlap_frac=0", "overlap_p2p=false"])
    assert stack.tp_comm_overlap_frac == 0.0 and stack.overlap_p2p is False
    assert stack.id == "megatron-core+overrides"
    assert parse_assignments(["grad_buckets=4"]) == {"grad_buckets": 4}
    for bad, field in (
        ("tp_comm_overlap_frac=1.5", "tp_comm_overlap_frac"),
        ("overlap_p2p=maybe", "overlap_p2p"),
        ("no_such_field=1", "stack-set"),
        ("grad_buckets", "stack-set"),
        ("id=other", "stack-set"),
    ):
        with pytest.raises(SpecError, match=field):
            resolve_stack("megatron-core", [bad])


def test_a_case_stack_is_an_id_or_a_preset_with_overrides() -> None:
    assert case_stack("deepseek-v3").dualpipe
    stated = case_stack({"preset": "megatron-core", "overrides": {"grad_reduce_bytes": 2.0}})
    assert stated.grad_reduce_bytes == 2.0
    assert case_stack(None).id == DEFAULT_STACK
    with pytest.raises(SpecError, match="one of"):
        case_stack("Megatron-Core, BF16 gradient reduction")
    with pytest.raises(SpecError, match="preset"):
        case_stack({"stack": "megatron-core"})


def test_the_api_takes_ids_and_overrides_and_names_the_stack() -> None:
    cluster = resolve_cluster(gpu="h100-sxm-80gb", gpus=64)
    plan = ParallelPlan(tp=8, pp=4, dp=2, micro_batch=2, global_batch=64, seq_len=8192)
    default = estimate("llama3-70b", cluster, plan)
    named = estimate("llama3-70b", cluster, plan, stack=DEFAULT_STACK)
    assert default.step_time_s == named.step_time_s and default.stack == DEFAULT_STACK
    no_tp_overlap = estimate(
        "llama3-70b", cluster, plan, stack_overrides={"tp_comm_overlap_frac": 0.0}
    )
    assert no_tp_overlap.step_time_s > default.step_time_s
    assert no_tp_overlap.stack == "megatron-core+overrides"


def test_metadata_fields_are_not_behaviour() -> None:
    names = {f.name for f in dataclasses.fields(Stack)}
    assert set(STACK_METADATA) <= names
    assert not set(STACK_METADATA) & set(behaviour_fields())


def test_eager_pytorch_kernels_cost_what_torch_compile_saves() -> None:
    """torchtitan docs/performance.md (2024), Table 1: Llama 3.1 8B on 8 H100 with FSDP, local
    batch 2 at 8,192 tokens, selective checkpointing: 5,762 tokens/s per GPU eager, 6,667 with
    torch.compile (1.157x). The GEMMs and attention are the same in both, so the ratio is the
    element-wise traffic fusion removes, forward, backward and the forward again that op-level
    selective checkpointing runs (``selective_recompute``). The eager stack's kernel-by-kernel
    byte count is an estimate good to about 10% (about 100 bytes per hidden element forward; a
    recount of the RMSNorm's upcast, square, mean, scale and downcast passes gives 109), which
    moves the ratio by 4%; it must give the ratio within 5% (1.196 today)."""
    cluster = resolve_cluster(gpu="h100-sxm-80gb", gpus=8)
    plan = ParallelPlan(
        tp=1,
        pp=1,
        dp=8,
        micro_batch=2,
        global_batch=16,
        seq_len=8192,
        zero=3,
        recompute="selective",
        sequence_parallel=False,
    )
    eager = estimate("llama3.1-8b", cluster, plan, stack="torchtitan-fsdp2")
    compiled = estimate("llama3.1-8b", cluster, plan, stack="torchtitan-fsdp2-compile")
    assert compiled.tokens_per_s / eager.tokens_per_s == pytest.approx(6667 / 5762, rel=0.05)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("nemo-24.11", "nemo-24.09"),
        ("NeMo 24.09", "nemo-24.09"),
        ("nemo-24.08", "nemo-24.07"),
        ("nemo-25.05", "nemo-25.04"),
        ("nemo-26.06", "megatron-bridge"),
        ("megatron-core-0.12.1", "megatron-core"),
        ("megatron-core-0.17", "megatron-core-0.13"),
        ("megatron-lm-2026", "megatron-core-0.13"),
        ("nemo-2.1", "megatron-bridge"),
        ("megatron-core-r0.8.0", "megatron-core"),
        ("mcore-0.9", "megatron-core"),
        ("torchtitan-v0.2", "torchtitan-fsdp2"),
        ("deepspeed-0.14", "deepspeed-zero3"),
        ("llm-foundry-0.10", "llm-foundry"),
        ("megatron-lm-v2.5", "megatron-lm-2021"),
        ("megatron-lm-v3.0", "megatron-lm-2022"),
        ("megatron-lm-23.08", "megatron-lm-2022"),
        # Numbered another way than every catalogued release of a one-entry family.
        ("Megatron-Bridge 0.2", "megatron-bridge"),
        ("nemo-automodel-0.4", "nemo-automodel"),
    ],
)
def test_an_uncatalogued_release_runs_as_the_last_one_before_it(name: str, expected: str) -> None:
    assert preset(name).id == expected


@pytest.mark.parametrize(
    "name",
    [
        "nemo-24.01",
        "megatron-core-0.5",
        "megatron-lm-2020",
        "megatron-lm-v1.1",
        "zero4",
        "megatron-bridge-24.01",
    ],
)
def test_a_release_before_every_catalogued_one_is_an_error(name: str) -> None:
    with pytest.raises(SpecError, match="later release"):
        preset(name)


def test_gradient_accumulation_by_framework() -> None:
    # Fused into the weight-gradient GEMM where the framework does it; a pass of its own where
    # a hook, autograd or DeepSpeed's BF16 optimizer adds each micro-batch's gradients.
    assert preset("megatron-core").grad_accumulation == "fused"
    assert preset("megatron-lm-2022").grad_accumulation == "fused"
    assert preset("megatron-lm-2021").grad_accumulation == "hook"
    assert preset("nanotron").grad_accumulation == "hook"
    assert preset("gpt-neox").id == "megatron-deepspeed"
    assert preset("megatron-deepspeed").grad_accumulation == "deepspeed"
