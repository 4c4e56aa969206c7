"""Sanity against the published runs: for every case whose plan the search space covers, the best
plan found is predicted at least as fast as the published plan (as the harness predicts it), and
the published plan's rank among all feasible plans is reported (``pytest -s`` prints the table)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from scalewall.perf.batch import PlanBatch
from scalewall.search import SearchSpace, enumerate_plans, search
from scalewall.validation.harness import predict_case
from scalewall.validation.runs import (
    case_cluster,
    default_runs_path,
    frontier_runs_path,
    read_runs,
)

MIN_COVERED = 40
"""The space covers most published plans; fewer covered cases means the space shrank."""
SEARCH_EVERY = 3
"""Search one in this many distinct questions (in file order): the check is a property of the
search (it must find what the space holds), and a third of the 95 questions keeps every group
and file in it at a third of the time."""


def _covered(case_plan: PlanBatch, space: PlanBatch) -> bool:
    match = np.ones(len(space), dtype=bool)
    for name in PlanBatch.__dataclass_fields__:
        match &= getattr(space, name) == getattr(case_plan, name)[0]
    return bool(match.any())


def test_best_is_at_least_as_fast_as_every_published_plan() -> None:
    lines, covered = [], 0
    searched: dict[tuple[object, ...], Any] = {}
    order: dict[tuple[object, ...], int] = {}
    # The published and frontier files: the scaling and FSDP series repeat one plan shape over
    # sizes, and searching them adds minutes for no new plan shape.
    for case in read_runs(default_runs_path()) + read_runs(frontier_runs_path()):
        pred = predict_case(case)
        if not pred.fits:
            continue  # the published plan does not fit in our memory model: nothing to beat
        plan, cluster = pred.plan, case_cluster(case.hardware)
        space = SearchSpace(precisions=(plan.precision,))
        one = PlanBatch.from_plans(case.model, [plan])
        plans = enumerate_plans(
            case.model,
            cluster.num_gpus,
            cluster.system.scale_up_domain_gpus,
            plan.global_batch,
            plan.seq_len,
            space,
        )
        if not _covered(one, plans):
            lines.append(f"{case.id}: not covered (tp={plan.tp}, mb={plan.micro_batch})")
            continue
        covered += 1
        # Cases that ask the same question (shape, cluster, batch, precision, stack) share one
        # search; each case's own plan is still checked against its best.
        shape = dataclasses.replace(case.model, id="", name="")
        key = (repr(shape), repr(sorted(case.hardware.items())), plan.global_batch, plan.seq_len)
        key += (plan.precision, repr(case.stack))
        if key not in order:
            order[key] = len(order)
        if order[key] % SEARCH_EVERY:
            continue
        if key not in searched:
            searched[key] = search(
                case.model,
                cluster,
                global_batch=plan.global_batch,
                seq_len=plan.seq_len,
                space=space,
                stack=case.stack,
                top_k=1,
            )
        result = searched[key]
        published = pred.row["tokens_per_s"]
        assert result.best is not None
        # Same step model on both sides: only float rounding separates equal plans.
        assert result.best.tokens_per_s >= published * (1 - 1e-9), case.id
        rank = result.rank_of(published * (1 + 1e-12))
        lines.append(
            f"{case.id}: published plan rank {rank} of {result.counts.evaluated}; best "
            f"{result.best.tokens_per_s / published:.3f}x the published plan's throughput"
        )
    print("\n".join(lines))
    assert covered >= MIN_COVERED, f"only {covered} cases covered"


@pytest.mark.parametrize("case_id", ["llama3_405B_16384gpu_seq8192"])
def test_llama3_published_plan_is_near_the_top(case_id: str) -> None:
    case = next(c for c in read_runs() if c.id == case_id)
    pred = predict_case(case)
    result = search(
        case.model,
        case_cluster(case.hardware),
        global_batch=2048,
        seq_len=8192,
        stack=case.stack,
        top_k=1,
    )
    rank = result.rank_of(pred.row["tokens_per_s"] * (1 + 1e-12))
    # Reported figure, not a tolerance on the model: the published plan is in the top 10%.
    assert rank <= max(1, result.counts.evaluated // 10)
