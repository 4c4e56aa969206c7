"""Every shipped run that ran is predicted to fit in memory with its stated settings.

A run ran, so the model must admit it: with recompute and other fields left open, the plan the
validator chooses (the fastest admissible candidate) is admissible, i.e. within
``Efficiency.memory.memory_fit_margin_frac`` over the accelerator's usable HBM. Cases whose source
says the configuration did not fit (``published.fits == false``) are excluded.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from scalewall.catalog import accelerator
from scalewall.perf.assumptions import Efficiency
from scalewall.units import GIB
from scalewall.validation.harness import _evaluate, predict_case
from scalewall.validation.runs import Case, read_runs

CASES = [c for c in read_runs() if c.published.get("fits") is not False]

KNOWN_MISSES: dict[str, str] = {}


def _param(case: Case) -> object:
    marks = []
    if case.id in KNOWN_MISSES:
        marks.append(pytest.mark.xfail(reason=KNOWN_MISSES[case.id], strict=True))
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_every_run_that_ran_is_predicted_to_fit(case: Case) -> None:
    pred = predict_case(case)
    total = sum(pred.memory_gib.values())
    assert pred.fits, f"{case.id}: {total:.1f} GiB predicted, chosen {pred.chosen}"


def test_deepseek_v3_published_plan_fits_strictly() -> None:
    # DeepSeek's own plan (pp 16 DualPipe, ep 64, FP8) on H800: the README example. Before the
    # driver's HBM total, the first+last DualPipe pairing, FP8-only weights and the recomputed
    # MLA up projections and SwiGLU outputs it was 137.9 GiB against 74.5.
    case = next(c for c in CASES if c.id == "frontier_deepseek_v3_h800_2048")
    pred = predict_case(case)
    total = sum(pred.memory_gib.values())
    assert pred.fits
    assert total <= accelerator("h800").hbm_capacity_bytes / GIB


def test_margin_is_the_documented_default() -> None:
    # The validator's admission band is the Efficiency field, not a number in the harness.
    assert Efficiency().memory.memory_fit_margin_frac == pytest.approx(0.05)


def test_a_case_nothing_fits_takes_a_plan_nearest_to_fitting() -> None:
    # DeepSeek-V3 on 64 H100 with the plan left open: no candidate fits. The run is then taken
    # to have used one of the plans that need least memory (within the margin of the nearest
    # to fitting), not the fastest of all, which keeps every expert on every GPU.
    base = next(c for c in CASES if c.model.id == "deepseek-v3")
    hardware = {k: v for k, v in base.hardware.items() if k not in ("pod_gpus", "fabric")}
    case = replace(
        base,
        id="deepseek_v3_h100_64_open",
        hardware={**hardware, "gpu": "h100-sxm-80gb", "gpus": 64, "gpus_per_node": 8},
        plan={k: None for k in base.plan} | {"stack": None},
        training={**base.training, "global_batch": 1024, "micro_batch": None},
    )
    ev = _evaluate(case, Efficiency(), None)
    assert not ev.admissible.any()
    pred = predict_case(case)
    headroom = ev.out.memory_headroom_frac
    chosen = ev.plans.index(pred.plan)
    margin = Efficiency().memory.memory_fit_margin_frac
    assert headroom[chosen] >= headroom.max() - margin
    assert not pred.fits
    assert headroom[int(headroom.argmin())] < headroom.max() - margin  # the band excludes some
