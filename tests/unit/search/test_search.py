"""search(): ranking, counts, objectives, results and errors."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from scalewall import catalog
from scalewall.cluster import resolve_cluster
from scalewall.errors import SpecError
from scalewall.perf.batch import PlanBatch
from scalewall.perf.step import StepArrays
from scalewall.plan.plan import recompute_module_flags, validate
from scalewall.search import (
    ObjectiveContext,
    SearchSpace,
    objective,
    objective_names,
    register_objective,
    search,
)
from scalewall.units import DAY_S

FloatArray = np.ndarray


@pytest.fixture(scope="module")
def result_8b():  # type: ignore[no-untyped-def]
    return search(
        "llama3-8b", gpu="h100-sxm-80gb", gpus=64, global_batch=256, seq_len=4096, top_k=10
    )


def test_top_plans_are_valid_fit_and_are_sorted(result_8b) -> None:  # type: ignore[no-untyped-def]
    model = catalog.model("llama3-8b")
    scores = [r.score for r in result_8b.top]
    assert scores == sorted(scores, reverse=True)
    assert len(result_8b.top) == 10
    for r in result_8b.top:
        validate(model, r.plan, 64)
        assert r.memory_total_bytes <= r.hbm_bytes
        # the parts add up to the step (the step model's own contract, kept through the search)
        assert sum(r.breakdown.values()) == pytest.approx(r.step_time_s, rel=1e-12)
        assert r.limiter in r.breakdown and r.limiter != "compute"
        assert r.limit_line


def test_counts_add_up(result_8b) -> None:  # type: ignore[no-untyped-def]
    c = result_8b.counts
    assert c.enumerated == c.pruned_memory + c.evaluated
    assert c.evaluated == len(result_8b.scores) > 0


def test_best_is_the_maximum_over_all_feasible_plans(result_8b) -> None:  # type: ignore[no-untyped-def]
    assert result_8b.best.score == result_8b.scores[0]
    assert result_8b.rank_of(result_8b.best.score) == 1
    assert result_8b.rank_of(-1.0) == len(result_8b.scores) + 1


def test_to_pandas_and_to_dict(result_8b) -> None:  # type: ignore[no-untyped-def]
    frame = result_8b.to_pandas()
    assert len(frame) == 10
    for column in ("tp", "pp", "dp", "tokens_per_s", "mfu", "pipeline_bubble_s", "limit_line"):
        assert column in frame.columns
    data = result_8b.to_dict()
    assert data["counts"]["evaluated"] == result_8b.counts.evaluated
    assert data["top"][0]["plan"]["tp"] == result_8b.best.plan.tp


def test_time_to_train_ranks_like_throughput_and_reads_in_days() -> None:
    kw = dict(gpu="h100-sxm-80gb", gpus=32, global_batch=128, seq_len=4096)
    fast = search("llama3-8b", **kw)
    ttt = search("llama3-8b", objective_name="time_to_train", token_budget=1e12, **kw)
    assert ttt.best is not None and fast.best is not None
    assert ttt.best.tokens_per_s == pytest.approx(fast.best.tokens_per_s, rel=1e-12)
    assert ttt.best.objective_value == pytest.approx(1e12 / fast.best.tokens_per_s / DAY_S)


@dataclass(frozen=True, kw_only=True)
class _LeastMemory:
    name: str = "least_memory"
    unit: str = "GiB"

    def score(self, ctx: ObjectiveContext, plans: PlanBatch, out: StepArrays) -> FloatArray:
        result: FloatArray = -out.memory_total_bytes
        return result

    def display(self, score: float) -> float:
        return -score / 2**30


def test_registered_objectives_plug_in() -> None:
    register_objective("least_memory", _LeastMemory)
    assert "least_memory" in objective_names()
    kw = dict(gpu="h100-sxm-80gb", gpus=16, global_batch=64, seq_len=4096)
    lean = search("llama3-8b", objective_name="least_memory", **kw)
    fast = search("llama3-8b", **kw)
    assert lean.best is not None and fast.best is not None
    assert lean.best.memory_total_bytes <= fast.best.memory_total_bytes
    assert lean.best.plan != fast.best.plan
    with pytest.raises(SpecError, match="objective"):
        objective("no-such-objective")


def test_nothing_fits_is_a_result_with_a_reason() -> None:
    result = search("llama3-70b", gpu="h100-sxm-80gb", gpus=8)
    assert result.top == () and "no plan fits" in result.reason
    assert result.counts.evaluated == 0


def test_user_errors() -> None:
    with pytest.raises(SpecError, match="too small"):
        search("llama3-70b", gpu="h100-sxm-80gb", gpus=32768, global_batch=2)
    with pytest.raises(SpecError, match="not both"):
        search("llama3-8b", gpu="h100-sxm-80gb", gpus=8, global_batch=8, global_batch_tokens=2**20)
    with pytest.raises(SpecError):
        search("no-such-model", gpu="h100-sxm-80gb", gpus=8)


def test_fp8_only_when_asked() -> None:
    cluster = resolve_cluster(gpu="h100-sxm-80gb", gpus=16)
    plain = search("llama3-8b", cluster, global_batch=64, seq_len=4096)
    both = search(
        "llama3-8b",
        cluster,
        global_batch=64,
        seq_len=4096,
        space=SearchSpace(precisions=("bf16", "fp8")),
    )
    assert all(r.plan.precision == "bf16" for r in plain.top)
    assert both.counts.enumerated == 2 * plain.counts.enumerated


def _qwen3_zero1(stack: str):  # type: ignore[no-untyped-def]
    """Qwen3-235B-A22B on 256 H100 at 4K tokens, ZeRO 1, under ``stack``."""
    return search(
        "qwen3-235b-a22b",
        gpu="h100-sxm-80gb",
        gpus=256,
        global_batch=2048,
        seq_len=4096,
        stack=stack,
        space=SearchSpace(zero=(1,)),
        top_k=5,
    )


@pytest.fixture(scope="module")
def qwen3_zero1():  # type: ignore[no-untyped-def]
    # The 2025 Megatron-Core stack, whose selective recompute takes recompute modules
    # (Stack.selective_modules).
    return _qwen3_zero1("megatron-core-0.13")


def test_a_plan_may_add_the_recompute_modules_it_needs_to_fit(qwen3_zero1) -> None:  # type: ignore[no-untyped-def]
    # The best plans recompute the experts' activation and the norms, as the ModelZoo's
    # H100 recipe for this model does ("norm, act"): without them they do not fit, with them
    # the estimate is the search's.
    from scalewall.api import estimate

    best = qwen3_zero1.best
    assert best.plan.recompute == "selective" and best.recompute_modules
    cluster = resolve_cluster(gpu="h100-sxm-80gb", gpus=256)
    model = catalog.model("qwen3-235b-a22b")
    own = estimate(model, cluster, best.plan, stack="megatron-core-0.13")
    assert not own.fits
    flags = recompute_module_flags(list(best.recompute_modules))
    added = estimate(model, cluster, best.plan, stack="megatron-core-0.13", stack_overrides=flags)
    assert added.fits
    assert added.tokens_per_s == pytest.approx(best.tokens_per_s, rel=1e-9)
    c = qwen3_zero1.counts
    assert c.enumerated == c.pruned_memory + c.evaluated
    assert c.evaluated == len(qwen3_zero1.scores)
    assert qwen3_zero1.to_dict()["top"][0]["recompute_modules"] == list(best.recompute_modules)


def test_a_stack_without_recompute_modules_adds_none() -> None:
    # The 2024 Megatron-Core stack has no recompute_modules option: no plan takes any.
    result = _qwen3_zero1("megatron-core")
    assert result.top and all(not r.recompute_modules for r in result.top)
