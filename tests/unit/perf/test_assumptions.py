"""``Efficiency``: one sub-config per perf module, addressed by flat names from files."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from scalewall import catalog
from scalewall.calibrate.parameters import PARAMETERS, is_clock
from scalewall.cluster import resolve_cluster
from scalewall.errors import SpecError
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.perf.batch import PlanBatch
from scalewall.perf.step import step_model
from scalewall.plan.plan import ParallelPlan


def test_every_group_field_has_one_flat_name() -> None:
    eff = Efficiency()
    names = [
        (group.name, f.name)
        for group in dataclasses.fields(eff)
        for f in dataclasses.fields(getattr(eff, group.name))
    ]
    assert len({name for _, name in names}) == len(names)
    assert Efficiency.field_names() == tuple(name for _, name in names)
    for group, name in names:
        assert Efficiency.field_path(name) == (group, name)
        assert eff.value(name) == getattr(getattr(eff, group), name)
    assert list(eff.flat()) == [name for _, name in names]


def test_replace_puts_flat_names_into_their_groups_only() -> None:
    eff = Efficiency()
    changed = eff.replace(gemm_sustained_ratio=0.5, collective_launch_s=1e-3, host_op_s=2e-5)
    assert changed.compute.gemm_sustained_ratio == 0.5
    assert changed.comm.collective_launch_s == 1e-3
    assert changed.host.host_op_s == 2e-5
    untouched = {"attention", "layers", "pipeline", "data_parallel", "memory", "step"}
    for group in untouched:
        assert getattr(changed, group) == getattr(eff, group)
    assert changed.compute.gemm_tile_m == eff.compute.gemm_tile_m
    assert eff.compute.gemm_sustained_ratio != 0.5  # the original is unchanged
    assert eff.replace() == eff


def test_an_unknown_flat_name_is_a_user_error_naming_it() -> None:
    with pytest.raises(SpecError, match="gemm_sustained_ration"):
        Efficiency().replace(gemm_sustained_ration=0.9)


def test_every_calibration_parameter_is_a_flat_field() -> None:
    fields = set(Efficiency.field_names())
    assert {n for n in PARAMETERS if not is_clock(n)} <= fields


def test_array_fields_pair_with_rows_like_one_scalar_each() -> None:
    """Calibration draws put one value per plan row into a field: each row must equal the same
    plan evaluated with that value as a scalar."""
    model = catalog.model("llama3-8b")
    cluster = resolve_cluster(gpu="h100-sxm-80gb", gpus=16)
    plan = ParallelPlan(tp=2, pp=2, dp=4, micro_batch=1, global_batch=64, seq_len=4096)
    draws = {"collective_launch_s": np.array([1e-5, 2e-4]), "host_op_s": np.array([3e-5, 9e-5])}
    eff = Efficiency().replace(**draws)
    assert eff.has_arrays() and not Efficiency().has_arrays()
    batch = PlanBatch.from_plans(model, [plan, plan])
    both = step_model(model, cluster, batch, eff, Stack()).step_time_s
    for row in range(2):
        one = Efficiency().replace(**{k: float(v[row]) for k, v in draws.items()})
        alone = step_model(model, cluster, PlanBatch.from_plans(model, [plan]), one, Stack())
        assert both[row] == alone.step_time_s[0]
    assert both[1] > both[0]


def _field_docstrings() -> dict[str, str]:
    import ast
    import inspect

    from scalewall.perf import assumptions

    docs: dict[str, str] = {}
    for node in ast.parse(inspect.getsource(assumptions)).body:
        if not isinstance(node, ast.ClassDef) or node.name == "Efficiency":
            continue
        body = node.body
        for stmt, after in zip(body, [*body[1:], None], strict=True):
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                doc = after.value if isinstance(after, ast.Expr) else None
                text = doc.value if isinstance(doc, ast.Constant) else ""
                docs[stmt.target.id] = " ".join(str(text).split())
    return docs


def test_every_field_says_what_data_set_it() -> None:
    """Fields ``scalewall fit`` fits over the shipped runs say so and name the profile; every
    other field names the microbenchmark, datasheet, count or assumption that sets it."""
    from scalewall.calibrate.published import FITTED

    docs = _field_docstrings()
    assert sorted(docs) == sorted(Efficiency.field_names())
    for name, doc in docs.items():
        if name in FITTED:
            assert "Fitted: ``scalewall fit``" in doc and "defaults.toml" in doc, name
        else:
            assert "Set by:" in doc and "Fitted:" not in doc, name
