"""The package-level Python API."""

from __future__ import annotations

import scalewall


def test_public_names_resolve() -> None:
    for name in scalewall.__all__:
        assert getattr(scalewall, name) is not None, name


def test_estimate_accepts_ids() -> None:
    plan = scalewall.ParallelPlan(tp=8, pp=4, dp=32, global_batch=512, seq_len=8192)
    est = scalewall.estimate("llama3-70b", "dgx-h100-superpod-1024", plan, stack="megatron-core")
    assert est.fits and 0.2 < est.mfu < 0.7
    assert abs(sum(est.breakdown.values()) - est.step_time_s) < 1e-9


def test_search_is_callable_and_still_a_package() -> None:
    result = scalewall.search("llama3-8b", gpu="h100-sxm-80gb", gpus=64)
    frame = result.to_pandas()
    assert len(frame) >= 1
    assert scalewall.search.SearchSpace is not None
