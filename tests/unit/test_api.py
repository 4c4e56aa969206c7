"""The package-level Python API: plain functions, frozen results, a pinned ``__all__``."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

import scalewall

PUBLIC = [
    "CostRun",
    "GoodputRun",
    "ParallelPlan",
    "SearchResult",
    "StepEstimate",
    "WallResult",
    "__version__",
    "cost",
    "estimate",
    "goodput",
    "report",
    "resolve_cluster",
    "search",
    "simulate",
    "validate_cases",
    "wall",
]


def test_all_is_pinned() -> None:
    assert scalewall.__all__ == PUBLIC
    for name in scalewall.__all__:
        assert getattr(scalewall, name) is not None, name


@pytest.mark.parametrize(
    "name", ["estimate", "search", "wall", "goodput", "simulate", "cost", "report"]
)
def test_entry_points_are_plain_functions(name: str) -> None:
    # Importing the subpackages of the same name must not replace the functions.
    import scalewall.cost.tco
    import scalewall.report.build
    import scalewall.search.engine

    assert inspect.isfunction(getattr(scalewall, name)), name


def test_estimate_accepts_ids_objects_and_plan_fields() -> None:
    plan = scalewall.ParallelPlan(tp=8, pp=4, dp=32, global_batch=512, seq_len=8192)
    est = scalewall.estimate("llama3-70b", "dgx-h100-superpod-1024", plan, stack="megatron-core")
    assert est.fits and 0.2 < est.mfu < 0.7
    assert abs(sum(est.breakdown_s.values()) - est.step_time_s) < 1e-9
    cluster = scalewall.resolve_cluster("dgx-h100-superpod-1024")
    by_fields = scalewall.estimate(
        "llama3-70b", cluster, {"tp": 8, "pp": 4, "global_batch": 512, "seq_len": 8192}
    )
    assert by_fields == est
    with pytest.raises(dataclasses.FrozenInstanceError):
        est.mfu = 1.0  # type: ignore[misc]


def test_results_show_themselves() -> None:
    est = scalewall.estimate(
        "llama3-8b", gpu="h100-sxm-80gb", gpus=64, plan={"tp": 2, "global_batch": 256}
    )
    text = repr(est)
    assert text.startswith("StepEstimate(model='llama3-8b'") and len(text) < 200
    assert "<table>" in est._repr_html_() and "step_time_s" in est._repr_html_()
    frame = est.to_pandas()
    assert len(frame) == 1 and frame["step_time_s"][0] == est.step_time_s
    assert frame["plan_tp"][0] == 2 and "compute_s" in frame
    assert est.to_dict()["format"] == "scalewall-estimate/1"


def test_search_returns_a_ranked_result() -> None:
    result = scalewall.search("llama3-8b", gpu="h100-sxm-80gb", gpus=64, top_k=2)
    assert len(result.to_pandas()) == 2
    assert result.to_dict()["gpus"] == 64
    assert repr(result).startswith("SearchResult(")
