"""The step model's shortcuts give exactly what the general path gives: layer times shared by
distinct configuration (sort-free factorisation), parts skipped when no row of the batch uses
them (CP exchange, pipeline p2p), the per-step synchronisation once per job size."""

from __future__ import annotations

import numpy as np
import pytest

from scalewall import catalog
from scalewall.catalog.schema import ModelSpec
from scalewall.perf import collectives as coll
from scalewall.perf import data_parallel, layers
from scalewall.perf.assumptions import Efficiency
from scalewall.perf.batch import PlanBatch
from scalewall.perf.layers import LAYER_FIELDS, distinct_rows
from scalewall.perf.step import StepArrays, step_model
from scalewall.plan.topology import Cluster, make_cluster
from scalewall.search.space import SearchSpace, enumerate_plans
from scalewall.stack import resolve_stack


@pytest.mark.parametrize("span", [1, 7, 1000])
def test_table_factorisation_equals_unique(span: int) -> None:
    key = np.random.default_rng(span).integers(0, span, 5000).astype(np.int64)
    first, inverse = layers._table_factorize(key, span)
    _, want_first, want_inverse = np.unique(key, return_index=True, return_inverse=True)
    np.testing.assert_array_equal(first, want_first)
    np.testing.assert_array_equal(inverse, want_inverse.ravel())


def _batch(model: ModelSpec, cluster: Cluster, rows: int) -> PlanBatch:
    space = SearchSpace(precisions=("bf16", "fp8"), max_micro_batch=2, max_vpp=2)
    plans = enumerate_plans(model, cluster.num_gpus, 8, 512, 4096, space)
    pick = np.random.default_rng(0).choice(len(plans), size=rows, replace=False)
    return plans.take(np.sort(pick))


def test_distinct_rows_table_and_sort_agree(
    llama70b: ModelSpec, h100_1024: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    batch = _batch(llama70b, h100_1024, 3000)
    fast = distinct_rows(batch, LAYER_FIELDS)
    monkeypatch.setattr(layers, "_TABLE_SPAN_PER_ROW", 0)  # force the sort
    slow = distinct_rows(batch, LAYER_FIELDS)
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(a, b)


def _assert_rows_equal(out: StepArrays, rows: list[StepArrays]) -> None:
    for name in ("step_time_s", "memory_total_bytes", "mfu", "hfu"):
        np.testing.assert_array_equal(getattr(out, name), [getattr(r, name)[0] for r in rows])
    for part, values in out.breakdown_s.items():
        np.testing.assert_array_equal(values, [r.breakdown_s[part][0] for r in rows], part)


@pytest.mark.parametrize(
    ("model_id", "stack_id"),
    [("llama3-70b", "megatron-core"), ("mixtral-8x7b", "megatron-core-moe")],
)
def test_batch_equals_plan_by_plan(model_id: str, stack_id: str) -> None:
    # Exact equality: every quantity of a row depends on that row alone, so sharing, skipping
    # and per-size shortcuts must not move a single bit.
    model = catalog.model(model_id)
    cluster = make_cluster(
        system=catalog.system("dgx-h100"), fabric=catalog.fabric("ndr-rail-3tier"), num_gpus=256
    )
    batch = _batch(model, cluster, 40)
    assert len(np.unique(batch.cp)) > 1 and len(np.unique(batch.pp)) > 1  # both paths taken
    eff, stack = Efficiency(), resolve_stack(stack_id)
    out = step_model(model, cluster, batch, eff, stack)
    rows = [
        step_model(model, cluster, batch.take(np.array([i])), eff, stack) for i in range(len(batch))
    ]
    _assert_rows_equal(out, rows)


def _batch_of(model: ModelSpec, cluster: Cluster, rows: int) -> PlanBatch:
    space = SearchSpace(precisions=("bf16",), max_micro_batch=2, max_vpp=2)
    plans = enumerate_plans(model, cluster.num_gpus, 8, 512, 4096, space)
    return plans.take(np.arange(min(rows, len(plans))))


def test_shared_data_parallel_collectives_equal_every_row(
    llama70b: ModelSpec, h100_1024: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    batch = _batch_of(llama70b, h100_1024, 4000)
    shared = data_parallel.SharedRows.of(batch, Efficiency(), h100_1024)
    assert shared.first is not None  # the batch is large and shares its structures
    eff, stack = Efficiency(), resolve_stack("pytorch-fsdp-hybrid-shard")
    out = step_model(llama70b, h100_1024, batch, eff, stack)
    monkeypatch.setattr(data_parallel, "_SHARE_MIN_ROWS", 10**9)  # every row on its own
    plain = step_model(llama70b, h100_1024, batch, eff, stack)
    for part, values in out.breakdown_s.items():
        np.testing.assert_array_equal(values, plain.breakdown_s[part], part)


def test_shared_rows_evaluate_an_input_that_varies_within_a_group_row_by_row(
    llama70b: ModelSpec, h100_1024: Cluster
) -> None:
    batch = _batch_of(llama70b, h100_1024, 4000)
    shared = data_parallel.SharedRows.of(batch, Efficiency(), h100_1024)
    eff = Efficiency()
    n, stride = batch.dp * batch.cp, batch.tp
    varying = 1e6 * batch.micro_batch * (1.0 + batch.recompute)  # not a structure field
    got = shared(coll.allreduce_time_s, h100_1024, eff, n, stride, varying)
    np.testing.assert_array_equal(got, coll.allreduce_time_s(h100_1024, eff, n, stride, varying))
    assert shared.checked[id(varying)][1] is None  # found to differ within a group


def test_per_row_constants_share_nothing(llama70b: ModelSpec, h100_1024: Cluster) -> None:
    # Calibration's draws evaluate copies of one plan with one constant per row: rows that agree
    # on every plan field still differ.
    batch = _batch_of(llama70b, h100_1024, 4000)
    draws = Efficiency().replace(collective_launch_s=np.linspace(1e-5, 2e-4, len(batch)))
    assert data_parallel.SharedRows.of(batch, draws, h100_1024).first is None


def test_data_parallel_collectives_run_once_per_structure(
    llama70b: ModelSpec, h100_1024: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search batch's gradient, gather and per-layer ZeRO-3 collectives are evaluated on its
    distinct structures, not on every row: the bucket count follows the virtual stages, so
    ``vpp`` is a structure field, and FSDP's per-layer collectives share the rows too."""
    batch = _batch_of(llama70b, h100_1024, 4000)
    sizes: list[int] = []
    for name in ("allreduce_time_s", "reduce_scatter_time_s", "allgather_time_s"):
        original = getattr(coll, name)

        def counted(*args: object, _f: object = original) -> object:
            sizes.append(int(np.size(args[2])))
            return _f(*args)  # type: ignore[operator]

        monkeypatch.setattr(coll, name, counted)
    for stack_id in ("megatron-core", "pytorch-fsdp-full-shard"):
        sizes.clear()
        step_model(llama70b, h100_1024, batch, Efficiency(), resolve_stack(stack_id))
        shared = data_parallel.SharedRows.of(batch, Efficiency(), h100_1024)
        assert shared.first is not None
        assert sizes and max(sizes) <= shared.first.size < len(batch) // 4, (stack_id, sizes)
